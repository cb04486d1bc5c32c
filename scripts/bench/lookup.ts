// Throughput of ISBN lookups through the whole middleware chain, against a bare Koa route that
// answers the same bytes, on this machine in one run. The kinds alternate in short rounds, so a
// change in the machine's load during the run weighs on all of them alike.
// A fourth server runs only the middlewares a cached lookup passes through, composed alone
// (scripts/bench/partsOnly.ts): what is left without the router, error rendering and path guard.
// Metering's cost, and that of serving metrics (METRICS_PORT), are measured on fresh pairs of servers,
// with and without: two processes of the same build differ from one start to the next by more than
// the cost itself.
// Run: node --import tsx scripts/bench/lookup.ts [--seconds 24] [--rounds 6] [--connections 16] [--pairs 5]
import { parseArgs } from 'node:util';
import {
  benchDatabase,
  benchKey,
  benchRedisPrefix,
  cpuSeconds,
  importSampleBooks,
  startApi,
  startBareKoa,
  startPartsOnly,
} from '../lib/bench.js';
import { alternate, formatLoad, load, type LoadResult } from './lib/load.js';
import { percentile } from '../lib/percentile.js';

const { values } = parseArgs({
  options: {
    seconds: { type: 'string', default: '24' },
    rounds: { type: 'string', default: '6' },
    connections: { type: 'string', default: '16' },
    pairs: { type: 'string', default: '5' },
  },
});
const rounds = Number(values.rounds);
const roundS = Number(values.seconds) / rounds;
const connections = Number(values.connections);
const pairs = Number(values.pairs);

const database = await benchDatabase('bookmeta_bench_lookup');
await importSampleBooks(database.db);
const headers = await benchKey(database.db);
const { rows } = await database.db.query<{ isbn_13: string }>(
  'select isbn_13 from books where isbn_13 is not null order by popularity desc',
);
const isbns = rows.map((row) => row.isbn_13);
const hot = `/v1/isbn/${isbns[0]}`;

const redis = benchRedisPrefix('bench-lookup');
const env = { DATABASE_URL: database.url, RATE_LIMIT_MAX: '1000000000', REDIS_PREFIX: redis.prefix };
const metered = await startApi(env);
const bare = await startBareKoa(await (await fetch(`${metered.url}${hot}`, { headers })).text());
const partsOnly = await startPartsOnly(env);

/**
 * The cost of a setting on cached lookups: fresh pairs of servers, one with `on`'s settings and one
 * with `off`'s, loaded in alternating rounds. Each pair gives two ratios on/off: of throughput, and
 * of requests per CPU second of the server (from its CPU time during its rounds), which a loaded
 * machine's scheduling sways far less than throughput.
 */
async function costOnCached(
  name: string,
  on: NodeJS.ProcessEnv,
  off: NodeJS.ProcessEnv,
): Promise<{ throughput: number[]; perCpu: number[]; results: LoadResult[] }> {
  const throughput: number[] = [];
  const perCpu: number[] = [];
  const results: LoadResult[] = [];
  for (let pair = 1; pair <= pairs; pair++) {
    const servers = await Promise.all([startApi({ ...env, ...on }), startApi({ ...env, ...off })]);
    const cpu = [0, 0];
    const served = [0, 0];
    try {
      const [onResult, offResult] = (await alternate(
        servers.map((server, index) => ({
          label: `pair ${pair}: cached, ${name} ${index === 0 ? 'on' : 'off'}`,
          url: `${server.url}${hot}`,
          headers,
        })),
        {
          rounds,
          roundS,
          connections,
          measure: async (index, round) => {
            const before = await cpuSeconds(servers[index]!.pid);
            const result = await round();
            cpu[index]! += (await cpuSeconds(servers[index]!.pid)) - before;
            served[index]! += result.rps * roundS;
            return result;
          },
        },
      )) as [LoadResult, LoadResult];
      throughput.push(onResult.rps / offResult.rps);
      perCpu.push(served[0]! / cpu[0]! / (served[1]! / cpu[1]!));
      results.push(onResult, offResult);
    } finally {
      await Promise.all(servers.map((server) => server.stop()));
    }
  }
  return { throughput, perCpu, results };
}

try {
  let n = 0;
  const [baseline, cached, middlewaresAlone, uncached] = (await alternate(
    [
      { label: 'bare Koa route (baseline)', url: `${bare.url}${hot}` },
      { label: 'cached lookup (HIT)', url: `${metered.url}${hot}`, headers },
      { label: 'cached, its middlewares alone', url: `${partsOnly.url}${hot}`, headers },
      // A new URL per request (the cache key is the URL): every request misses and reads PostgreSQL.
      {
        label: 'uncached lookup (MISS)',
        url: `${metered.url}${hot}`,
        headers,
        nextPath: () => `/v1/isbn/${isbns[n++ % isbns.length]}?miss=${n}`,
      },
    ],
    { rounds, roundS, connections },
  )) as [LoadResult, LoadResult, LoadResult, LoadResult];
  const paced = await load({
    label: 'cached at half the baseline rate',
    url: `${metered.url}${hot}`,
    headers,
    connections,
    durationS: roundS * 2,
    rate: Math.round(baseline.rps / 2),
  });
  // Idle servers still cost the machine a little (their timers): only the pair runs during the pairs.
  await Promise.all([metered.stop(), bare.stop(), partsOnly.stop()]);

  const metering = await costOnCached('metering', { METERING: 'on' }, { METERING: 'off' });
  const metrics = await costOnCached('metrics', { METRICS_PORT: '0' }, { METRICS_PORT: '' });
  const percent = (cost: number) => `${(cost * 100).toFixed(1)} %`;

  console.log(`${rounds} alternating rounds of ${roundS} s each, ${connections} connections`);
  for (const result of [baseline, cached, middlewaresAlone, uncached, paced, ...metering.results, ...metrics.results])
    console.log(formatLoad(result));
  console.log('');
  console.log(`cached / baseline:            ${(cached.rps / baseline.rps).toFixed(2)}  (target >= 0.30)`);
  console.log(
    `middlewares alone / baseline: ${(middlewaresAlone.rps / baseline.rps).toFixed(2)}  (without router, error rendering, guard)`,
  );
  console.log(`cached p99 at half baseline:  ${paced.p99.toFixed(1)} ms  (target < 10 ms)`);
  console.log(`uncached / baseline:          ${(uncached.rps / baseline.rps).toFixed(2)}  (target >= 0.25)`);
  if (pairs > 0) {
    const ratios = (values: number[]) =>
      `${percentile(values, 50).toFixed(3)}  (median of ${pairs} pairs: ${values.map((value) => value.toFixed(3)).join(', ')})`;
    const costs = metering.throughput.map((ratio) => 1 - ratio);
    console.log(
      `metering cost on cached:      ${percent(percentile(costs, 50))}  (target <= 5 %; median of ${pairs} pairs: ${costs.map(percent).join(', ')})`,
    );
    console.log(`metering on / off, cached, requests per CPU s: ${ratios(metering.perCpu)}`);
    console.log(`metrics on / off, cached, throughput:          ${ratios(metrics.throughput)}  (target >= 0.95)`);
    console.log(`metrics on / off, cached, requests per CPU s:  ${ratios(metrics.perCpu)}`);
  }
} finally {
  await Promise.all([metered.stop(), bare.stop(), partsOnly.stop()]);
  await database.drop();
  await redis.drop();
}

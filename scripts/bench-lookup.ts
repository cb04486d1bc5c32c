// Throughput of ISBN lookups through the whole middleware chain, against a bare Koa route that
// answers the same bytes, on this machine in one run. The kinds alternate in short rounds, so a
// change in the machine's load during the run weighs on all of them alike.
// Run: node --import tsx scripts/bench-lookup.ts [--seconds 20] [--rounds 5] [--connections 16]
import { parseArgs } from 'node:util';
import { benchDatabase, benchKey, benchRedisPrefix, importSampleBooks, startApi, startBareKoa } from './lib/bench.js';
import { alternate, formatLoad, load, type LoadResult } from './lib/load.js';

const { values } = parseArgs({
  options: { seconds: { type: 'string', default: '20' }, rounds: { type: 'string', default: '5' }, connections: { type: 'string', default: '16' } },
});
const rounds = Number(values.rounds);
const roundS = Number(values.seconds) / rounds;
const connections = Number(values.connections);

const database = await benchDatabase('bookmeta_bench_lookup');
await importSampleBooks(database.db);
const headers = await benchKey(database.db);
const { rows } = await database.db.query<{ isbn_13: string }>('select isbn_13 from books where isbn_13 is not null order by popularity desc');
const isbns = rows.map((row) => row.isbn_13);
const hot = `/v1/isbn/${isbns[0]}`;

const redis = benchRedisPrefix('bench-lookup');
const env = { DATABASE_URL: database.url, RATE_LIMIT_MAX: '1000000000', REDIS_PREFIX: redis.prefix };
const metered = await startApi(env);
const unmetered = await startApi({ ...env, METERING: 'off' });
const bare = await startBareKoa(await (await fetch(`${metered.url}${hot}`, { headers })).text());

try {
  let n = 0;
  const [baseline, cached, uncached, cachedUnmetered] = (await alternate(
    [
      { label: 'bare Koa route (baseline)', url: `${bare.url}${hot}` },
      { label: 'cached lookup (HIT)', url: `${metered.url}${hot}`, headers },
      // A new URL per request (the cache key is the URL): every request misses and reads PostgreSQL.
      { label: 'uncached lookup (MISS)', url: `${metered.url}${hot}`, headers, nextPath: () => `/v1/isbn/${isbns[n++ % isbns.length]}?miss=${n}` },
      { label: 'cached lookup, metering off', url: `${unmetered.url}${hot}`, headers },
    ],
    { rounds, roundS, connections },
  )) as [LoadResult, LoadResult, LoadResult, LoadResult];
  const paced = await load({ label: 'cached at half the baseline rate', url: `${metered.url}${hot}`, headers, connections, durationS: roundS * 2, rate: Math.round(baseline.rps / 2) });

  console.log(`${rounds} alternating rounds of ${roundS} s each, ${connections} connections`);
  for (const result of [baseline, cached, uncached, cachedUnmetered, paced]) console.log(formatLoad(result));
  console.log('');
  console.log(`cached / baseline:            ${(cached.rps / baseline.rps).toFixed(2)}  (target >= 0.50)`);
  console.log(`cached p99 at half baseline:  ${paced.p99.toFixed(1)} ms  (target < 10 ms)`);
  console.log(`uncached / baseline:          ${(uncached.rps / baseline.rps).toFixed(2)}  (target >= 0.25)`);
  console.log(`metering cost on cached:      ${((1 - cached.rps / cachedUnmetered.rps) * 100).toFixed(1)} %  (target <= 5 %)`);
} finally {
  await Promise.all([metered.stop(), unmetered.stop(), bare.stop()]);
  await database.drop();
  await redis.drop();
}

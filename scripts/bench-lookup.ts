// Throughput of ISBN lookups through the whole middleware chain, against a bare Koa route that
// answers the same bytes, in one run on this machine. Run: node --import tsx scripts/bench-lookup.ts [--seconds 10]
import { parseArgs } from 'node:util';
import { benchDatabase, benchKey, importSampleBooks, startApi, startBareKoa, type BenchServer } from './lib/bench.js';
import { formatLoad, load, type LoadResult } from './lib/load.js';

const { values } = parseArgs({ options: { seconds: { type: 'string', default: '10' } } });
const durationS = Number(values.seconds);

const database = await benchDatabase('bookmeta_bench_lookup');
await importSampleBooks(database.db);
const headers = await benchKey(database.db);
const { rows } = await database.db.query<{ isbn_13: string }>('select isbn_13 from books where isbn_13 is not null order by popularity desc');
const isbns = rows.map((row) => row.isbn_13);
const hot = `/v1/isbn/${isbns[0]}`;

const env = { DATABASE_URL: database.url, RATE_LIMIT_MAX: '1000000000', REDIS_PREFIX: 'bench-lookup:' };
const results: LoadResult[] = [];
const withServer = async <T>(start: () => Promise<BenchServer>, run: (server: BenchServer) => Promise<T>): Promise<T> => {
  const server = await start();
  try {
    return await run(server);
  } finally {
    await server.stop();
  }
};

try {
  const api = await startApi(env);
  const body = await (await fetch(`${api.url}${hot}`, { headers })).text();
  await api.stop();

  const baseline = await withServer(() => startBareKoa(body), (bare) => load({ label: 'bare Koa route (baseline)', url: `${bare.url}${hot}`, durationS }));
  results.push(baseline);

  await withServer(() => startApi(env), async (server) => {
    await load({ label: 'warm-up', url: `${server.url}${hot}`, headers, durationS: 2 });
    results.push(await load({ label: 'cached lookup (HIT)', url: `${server.url}${hot}`, headers, durationS }));
    let n = 0;
    // A new URL per request (the cache key is the URL), so every request misses and reads PostgreSQL.
    results.push(await load({ label: 'uncached lookup (MISS)', url: `${server.url}${hot}`, headers, durationS, nextPath: () => `/v1/isbn/${isbns[n++ % isbns.length]}?miss=${n}` }));
    results.push(await load({ label: 'cached at half the baseline rate', url: `${server.url}${hot}`, headers, durationS, rate: Math.round(baseline.rps / 2) }));
  });
  await withServer(() => startApi({ ...env, METERING: 'off' }), async (server) => {
    await load({ label: 'warm-up', url: `${server.url}${hot}`, headers, durationS: 2 });
    results.push(await load({ label: 'cached lookup, metering off', url: `${server.url}${hot}`, headers, durationS }));
  });
} finally {
  await database.drop();
}

const [base, cached, uncached, paced, unmetered] = results as [LoadResult, LoadResult, LoadResult, LoadResult, LoadResult];
for (const result of results) console.log(formatLoad(result));
console.log('');
console.log(`cached / baseline:            ${(cached.rps / base.rps).toFixed(2)}  (target >= 0.50)`);
console.log(`cached p99 at half baseline:  ${paced.p99.toFixed(1)} ms  (target < 10 ms)`);
console.log(`uncached / baseline:          ${(uncached.rps / base.rps).toFixed(2)}  (target >= 0.25)`);
console.log(`metering cost on cached:      ${((1 - cached.rps / unmetered.rps) * 100).toFixed(1)} %  (target <= 5 %)`);

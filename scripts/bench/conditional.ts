// Throughput of revalidated point lookups (If-None-Match with the current ETag: 304, no body)
// against the same lookups answered 200 with their body, both from the point cache, on one server
// in one run. The kinds alternate in short rounds, so a change in the machine's load weighs on
// all of them alike. A book's record is small; a work's (its editions) is several kilobytes.
// Run: node --import tsx scripts/bench/conditional.ts [--seconds 24] [--rounds 6] [--connections 16]
import { parseArgs } from 'node:util';
import { benchDatabase, benchKey, benchRedisPrefix, importSampleBooks, startApi } from '../lib/bench.js';
import { alternate, formatLoad } from './lib/load.js';

const { values } = parseArgs({
  options: {
    seconds: { type: 'string', default: '24' },
    rounds: { type: 'string', default: '6' },
    connections: { type: 'string', default: '16' },
  },
});
const rounds = Number(values.rounds);
const roundS = Number(values.seconds) / rounds;
const connections = Number(values.connections);

const database = await benchDatabase('bookmeta_bench_conditional');
await importSampleBooks(database.db);
const headers = await benchKey(database.db);
const { rows } = await database.db.query<{ isbn_13: string; work_id: string }>(
  // The work with the most editions: the largest record a lookup answers.
  `select (select isbn_13 from books where isbn_13 is not null order by popularity desc limit 1),
          (select public_id(work_id) from books group by work_id order by count(*) desc limit 1) as work_id`,
);
const paths = { book: `/v1/isbn/${rows[0]!.isbn_13}`, work: `/v1/works/${rows[0]!.work_id}` };

const redis = benchRedisPrefix('bench-conditional');
const api = await startApi({ DATABASE_URL: database.url, RATE_LIMIT_MAX: '1000000000', REDIS_PREFIX: redis.prefix });

try {
  const requests = [];
  for (const [kind, path] of Object.entries(paths)) {
    const first = await fetch(`${api.url}${path}`, { headers });
    const body = await first.text();
    const etag = first.headers.get('etag')!;
    // Filled: every measured request is a cache HIT.
    await fetch(`${api.url}${path}`, { headers });
    requests.push(
      { label: `${kind} 200 with its body (${body.length} bytes)`, url: `${api.url}${path}`, headers },
      { label: `${kind} 304 (If-None-Match)`, url: `${api.url}${path}`, headers: { ...headers, 'If-None-Match': etag }, expectStatus: 304 },
    );
  }
  const [book200, book304, work200, work304] = await alternate(requests, { rounds, roundS, connections });
  console.log(`${rounds} alternating rounds of ${roundS} s each, ${connections} connections`);
  for (const result of [book200, book304, work200, work304]) console.log(formatLoad(result!));
  console.log('');
  console.log(`book: 304 / 200 throughput: ${(book304!.rps / book200!.rps).toFixed(2)}`);
  console.log(`work: 304 / 200 throughput: ${(work304!.rps / work200!.rps).toFixed(2)}`);
} finally {
  await api.stop();
  await database.drop();
  await redis.drop();
}

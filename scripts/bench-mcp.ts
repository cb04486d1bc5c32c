// Throughput of a hot ISBN lookup as an MCP tool call (POST /mcp, tools/call lookup_isbn) against the
// same lookup over GET /v1/isbn, on one API process in one run on this machine. The two alternate in
// short rounds, so a change in the machine's load during the run weighs on both alike.
// Run: node --import tsx scripts/bench-mcp.ts [--seconds 10] [--rounds 5] [--connections 16]
import { parseArgs } from 'node:util';
import { loadConfig } from '../src/config.js';
import { connectRedis } from '../src/stores/redis/client.js';
import { benchDatabase, benchKey, importSampleBooks, startApi } from './lib/bench.js';
import { formatLoad, load, type LoadOptions, type LoadResult } from './lib/load.js';

const { values } = parseArgs({
  options: { seconds: { type: 'string', default: '10' }, rounds: { type: 'string', default: '5' }, connections: { type: 'string', default: '16' } },
});
const rounds = Number(values.rounds);
const roundS = Number(values.seconds) / rounds;
const connections = Number(values.connections);

const database = await benchDatabase('bookmeta_bench_mcp');
await importSampleBooks(database.db);
const auth = await benchKey(database.db);
const { rows } = await database.db.query<{ isbn_13: string }>('select isbn_13 from books where isbn_13 is not null order by popularity desc limit 1');
const isbn = rows[0]!.isbn_13;

// A prefix of its own: cached answers of an earlier run would show that run's (dropped) catalogue.
const redisPrefix = `bench-mcp:${process.pid}:`;
const api = await startApi({ DATABASE_URL: database.url, RATE_LIMIT_MAX: '1000000000', REDIS_PREFIX: redisPrefix });

type Request = Omit<LoadOptions, 'durationS' | 'connections'>;
const direct: Request = { label: 'GET /v1/isbn (cached)', url: `${api.url}/v1/isbn/${isbn}`, headers: auth };
// Stateless: a tools/call needs no initialize first, so every request stands alone, as behind a load balancer.
const viaMcp: Request = {
  label: 'POST /mcp tools/call lookup_isbn',
  url: `${api.url}/mcp`,
  method: 'POST',
  headers: { ...auth, 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream' },
  body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'lookup_isbn', arguments: { isbn } } }),
};

/** Rounds of one request kind, summed: requests over time, latencies averaged over the rounds. */
function combined(label: string, results: LoadResult[]): LoadResult {
  const mean = (pick: (result: LoadResult) => number) => results.reduce((sum, result) => sum + pick(result), 0) / results.length;
  return { label, rps: mean((result) => result.rps), p50: mean((result) => result.p50), p99: mean((result) => result.p99), failures: results.reduce((sum, result) => sum + result.failures, 0) };
}

try {
  // Both answers must be the same record before their speed means anything.
  const expected = await (await fetch(direct.url, { headers: auth })).text();
  const answer = (await (await fetch(viaMcp.url, { method: 'POST', headers: viaMcp.headers, body: viaMcp.body })).json()) as { result?: { content: { text: string }[] } };
  if (answer.result?.content[0]?.text !== expected) throw new Error(`the MCP answer differs from GET /v1/isbn/${isbn}: ${JSON.stringify(answer)}`);

  for (const request of [direct, viaMcp]) await load({ ...request, label: 'warm-up', connections, durationS: 2 });
  const httpRounds: LoadResult[] = [];
  const mcpRounds: LoadResult[] = [];
  for (let round = 0; round < rounds; round++) {
    httpRounds.push(await load({ ...direct, connections, durationS: roundS }));
    mcpRounds.push(await load({ ...viaMcp, connections, durationS: roundS }));
  }
  const http = combined(direct.label, httpRounds);
  const mcp = combined(viaMcp.label, mcpRounds);

  console.log(`${rounds} alternating rounds of ${roundS} s each, ${connections} connections`);
  console.log(formatLoad(http));
  console.log(formatLoad(mcp));
  console.log('');
  console.log(`MCP / HTTP throughput: ${(mcp.rps / http.rps).toFixed(2)}  (target >= 0.50)`);
  if (http.failures + mcp.failures > 0) process.exitCode = 1;
} finally {
  await api.stop();
  await database.drop();
  const redis = await connectRedis(loadConfig().redisUrl);
  for await (const keys of redis.scanIterator({ MATCH: `${redisPrefix}*`, COUNT: 1000 })) if (keys.length > 0) await redis.del(keys);
  await redis.quit();
}

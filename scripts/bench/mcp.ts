// Throughput of a hot ISBN lookup as an MCP tool call (POST /mcp, tools/call lookup_isbn) against the
// same lookup over GET /v1/isbn, on one API process in one run on this machine. The two alternate in
// short rounds, so a change in the machine's load during the run weighs on both alike.
// Run: node --import tsx scripts/bench/mcp.ts [--seconds 10] [--rounds 5] [--connections 16]
import { parseArgs } from 'node:util';
import { benchDatabase, benchKey, benchRedisPrefix, importSampleBooks, startApi } from '../lib/bench.js';
import { alternate, formatLoad, type LoadRequest, type LoadResult } from './lib/load.js';

const { values } = parseArgs({
  options: {
    seconds: { type: 'string', default: '10' },
    rounds: { type: 'string', default: '5' },
    connections: { type: 'string', default: '16' },
  },
});
const rounds = Number(values.rounds);
const roundS = Number(values.seconds) / rounds;
const connections = Number(values.connections);

const database = await benchDatabase('bookmeta_bench_mcp');
await importSampleBooks(database.db);
const auth = await benchKey(database.db);
const { rows } = await database.db.query<{ isbn_13: string }>(
  'select isbn_13 from books where isbn_13 is not null order by popularity desc limit 1',
);
const isbn = rows[0]!.isbn_13;

const redis = benchRedisPrefix('bench-mcp');
const api = await startApi({ DATABASE_URL: database.url, RATE_LIMIT_MAX: '1000000000', REDIS_PREFIX: redis.prefix });

const direct: LoadRequest = { label: 'GET /v1/isbn (cached)', url: `${api.url}/v1/isbn/${isbn}`, headers: auth };
// Stateless: a tools/call needs no initialize first, so every request stands alone, as behind a load balancer.
const viaMcp: LoadRequest = {
  label: 'POST /mcp tools/call lookup_isbn',
  url: `${api.url}/mcp`,
  method: 'POST',
  headers: { ...auth, 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream' },
  body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'lookup_isbn', arguments: { isbn } } }),
};

try {
  // Both answers must be the same record before their speed means anything.
  const expected = await (await fetch(direct.url, { headers: auth })).text();
  const answer = (await (await fetch(viaMcp.url, { method: 'POST', headers: viaMcp.headers, body: viaMcp.body })).json()) as {
    result?: { content: { text: string }[] };
  };
  if (answer.result?.content[0]?.text !== expected)
    throw new Error(`the MCP answer differs from GET /v1/isbn/${isbn}: ${JSON.stringify(answer)}`);

  const [http, mcp] = (await alternate([direct, viaMcp], { rounds, roundS, connections })) as [LoadResult, LoadResult];

  console.log(`${rounds} alternating rounds of ${roundS} s each, ${connections} connections`);
  console.log(formatLoad(http));
  console.log(formatLoad(mcp));
  console.log('');
  console.log(`MCP / HTTP throughput: ${(mcp.rps / http.rps).toFixed(2)}  (target >= 0.50)`);
  if (http.failures + mcp.failures > 0) process.exitCode = 1;
} finally {
  await api.stop();
  await database.drop();
  await redis.drop();
}

// Throughput of a hot ISBN lookup as an MCP tool call (POST /mcp, tools/call lookup_isbn) against the
// same lookup over GET /v1/isbn, on one API process in one run on this machine.
// Run: node --import tsx scripts/bench-mcp.ts [--seconds 10] [--connections 16]
import { parseArgs } from 'node:util';
import { benchDatabase, benchKey, importSampleBooks, startApi } from './lib/bench.js';
import { formatLoad, load } from './lib/load.js';

const { values } = parseArgs({ options: { seconds: { type: 'string', default: '10' }, connections: { type: 'string', default: '16' } } });
const durationS = Number(values.seconds);
const connections = Number(values.connections);

const database = await benchDatabase('bookmeta_bench_mcp');
await importSampleBooks(database.db);
const auth = await benchKey(database.db);
const { rows } = await database.db.query<{ isbn_13: string }>('select isbn_13 from books where isbn_13 is not null order by popularity desc limit 1');
const isbn = rows[0]!.isbn_13;

const direct = { label: 'GET /v1/isbn (cached)', headers: auth, path: `/v1/isbn/${isbn}` };
// Stateless: a tools/call needs no initialize first, so every request stands alone, as behind a load balancer.
const viaMcp = {
  label: 'POST /mcp tools/call lookup_isbn',
  headers: { ...auth, 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream' },
  method: 'POST',
  body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'lookup_isbn', arguments: { isbn } } }),
  path: '/mcp',
};

const api = await startApi({ DATABASE_URL: database.url, RATE_LIMIT_MAX: '1000000000', REDIS_PREFIX: 'bench-mcp:', LOG_LEVEL: 'warn' });
try {
  // Both answers must be the same record before their speed means anything.
  const expected = await (await fetch(`${api.url}${direct.path}`, { headers: auth })).text();
  const answer = (await (await fetch(`${api.url}/mcp`, { method: 'POST', headers: viaMcp.headers, body: viaMcp.body })).json()) as { result?: { content: { text: string }[] } };
  if (answer.result?.content[0]?.text !== expected) throw new Error(`the MCP answer differs from GET ${direct.path}: ${JSON.stringify(answer)}`);

  for (const { path, ...request } of [direct, viaMcp]) await load({ ...request, label: 'warm-up', url: `${api.url}${path}`, connections, durationS: 2 });
  const results = [];
  for (const { path, ...request } of [direct, viaMcp]) results.push(await load({ ...request, url: `${api.url}${path}`, connections, durationS }));
  const [http, mcp] = results as [Awaited<ReturnType<typeof load>>, Awaited<ReturnType<typeof load>>];

  for (const result of results) console.log(formatLoad(result));
  console.log('');
  console.log(`MCP / HTTP throughput: ${(mcp.rps / http.rps).toFixed(2)}  (target >= 0.50)`);
  if (http.failures + mcp.failures > 0) process.exitCode = 1;
} finally {
  await api.stop();
  await database.drop();
}

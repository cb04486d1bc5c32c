import { createConnection } from 'node:net';
import test from 'ava';
import { loadConfig } from '../src/config.js';
import { csvFile, GOODBOOKS_HEADER, importFile } from './helpers/catalogue.js';
import { useApi } from './helpers/env.js';

/**
 * What a key holder, or anyone, can get out of the service beyond what the contract allows (issue
 * 34), each finding closed and held closed by a test.
 */

const PUBLIC_URL = 'https://books.example.org/catalogue';
const ISBN = '9780439554930';
const api = useApi(test, {
  server: { publicUrl: PUBLIC_URL },
  prepare: async (world) => {
    const row =
      "2,3,3,4640799,491,439554934,9.78043955493e+12,J.K. Rowling,1997.0,Harry Potter and the Philosopher's Stone,Harry Potter and the Sorcerer's Stone,eng,4.47,4602479,4800065,75867,75504,101676,455024,1156318,3011543,,";
    await importFile(world, 'goodbooks', await csvFile([GOODBOOKS_HEADER, row]));
  },
});

/** A JSON-RPC message to /mcp with the fixture's key, and its JSON answer. */
async function mcp(message: object): Promise<{ status: number; body: string }> {
  const response = await api.get('/mcp', {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream' },
    body: JSON.stringify(message),
  });
  return { status: response.status, body: await response.text() };
}

/** Every key this world's server wrote to Redis, and every member of its `shows:` sets. */
async function redisContents(): Promise<string[]> {
  const { redis, config } = api.world;
  const keys = await redis.keys(`${config.redisPrefix}*`);
  const members = await Promise.all(keys.filter((key) => key.includes(':shows:')).map((key) => redis.sMembers(key)));
  return [...keys, ...members.flat()];
}

/** The raw answer to raw bytes, as Node's parser refuses them before the app sees them. */
function rawAnswer(url: string, request: string): Promise<string> {
  const { port } = new URL(url);
  return new Promise((resolve, reject) => {
    let answer = '';
    const socket = createConnection({ host: '127.0.0.1', port: Number(port) }, () => socket.write(request));
    socket.on('data', (chunk) => (answer += chunk.toString()));
    socket.on('end', () => resolve(answer));
    socket.on('error', reject);
  });
}

test('every answer says X-Content-Type-Options: nosniff, from the app, the docs page and the HTTP parser alike', async (t) => {
  const answers = [
    await fetch(`${api.server.url}/health`),
    await fetch(`${api.server.url}/openapi.json`),
    await fetch(`${api.server.url}/docs`),
    await fetch(`${api.server.url}/v1/isbn/9780439023481`),
    await api.get('/v1/isbn/9780439023481'),
    await api.get('/v1/isbn/123'),
    await api.get('/no/such/route'),
  ];
  for (const answer of answers) {
    await answer.arrayBuffer();
    t.is(answer.headers.get('x-content-type-options'), 'nosniff', `${answer.url}: ${answer.status}`);
  }
  t.deepEqual(
    answers.map((answer) => answer.status),
    [200, 200, 200, 401, 404, 400, 404],
  );
  const malformed = await rawAnswer(api.server.url, 'BREW / HTCPCP/1.0\r\n\r\n');
  t.regex(malformed, /^HTTP\/1\.1 400 /);
  t.regex(malformed, /\r\nX-Content-Type-Options: nosniff\r\n/i);
});

test('the reconciliation manifest builds its URLs from PUBLIC_URL, whatever Host the request names', async (t) => {
  const manifest = (await (await fetch(`${api.server.url}/reconcile`, { headers: { Host: 'attacker.example' } })).json()) as {
    identifierSpace: string;
    view: { url: string };
    documentation: string;
    suggest: { property: { service_url: string } };
  };
  t.is(manifest.identifierSpace, `${PUBLIC_URL}/v1/`);
  t.is(manifest.view.url, `${PUBLIC_URL}/v1/books/{{id}}`);
  t.is(manifest.documentation, `${PUBLIC_URL}/docs`);
  t.is(manifest.suggest.property.service_url, PUBLIC_URL);
  t.notRegex(JSON.stringify(manifest), /attacker/);
});

test('PUBLIC_URL is an http(s) base URL, taken without its trailing slash; anything else stops the start', (t) => {
  t.is(loadConfig({ PUBLIC_URL: 'https://books.example.org/catalogue/' }).publicUrl, PUBLIC_URL);
  t.is(loadConfig({}).publicUrl, null);
  for (const wrong of ['books.example.org', 'ftp://books.example.org', 'https://books.example.org/?a=1'])
    t.throws(() => loadConfig({ PUBLIC_URL: wrong }), { message: /PUBLIC_URL must be an http\(s\) URL/ });
});

test.serial(
  'an ISBN padded past 64 characters is a 400 on every route and tool, and Redis holds each answer once, under its ISBN-13',
  async (t) => {
    const padded = `${ISBN}${' '.repeat(500_000)}`;
    const refusal = {
      code: 'bad_request',
      message: `invalid ISBN: ${JSON.stringify(`${ISBN}${' '.repeat(51)}…`)} is longer than 64 characters`,
    };
    const viaGet = await api.get(`/v1/isbn/${ISBN}${'%20'.repeat(5_000)}`);
    t.is(viaGet.status, 400);
    t.deepEqual(await viaGet.json(), { error: refusal });
    const viaBatch = await api.get('/v1/isbn/batch', {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ isbns: [padded] }),
    });
    t.like(await viaBatch.json(), { results: [{ status: 400, error: refusal }] });
    const viaTool = await mcp({
      jsonrpc: '2.0',
      id: 1,
      method: 'tools/call',
      params: { name: 'lookup_isbn', arguments: { isbn: padded } },
    });
    t.is(viaTool.status, 200);
    t.regex(viaTool.body, /"isError":true/);
    t.regex(viaTool.body, /is longer than 64 characters/);
    const viaMatch = await api.get('/v1/match', {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ isbn: `${ISBN}${' '.repeat(100)}` }),
    });
    t.is(viaMatch.status, 400);

    // Spellings within the cap are answered, from one entry: the cache and the `shows:` sets hold the ISBN-13 only.
    for (const spelling of [ISBN, `978-0-439-55493-0`, `  ${ISBN}  `, '0439554934'])
      t.is((await api.get(`/v1/isbn/${encodeURIComponent(spelling)}`)).status, 200, spelling);
    t.is((await api.get(`/v1/isbn/0-439-55493-4`)).headers.get('x-cache'), 'HIT');
    const contents = await redisContents();
    t.true(contents.some((text) => text.endsWith(`cache:/v1/isbn/${ISBN}`)));
    t.deepEqual(
      contents.filter((text) => text.includes('/v1/isbn/') && !text.endsWith(`/v1/isbn/${ISBN}`)),
      [],
    );
    t.true(
      contents.every((text) => text.length < 100),
      'no key or member grows with what a client sends',
    );
  },
);

import { randomBytes, scryptSync } from 'node:crypto';
import { createConnection, type Socket } from 'node:net';
import { Writable } from 'node:stream';
import { pino } from 'pino';
import test from 'ava';
import { loadConfig } from '../src/config.js';
import { clientAddress, trustedSet } from '../src/http/clientAddress.js';
import { loggerOptions } from '../src/log.js';
import { startServer } from '../src/server.js';
import { Authenticator } from '../src/services/authenticator.js';
import type { Queryable } from '../src/stores/postgres/pool.js';
import { csvFile, GOODBOOKS_HEADER, importFile } from './helpers/catalogue.js';
import { newKey, useApi } from './helpers/env.js';
import { eventually } from './helpers/eventually.js';
import { pointCached } from './helpers/cache.js';

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
    t.true(await pointCached(api.world, `/v1/isbn/${ISBN}`));
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

/** The stored form keys had before SHA-256: scrypt, N 16384, r 8, p 1. */
function scryptHash(secret: string): string {
  const salt = randomBytes(16);
  return ['scrypt', 16_384, 8, 1, salt.toString('base64'), scryptSync(secret, salt, 32, { N: 16_384, r: 8, p: 1 }).toString('base64')].join(
    '$',
  );
}

const storedHash = async (kid: string): Promise<string> =>
  (await api.world.db.query<{ secret_hash: string }>('select secret_hash from api_keys where kid = $1', [kid])).rows[0]!.secret_hash;

test.serial(
  'a key is stored as SHA-256; an old scrypt hash keeps working, at most one scrypt a second per kid, and becomes SHA-256 on its first success',
  async (t) => {
    const fresh = await newKey(api.world, 'fresh');
    t.regex(await storedHash(fresh.kid), /^sha256\$[A-Za-z0-9+/]{43}=$/);

    const old = await newKey(api.world, 'old');
    const secret = old.key.split('_')[3]!;
    await api.world.db.query('update api_keys set secret_hash = $2 where kid = $1', [old.kid, scryptHash(secret)]);
    const call = async (key: string) => {
      const response = await fetch(`${api.server.url}/v1/changes?since=0`, { headers: { Authorization: `Bearer ${key}` } });
      return { status: response.status, body: await response.text() };
    };
    const wrong = `svc_live_${old.kid}_${'x'.repeat(52)}`;
    t.is((await call(wrong)).status, 401);
    // Within a second of that check, no other secret is hashed with scrypt: even the right one waits.
    t.is((await call(old.key)).status, 401);
    await new Promise((resolve) => setTimeout(resolve, 1_100));
    const right = await Promise.all([call(old.key), call(old.key), call(old.key)]);
    t.deepEqual(
      right.map((answer) => answer.status),
      [200, 200, 200],
      'calls at once share the one check',
    );
    t.true(await eventually(async () => (await storedHash(old.kid)).startsWith('sha256$'), 5_000));
    t.is((await call(wrong)).status, 401);
    t.is((await call(old.key)).status, 200, 'checked by SHA-256 now, with no wait');
  },
);

test('an unknown kid and a wrong secret for a known one get the same 401, after the same work: one read of the key, then remembered', async (t) => {
  const unknownKey = `svc_live_${'z'.repeat(12)}_${'a'.repeat(52)}`;
  const wrongSecret = `svc_live_${api.kid}_${'b'.repeat(52)}`;
  const bodies = await Promise.all(
    [unknownKey, wrongSecret].map(async (key) =>
      (await fetch(`${api.server.url}/v1/changes?since=0`, { headers: { Authorization: `Bearer ${key}` } })).text(),
    ),
  );
  t.is(bodies[0], bodies[1]);
  t.deepEqual(JSON.parse(bodies[0]!), { error: { code: 'unauthorized', message: 'API key is not valid' } });

  const reads: string[] = [];
  const db: Queryable = {
    query: (text, values) => {
      reads.push(String(values?.[0]));
      return api.world.db.query(text, values);
    },
  };
  const authenticator = new Authenticator(db, 60_000);
  for (let i = 0; i < 3; i++) {
    t.deepEqual(await authenticator.verify(unknownKey), { ok: false, reason: 'invalid' });
    t.deepEqual(await authenticator.verify(wrongSecret), { ok: false, reason: 'invalid' });
  }
  t.deepEqual(reads.sort(), [api.kid, 'zzzzzzzzzzzz']);
});

/** Open connections that send nothing yet. */
async function idleConnections(url: string, count: number): Promise<Socket[]> {
  const { port } = new URL(url);
  return Promise.all(
    Array.from(
      { length: count },
      () =>
        new Promise<Socket>((resolve, reject) => {
          const socket = createConnection({ host: '127.0.0.1', port: Number(port) }, () => resolve(socket));
          socket.on('error', reject);
        }),
    ),
  );
}

test.serial('past MAX_CONNECTIONS in all a connection is answered 503 too_many_connections, whatever its address', async (t) => {
  const server = await startServer(
    { ...api.world.config, connectionLimits: { ...api.world.config.connectionLimits, maxConnections: 3 } },
    pino({ level: 'silent' }),
  );
  const held = await idleConnections(server.url, 3);
  try {
    const answer = await rawAnswer(server.url, 'GET /health HTTP/1.1\r\nHost: test\r\n\r\n');
    t.regex(answer, /^HTTP\/1\.1 503 /);
    t.regex(answer, /"code":"too_many_connections"/);
    held.pop()!.destroy();
    t.true(await eventually(async () => (await fetch(`${server.url}/health`)).status === 200, 3_000));
  } finally {
    for (const socket of held) socket.destroy();
    await server.stop();
  }
});

test.serial('X-Forwarded-For names the client only from TRUSTED_PROXIES, whose connections have no per-address cap', async (t) => {
  const lines: { msg: string; client?: string; path?: string }[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _encoding, done) {
      for (const line of chunk.toString().split('\n')) if (line) lines.push(JSON.parse(line) as { msg: string });
      done();
    },
  });
  const behindProxy = await startServer(
    {
      ...api.world.config,
      trustedProxies: ['127.0.0.1'],
      connectionLimits: { ...api.world.config.connectionLimits, maxConnectionsPerClient: 2 },
    },
    pino(loggerOptions('info'), sink),
  );
  const held = await idleConnections(behindProxy.url, 4);
  try {
    const forwarded = await fetch(`${behindProxy.url}/health?from=proxy`, { headers: { 'X-Forwarded-For': '198.51.100.7, 203.0.113.9' } });
    t.is(forwarded.status, 200, 'a trusted proxy may hold more connections than one client');
    t.true(await eventually(() => Promise.resolve(lines.some((line) => line.msg === 'request' && line.client === '203.0.113.9')), 2_000));
  } finally {
    for (const socket of held) socket.destroy();
    await behindProxy.stop();
  }
  // Anyone else's X-Forwarded-For is never read.
  t.is(clientAddress('::ffff:192.0.2.1', '203.0.113.9', trustedSet(['127.0.0.1'])), '192.0.2.1');
  t.is(clientAddress('127.0.0.1', '203.0.113.9, 10.0.0.2', trustedSet(['127.0.0.1', '10.0.0.2'])), '203.0.113.9');
  t.is(clientAddress('127.0.0.1', 'not-an-address', trustedSet(['127.0.0.1'])), '127.0.0.1');
});

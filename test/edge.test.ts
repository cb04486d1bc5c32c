import test from 'ava';
import { connect } from 'node:net';
import { requestAccess, routes } from '../src/http/routeTable.js';
import { loadSampleCatalogue } from './helpers/catalogue.js';
import { newKey, useApi } from './helpers/env.js';
import { pointCached } from './helpers/cache.js';

// What a client can do to the HTTP edge without a key or with bad input: no data without a key,
// whatever the path's spelling; bad bytes refused before any store; every error in the contract's JSON.

// A wide budget: the concurrency test sends more than the default 120 a minute.
const api = useApi(test, { prepare: loadSampleCatalogue, server: { rateLimitMax: 100_000 } });
const HUNGER_GAMES = '9780439023481';

/** A raw HTTP/1.1 exchange, for requests fetch refuses to send; resolves with the status and body. */
function rawRequest(
  request: string | Buffer,
  { halfClose = true } = {},
): Promise<{ status: number; contentType: string | undefined; allow: string | undefined; body: string }> {
  const { port } = new URL(api.server.url);
  return new Promise((resolve, reject) => {
    // Half-closing right after the request suits refusals; a request that waits for a store must
    // keep its side open (the server closes a connection whose client went away).
    const socket = connect(Number(port), '127.0.0.1', () => (halfClose ? socket.end(request) : socket.write(request)));
    const chunks: Buffer[] = [];
    socket.on('data', (chunk: Buffer) => chunks.push(chunk));
    socket.on('error', reject);
    socket.on('close', () => {
      const text = Buffer.concat(chunks).toString('utf8');
      const [head = '', body = ''] = text.split('\r\n\r\n');
      const status = Number(/^HTTP\/1\.1 (\d{3})/.exec(head)?.[1]);
      const contentType = /\r\ncontent-type: ([^\r]+)/i.exec(head)?.[1];
      const allow = /\r\nallow: ([^\r]+)/i.exec(head)?.[1];
      resolve({ status, contentType, allow, body });
    });
  });
}

const errorShape = (t: import('ava').ExecutionContext, body: unknown, note: string) => {
  const error = (body as { error?: { code?: unknown; message?: unknown } }).error;
  t.is(typeof error?.code, 'string', note);
  t.is(typeof error?.message, 'string', note);
};

/** Every spelling of a path that is not the path: case, trailing or doubled slashes, percent-encoded letters, dot segments. */
function misspellings(pathname: string): string[] {
  const [, first = '', rest = ''] = /^\/([^/]*)(.*)$/.exec(pathname)!;
  return [
    pathname.toUpperCase(),
    `/${first[0]!.toUpperCase()}${first.slice(1)}${rest}`,
    `${pathname}/`,
    `/${first}/${rest}`,
    `/${pathname}`,
    `/%${first.charCodeAt(0).toString(16)}${first.slice(1)}${rest}`,
    `/%2e/${first}${rest}`,
    `/./${first}${rest}`,
    `/x/../${first}${rest}`,
  ];
}

test('no spelling of any data route answers without a key: case, trailing or doubled slashes, percent-encoded letters, dot segments', async (t) => {
  const {
    id: bookId,
    work_id: workId,
    authors,
  } = (await (await api.get(`/v1/isbn/${HUNGER_GAMES}`)).json()) as { id: string; work_id: string; authors: { id: string }[] };
  const values: Record<string, string> = { isbn: HUNGER_GAMES, books: bookId, works: workId, authors: authors[0]!.id };
  const queries: Record<string, string> = {
    '/v1/books/search': '?q=hunger',
    '/v1/authors/search': '?q=collins',
    '/v1/changes': '?since=0',
  };
  const bodies: Record<string, string> = { '/v1/match': '{"title": "The Hunger Games"}', '/mcp': callBody };
  const keyed = routes.filter((route) => requestAccess({ method: route.method, path: route.path, query: {} }) === 'key');
  t.true(keyed.length >= 10, 'every data route of the table is walked');
  for (const { path: template, method } of keyed) {
    const pathname = template.replace(/^\/v1\/(\w+)\/:\w+/, (_, family: string) => `/v1/${family}/${values[family]!}`);
    const body = bodies[template] ?? '';
    for (const path of [pathname, ...misspellings(pathname)]) {
      // A raw request line: fetch would normalise dot segments away.
      const answer = await rawRequest(
        `${method} ${path}${queries[template] ?? ''} HTTP/1.1\r\nHost: test\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\n` +
          `Connection: close\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
      );
      const note = `${method} ${path} (${template})`;
      // Any path but the public ones needs the key first, in whatever spelling.
      t.is(answer.status, 401, note);
      t.false(/Hunger|Collins/.test(answer.body), note);
      errorShape(t, JSON.parse(answer.body), note);
    }
  }
});

test('a method no route serves is a 405 with Allow in the error shape, whatever the method: TRACE, QUERY, CONNECT, made-up ones; never a 5xx or a silent close', async (t) => {
  const auth = `Authorization: Bearer ${api.key}\r\n`;
  const cases: [request: string, allow: string][] = [
    [`TRACE /v1/isbn/${HUNGER_GAMES} HTTP/1.1\r\nHost: test\r\n${auth}Connection: close\r\n\r\n`, 'HEAD, GET'],
    [
      `QUERY /v1/books/search HTTP/1.1\r\nHost: test\r\n${auth}Content-Type: application/json\r\nContent-Length: 2\r\nConnection: close\r\n\r\n{}`,
      'HEAD, GET',
    ],
    [`PATCH /mcp HTTP/1.1\r\nHost: test\r\n${auth}Connection: close\r\n\r\n`, 'POST'],
    [`PURGE /health HTTP/1.1\r\nHost: test\r\nConnection: close\r\n\r\n`, 'HEAD, GET'],
    [`CONNECT 127.0.0.1:443 HTTP/1.1\r\nHost: 127.0.0.1:443\r\n${auth}\r\n`, 'HEAD, GET, POST'],
    // CONNECT asks for a tunnel, which this service never opens: the methods it serves at all.
    [`CONNECT /v1/isbn/${HUNGER_GAMES} HTTP/1.1\r\nHost: test\r\n${auth}\r\n`, 'HEAD, GET, POST'],
  ];
  for (const [request, allow] of cases) {
    const note = request.slice(0, request.indexOf('\r\n'));
    const answer = await rawRequest(request, { halfClose: false });
    t.is(answer.status, 405, note);
    t.is(answer.allow, allow, note);
    t.regex(answer.contentType ?? '', /^application\/json/, note);
    t.is((JSON.parse(answer.body) as { error: { code: string } }).error.code, 'method_not_allowed', note);
  }
  // A made-up method Node's parser does not know is a 400 in the same shape.
  const unknown = await rawRequest(`FROB /v1/changes HTTP/1.1\r\nHost: test\r\n${auth}Connection: close\r\n\r\n`, { halfClose: false });
  t.true(unknown.status === 400 || unknown.status === 405, String(unknown.status));
  errorShape(t, JSON.parse(unknown.body), 'FROB');
});

test('a request with more than one Authorization header is a 401 whatever their order', async (t) => {
  const good = `Authorization: Bearer ${api.key}`;
  const bad = 'Authorization: Bearer svc_live_nobody_nothing';
  for (const headers of [
    [good, bad],
    [bad, good],
    [good, good],
  ]) {
    const answer = await rawRequest(
      `GET /v1/isbn/${HUNGER_GAMES} HTTP/1.1\r\nHost: test\r\n${headers.join('\r\n')}\r\nConnection: close\r\n\r\n`,
      { halfClose: false },
    );
    t.is(answer.status, 401, headers.join(' / '));
    t.false(answer.body.includes('Hunger'));
    t.regex((JSON.parse(answer.body) as { error: { message: string } }).error.message, /more than once/);
  }
  const once = await rawRequest(`GET /v1/isbn/${HUNGER_GAMES} HTTP/1.1\r\nHost: test\r\n${good}\r\nConnection: close\r\n\r\n`, {
    halfClose: false,
  });
  t.is(once.status, 200);
});

const callBody = JSON.stringify({
  jsonrpc: '2.0',
  id: 1,
  method: 'tools/call',
  params: { name: 'lookup_isbn', arguments: { isbn: HUNGER_GAMES } },
});

test('with a key, a misspelt path is a 404, never the route it resembles', async (t) => {
  for (const path of [`/V1/isbn/${HUNGER_GAMES}`, `/v1/isbn/${HUNGER_GAMES}/`, `/v1//isbn/${HUNGER_GAMES}`, '/MCP']) {
    const response = await api.get(path);
    t.is(response.status, 404, path);
    errorShape(t, await response.json(), path);
  }
});

test('an id with a NUL or control character, or of the wrong shape, is a 400 before any store sees it', async (t) => {
  const cases = [
    '/v1/books/bk_%00abc',
    '/v1/books/bk_%00bcdefghjkmn',
    '/v1/works/wk_%01',
    '/v1/authors/au_%0a',
    '/v1/books/bk_%00abc/recommendations',
    '/v1/books/au_0000000000zz',
    '/v1/works/x',
  ];
  for (const path of cases) {
    const response = await api.get(path);
    t.is(response.status, 400, path);
    const { error } = (await response.json()) as { error: { code: string; message: string } };
    t.is(error.code, 'bad_request', path);
    t.regex(error.message, /^invalid (book|work|author) id: /, path);
  }
});

test('bad requests mixed into concurrent valid lookups never fail one of them', async (t) => {
  const { id } = (await (await api.get(`/v1/isbn/${HUNGER_GAMES}`)).json()) as { id: string };
  const valid = Array.from({ length: 190 }, (_, index) =>
    index % 2 === 0 ? `/v1/books/${id}` : `/v1/books/bk_${String(index).padStart(12, '0')}`,
  );
  const bad = Array.from({ length: 20 }, (_, index) => `/v1/books/bk_%00${String(index).padStart(9, '0')}`);
  const paths = [...valid, ...bad].sort(() => Math.random() - 0.5);
  const answers = await Promise.all(paths.map(async (path) => ({ path, status: (await api.get(path)).status })));
  for (const { path, status } of answers) {
    if (path.includes('%00')) t.is(status, 400, path);
    else t.is(status, path === `/v1/books/${id}` ? 200 : 404, path);
  }
  t.is(answers.filter((answer) => answer.status === 200).length, 95);
});

test('a point lookup ignores query parameters it does not define: junk adds no cache entry', async (t) => {
  const first = await api.get(`/v1/isbn/${HUNGER_GAMES}?junk=1`);
  t.is(first.status, 200);
  t.true(await pointCached(api.world, `/v1/isbn/${HUNGER_GAMES}`));
  for (let index = 0; index < 5; index++) {
    const response = await api.get(`/v1/isbn/${HUNGER_GAMES}?junk=${Math.random()}`);
    t.is(response.headers.get('x-cache'), 'HIT');
  }
  const keys = await api.world.redis.keys(`${api.world.config.redisPrefix}*`);
  t.true(keys.some((key) => key.endsWith(`/v1/isbn/${HUNGER_GAMES}`)));
  t.deepEqual(
    keys.filter((key) => key.includes('junk')),
    [],
  );
});

test('usage records the route template; paths no route matches are one bucket', async (t) => {
  const key = await newKey(api.world, 'buckets');
  const junk = `/v1/${'x'.repeat(2000)}`;
  for (const path of [junk, '/v1/anything/else', '/nothing', `/v1/isbn/${HUNGER_GAMES}`])
    await fetch(`${api.server.url}${path}`, { headers: key.auth });
  await api.server.services.meter!.flush();
  const { rows } = await api.world.db.query<{ route: string; calls: number }>(
    'select route, count(*)::int as calls from usage where kid = $1 group by route order by route',
    [key.kid],
  );
  t.deepEqual(rows, [
    { route: '(unmatched)', calls: 3 },
    { route: '/v1/isbn/:isbn', calls: 1 },
  ]);
});

test('the Bearer scheme is case-insensitive; the key itself is not', async (t) => {
  for (const scheme of ['bearer', 'BEARER', 'bEaReR']) {
    const response = await fetch(`${api.server.url}/v1/isbn/${HUNGER_GAMES}`, { headers: { Authorization: `${scheme} ${api.key}` } });
    t.is(response.status, 200, scheme);
  }
  const upper = await fetch(`${api.server.url}/v1/isbn/${HUNGER_GAMES}`, { headers: { Authorization: `Bearer ${api.key.toUpperCase()}` } });
  t.is(upper.status, 401);
});

test('a POST body that is not declared JSON, or is encoded, is a 415; malformed JSON is a 400', async (t) => {
  const post = (headers: Record<string, string>, body: string) => api.get('/v1/match', { method: 'POST', headers, body });
  const body = '{"title": "The Hunger Games"}';
  const cases: [headers: Record<string, string>, body: string, status: number, code: string][] = [
    [{ 'Content-Type': 'text/plain' }, body, 415, 'unsupported_media_type'],
    [{ 'Content-Type': 'application/x-www-form-urlencoded' }, body, 415, 'unsupported_media_type'],
    [{ 'Content-Type': 'application/json', 'Content-Encoding': 'gzip' }, body, 415, 'unsupported_media_type'],
    [{ 'Content-Type': 'application/json', 'Content-Encoding': 'br' }, body, 415, 'unsupported_media_type'],
    [{ 'Content-Type': 'application/json' }, '{"title": ', 400, 'bad_request'],
    // Declared JSON with parameters is read: the 400 is the contract's answer to an empty object.
    [{ 'Content-Type': 'application/json; charset=utf-8' }, '{}', 400, 'bad_request'],
  ];
  for (const [headers, text, status, code] of cases) {
    const response = await post(headers, text);
    t.is(response.status, status, JSON.stringify(headers));
    t.is(((await response.json()) as { error: { code: string } }).error.code, code);
  }
});

test("requests Node's parser refuses, or HTTP/1.1 does (no Host, an unknown Expect), still answer the contract's JSON error", async (t) => {
  const cases: [request: string | Buffer, status: number, code: string][] = [
    [`GET /v1/isbn/${'9'.repeat(17_000)} HTTP/1.1\r\nHost: test\r\n\r\n`, 431, 'headers_too_large'],
    [`GET /v1/isbn/1 HTTP/1.1\r\nHost: test\r\nX-Big: ${'a'.repeat(17_000)}\r\n\r\n`, 431, 'headers_too_large'],
    [
      Buffer.concat([Buffer.from('GET /v1/'), Buffer.from([0xc3, 0xa9, 0xff]), Buffer.from(' HTTP/1.1\r\nHost: test\r\n\r\n')]),
      400,
      'bad_request',
    ],
    ['FROB /v1/isbn/1 HTTP/1.1\r\nHost: test\r\n\r\n', 400, 'bad_request'],
    ['GET /v1/isbn/1 HTTP/1.1\r\nHost: test\r\nBad Header: x\r\n\r\n', 400, 'bad_request'],
    ['this is not http\r\n\r\n', 400, 'bad_request'],
    // Node answers these two itself with an empty body unless the app is given them.
    [`GET /v1/isbn/${HUNGER_GAMES} HTTP/1.1\r\n\r\n`, 400, 'bad_request'],
    ['GET /health HTTP/1.1\r\nHost: test\r\nExpect: a-teapot\r\n\r\n', 417, 'expectation_failed'],
  ];
  for (const [request, status, code] of cases) {
    const answer = await rawRequest(request);
    const note = String(request).slice(0, 40);
    t.is(answer.status, status, note);
    t.regex(answer.contentType ?? '', /^application\/json(;|$)/, note);
    t.is((JSON.parse(answer.body) as { error: { code: string } }).error.code, code, note);
  }
});

import test from 'ava';
import fc from 'fast-check';
import { Agent, request } from 'node:http';
import { connect } from 'node:net';
import { pino } from 'pino';
import { requestAccess, routes as table } from '../src/http/routeTable.js';
import { reindex } from '../loader/index/reindex.js';
import { loggerOptions } from '../src/log.js';
import { startServer, type RunningServer } from '../src/server.js';
import { loadSampleCatalogue } from './helpers/catalogue.js';
import { createWorld, newKey, type TestWorld } from './helpers/env.js';
import { loaderDeps, type TestLoaderDeps } from './helpers/indexing.js';

// Property-based tests of the HTTP edge: requests made of every route's pieces and of junk (paths,
// query parameters, headers, bodies, with and without a key, and raw bytes Node's parser refuses).
// Whatever comes in: no 5xx, every error in the contract's JSON, no data without a key, and no
// secret in any line the server logs. MCP's tools are fuzzed in a file of their own.

let world: TestWorld;
let deps: TestLoaderDeps;
let server: RunningServer;
let port: number;
/** Every line the server has logged, at every level. */
const logLines: string[] = [];
/**
 * Every run of SECRET_WINDOW characters of the secret parts of the keys requests carried: no log line
 * may hold even a part of a secret (a run this long of 52 random base-32 characters is no accident).
 */
const secretWindows = new Set<string>();
const SECRET_WINDOW = 12;
function rememberSecret(secret: string): void {
  for (let start = 0; start + SECRET_WINDOW <= secret.length; start++) secretWindows.add(secret.slice(start, start + SECRET_WINDOW));
}
const holdsSecret = (line: string): boolean => {
  for (let start = 0; start + SECRET_WINDOW <= line.length; start++)
    if (secretWindows.has(line.slice(start, start + SECRET_WINDOW))) return true;
  return false;
};
let validKey: string;
let kid: string;
/** Real values to put where a route takes a parameter, so fuzzed requests also reach data. */
let knownValues: string[];
let routes: { template: string; methods: string[] }[];
const agent = new Agent({ keepAlive: true, maxSockets: 4 });

test.before(async () => {
  world = await createWorld();
  deps = loaderDeps(world);
  await loadSampleCatalogue(world);
  await reindex(deps, 'all', { progress: false });
  const log = pino(loggerOptions('debug'), { write: (line: string) => void logLines.push(line) });
  server = await startServer({ ...world.config, rateLimitMax: 10_000_000 }, log);
  port = Number(new URL(server.url).port);
  ({ key: validKey, kid } = await newKey(world, 'fuzz'));
  rememberSecret(validKey.split('_')[3]!);
  const { rows } = await world.db.query<{ id: string; work_id: string; isbn_13: string | null }>(
    'select public_id(id) as id, public_id(work_id) as work_id, isbn_13 from books where merged_into is null order by books.id limit 5',
  );
  const { rows: authors } = await world.db.query<{ id: string }>(
    'select public_id(id) as id from authors where merged_into is null order by authors.id limit 3',
  );
  knownValues = [...rows.flatMap((row) => [row.id, row.work_id, row.isbn_13 ?? '']), ...authors.map((row) => row.id), '0', '42'];
  routes = table.map((route) => ({ template: route.path, methods: [route.method] }));
});
test.after.always(async () => {
  agent.destroy();
  await server?.stop();
  await deps?.close();
  await world?.destroy();
});

// Runs per property, chosen to keep the file within about 30 to 60 s on the shared machine.
const RUNS = { routes: 1_500, paths: 600, bodies: 600, raw: 500 };

interface FuzzRequest {
  method: string;
  path: string;
  headers: Record<string, string>;
  body?: Buffer;
}

interface Answer {
  status: number;
  contentType: string | undefined;
  body: string;
}

/** Text of every kind a client can send: empty, huge, unicode, control characters, numbers out of range, JSON-ish words. */
const junkText = fc.oneof(
  fc.string({ maxLength: 40 }),
  fc.string({ unit: 'grapheme', maxLength: 20 }),
  fc.string({ unit: 'binary', maxLength: 20 }),
  fc.constantFrom(
    '',
    ' ',
    '-1',
    '0',
    '1e309',
    'NaN',
    'Infinity',
    '9'.repeat(400),
    'x'.repeat(5_000),
    '\u0000',
    '\n',
    '😀',
    'null',
    'true',
    '[]',
    '{}',
    '%',
    '../..',
  ),
  fc.integer().map(String),
  fc.double().map(String),
);

/** A piece of a URL: mostly percent-encoded text, sometimes raw or broken percent-encoding. */
const urlPiece = fc.oneof(
  // Through a Buffer first: a lone surrogate becomes U+FFFD, which encodeURIComponent accepts.
  { weight: 4, arbitrary: junkText.map((text) => encodeURIComponent(Buffer.from(text).toString())) },
  { weight: 1, arbitrary: fc.stringMatching(/^[A-Za-z0-9._~!$&'()*+,;=:@-]{0,20}$/) },
  { weight: 1, arbitrary: fc.constantFrom('%', '%G1', '%zz', '%00', '%2e%2e', '%2F', '%C3', '%ff%fe', '.', '..') },
);

/** A value for a route parameter: a real one (maybe altered) or junk. */
const paramValue = fc.oneof(
  { weight: 2, arbitrary: fc.nat().map((index) => knownValues[index % knownValues.length]!) },
  { weight: 1, arbitrary: fc.tuple(fc.constantFrom('bk_', 'wk_', 'au_', 'BK_', ''), urlPiece).map(([prefix, rest]) => prefix + rest) },
  { weight: 2, arbitrary: urlPiece },
);

const QUERY_NAMES = ['q', 'since', 'limit', 'offset', 'author_id', 'language', 'year_from', 'year_to', 'editions'];
const query = fc
  .array(
    fc.tuple(
      fc.oneof(fc.constantFrom(...QUERY_NAMES), urlPiece),
      fc.oneof(urlPiece, fc.constantFrom('hunger', 'collins', '10', '0', 'all', 'en', '1990')),
    ),
    { maxLength: 5 },
  )
  .map((pairs) => (pairs.length === 0 ? '' : `?${pairs.map(([name, value]) => `${name}=${value}`).join('&')}`));

/** A header value Node will send (it refuses control characters). */
const headerValue = junkText.map((text) => text.replace(/[^\t\x20-\x7e\x80-\xff]/g, '').trim());

/** The Authorization header and, when it holds one, the secret it carries (which the log must never show). */
const authorization = fc.oneof(
  {
    weight: 6,
    arbitrary: fc.constantFrom('Bearer', 'bearer', 'BEARER').map((scheme) => ({ value: `${scheme} ${validKey}`, valid: true })),
  },
  { weight: 2, arbitrary: fc.constant({ value: undefined, valid: false }) },
  {
    weight: 1,
    // A well-formed key that is not ours: an unknown kid, or (rarely) ours with a wrong secret.
    arbitrary: fc
      .tuple(fc.stringMatching(/^[0-9a-z]{12}$/), fc.stringMatching(/^[0-9A-Za-z]{52}$/), fc.nat(9))
      .map(([otherKid, secret, dice]) => ({
        value: `Bearer svc_live_${dice === 0 ? kid : otherKid}_${secret}`,
        valid: false,
        secret,
      })),
  },
  { weight: 1, arbitrary: headerValue.map((value) => ({ value: value === '' ? undefined : value, valid: false })) },
  {
    weight: 1,
    arbitrary: fc
      .constantFrom('Basic Zm9vOmJhcg==', 'Bearer', 'Bearer ', `Bearer  ${'x'.repeat(60)}`, 'Bearer svc_live_', `Token abc`)
      .map((value) => ({ value, valid: false })),
  },
);

const CONTENT_TYPES = [
  'application/json',
  'application/json; charset=utf-8',
  'text/plain',
  'application/x-www-form-urlencoded',
  'multipart/form-data; boundary=x',
  'application/merge-patch+json',
];
const optionalHeaders = fc
  .tuple(
    fc.record(
      {
        'content-type': fc.oneof(fc.constantFrom(...CONTENT_TYPES), headerValue),
        'content-encoding': fc.oneof(fc.constantFrom('identity', 'gzip', 'br', 'deflate', 'IDENTITY'), headerValue),
        accept: fc.oneof(fc.constantFrom('*/*', 'application/json', 'text/html', 'application/json, text/event-stream'), headerValue),
        'x-request-id': headerValue,
        'mcp-protocol-version': fc.oneof(fc.constantFrom('2025-06-18', '2024-11-05'), headerValue),
      },
      { requiredKeys: [] },
    ),
    // Rare: any Expect but 100-continue is refused before the route, which would hide the rest of the request.
    fc.option(fc.oneof(fc.constantFrom('100-continue', '100-Continue', 'a-teapot'), headerValue), { freq: 15 }),
  )
  .map(([headers, expect]) => (expect === null ? headers : { ...headers, expect }));

/** A body: JSON of any shape, a match-like object with junk fields, a bulk lookup's list of keys, text, raw bytes, or one over the size limit. */
const body = fc.oneof(
  fc.jsonValue().map((value) => Buffer.from(JSON.stringify(value) ?? 'null')),
  fc
    .record({
      field: fc.constantFrom('isbns', 'ids', 'records'),
      keys: fc.array(fc.oneof({ weight: 3, arbitrary: paramValue }, { weight: 1, arbitrary: fc.jsonValue() }), { maxLength: 110 }),
    })
    .map(({ field, keys }) => Buffer.from(JSON.stringify({ [field]: keys }))),
  fc
    .record(
      {
        title: fc.oneof(junkText, fc.jsonValue()),
        isbn: fc.oneof(junkText, fc.jsonValue()),
        author: junkText,
        year: fc.oneof(fc.integer(), junkText),
        publisher: junkText,
      },
      { requiredKeys: [] },
    )
    .map((value) => Buffer.from(JSON.stringify(value))),
  junkText.map((text) => Buffer.from(text)),
  fc.uint8Array({ maxLength: 64 }).map((bytes) => Buffer.from(bytes)),
  fc.constant(Buffer.from(`{"title": "${'a'.repeat(70 * 1024)}"}`)),
);

const METHODS = ['GET', 'POST', 'PUT', 'DELETE', 'PATCH', 'OPTIONS', 'HEAD'];

/** A request on one of the router's routes: its parameters, query, headers and body fuzzed, its method mostly right. */
const routeRequest = fc
  .record({
    route: fc.nat().map((index) => routes[index % routes.length]!),
    params: fc.array(paramValue, { minLength: 2, maxLength: 2 }),
    query,
    methodDice: fc.nat(9),
    otherMethod: fc.constantFrom(...METHODS),
    auth: authorization,
    headers: optionalHeaders,
    body: fc.option(body, { freq: 3 }),
  })
  .map(({ route, params, query: search, methodDice, otherMethod, auth, headers, body: content }) => {
    let next = 0;
    const path = route.template.replace(/:\w+/g, () => params[next++]!) + search;
    const method = methodDice === 0 ? otherMethod : route.methods.find((name) => name !== 'HEAD')!;
    return { request: { method, path, headers: withAuth(headers, auth.value), body: content ?? undefined }, auth };
  });

/** Any path at all, made of route words and junk, any method; mostly without a key. */
const anyPathRequest = fc
  .record({
    segments: fc.array(
      fc.oneof(
        fc.constantFrom(
          'v1',
          'V1',
          'mcp',
          'MCP',
          'isbn',
          'books',
          'works',
          'authors',
          'search',
          'match',
          'changes',
          'recommendations',
          'health',
          'openapi.json',
          '',
          '.',
          '..',
          '%2e',
          '%76%31',
        ),
        urlPiece,
      ),
      {
        minLength: 1,
        maxLength: 5,
      },
    ),
    trailingSlash: fc.boolean(),
    query,
    method: fc.constantFrom(...METHODS),
    auth: fc.oneof({ weight: 3, arbitrary: fc.constant({ value: undefined, valid: false }) }, { weight: 1, arbitrary: authorization }),
    headers: optionalHeaders,
  })
  .map(({ segments, trailingSlash, query: search, method, auth, headers }) => ({
    request: { method, path: `/${segments.join('/')}${trailingSlash ? '/' : ''}${search}`, headers: withAuth(headers, auth.value) },
    auth,
  }));

/** POST bodies for the routes that read one, with the key, every content type and encoding. */
const bodyRequest = fc
  .record({
    path: fc.constantFrom(
      '/v1/match',
      '/mcp',
      '/v1/match/batch',
      '/v1/isbn/batch',
      '/v1/books/batch',
      '/v1/works/batch',
      '/v1/authors/batch',
    ),
    headers: optionalHeaders,
    body,
    auth: authorization,
  })
  .map(({ path, headers, body: content, auth }) => ({
    request: { method: 'POST', path, headers: withAuth(headers, auth.value), body: content },
    auth,
  }));

function withAuth(headers: Record<string, string>, value: string | undefined): Record<string, string> {
  const sendable = Object.fromEntries(Object.entries(headers).filter(([, text]) => text !== ''));
  return value === undefined ? sendable : { ...sendable, authorization: value };
}

function send({ method, path, headers, body: content }: FuzzRequest): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const outgoing = request(
      {
        agent,
        host: '127.0.0.1',
        port,
        method,
        path,
        headers: content ? { ...headers, 'content-length': String(content.length) } : headers,
      },
      (response) => {
        const chunks: Buffer[] = [];
        response.on('data', (chunk: Buffer) => chunks.push(chunk));
        response.on('end', () =>
          resolve({
            status: response.statusCode!,
            contentType: response.headers['content-type'],
            body: Buffer.concat(chunks).toString('utf8'),
          }),
        );
        response.on('error', reject);
      },
    );
    outgoing.on('error', reject);
    outgoing.end(content);
  });
}

/** What is wrong with an answer, if anything: the properties every answer must have. */
function problemWith(method: string, path: string, keyValid: boolean, answer: Answer): string | undefined {
  if (answer.status >= 500) return `answered ${answer.status}: ${answer.body.slice(0, 300)}`;
  const [pathname = '', search = ''] = path.split('?');
  const isPublic = requestAccess({ method, path: pathname, query: Object.fromEntries(new URLSearchParams(search)) }) === 'public';
  if (!keyValid && !isPublic && answer.status < 400) return `no valid key, yet answered ${answer.status}`;
  if (answer.status < 400 || method === 'HEAD') return undefined;
  if (!/^application\/json(;|$)/.test(answer.contentType ?? '')) return `error with content type ${answer.contentType}`;
  let parsed: unknown;
  try {
    parsed = JSON.parse(answer.body);
  } catch {
    return `error body is not JSON: ${answer.body.slice(0, 200)}`;
  }
  // MCP answers its protocol's errors as JSON-RPC (an error object with a numeric code); everything else in the contract's shape.
  const jsonRpc = pathname === '/mcp' && typeof parsed === 'object' && parsed !== null && 'jsonrpc' in parsed;
  if (jsonRpc) return undefined;
  const error = (parsed as { error?: Record<string, unknown> }).error;
  const shaped =
    typeof parsed === 'object' &&
    parsed !== null &&
    Object.keys(parsed).join() === 'error' &&
    Object.keys(error ?? {})
      .sort()
      .join() === 'code,message' &&
    typeof error?.code === 'string' &&
    typeof error.message === 'string';
  return shaped ? undefined : `error body not in the contract's shape: ${answer.body.slice(0, 200)}`;
}

/** What is wrong with the lines logged since `from`: each must be JSON, none at error level, none holding a secret. */
function problemInLog(from: number): string | undefined {
  for (const line of logLines.slice(from)) {
    if (holdsSecret(line)) return `a secret reached the log: ${line.slice(0, 300)}`;
    let entry: { level?: number };
    try {
      entry = JSON.parse(line) as { level?: number };
    } catch {
      return `a log line is not JSON: ${line.slice(0, 200)}`;
    }
    if ((entry.level ?? 0) >= 50) return `logged at error level: ${line.slice(0, 300)}`;
  }
  return undefined;
}

/** Sends `numRuns` requests drawn from `arbitrary`, each checked by problemWith and problemInLog. */
async function checkRequests(
  arbitrary: fc.Arbitrary<{ request: FuzzRequest; auth: { valid: boolean; secret?: string } }>,
  numRuns: number,
): Promise<void> {
  await fc.assert(
    fc.asyncProperty(arbitrary, async ({ request: fuzzed, auth }) => {
      if (auth.secret) rememberSecret(auth.secret);
      const from = logLines.length;
      const answer = await send(fuzzed);
      const problem = problemWith(fuzzed.method, fuzzed.path, auth.valid, answer) ?? problemInLog(from);
      if (problem) throw new Error(`${fuzzed.method} ${fuzzed.path.slice(0, 200)}: ${problem}`);
    }),
    { numRuns },
  );
}

test.serial(
  'every route, its parameters, query, headers and body fuzzed, with and without a key: no 5xx, errors in the contract, no secret logged',
  async (t) => {
    await t.notThrowsAsync(checkRequests(routeRequest, RUNS.routes));
    t.log(`${RUNS.routes} cases`);
  },
);

test.serial(
  "any path, in any spelling and with any method: without a key only the public paths answer, and every error is the contract's",
  async (t) => {
    await t.notThrowsAsync(checkRequests(anyPathRequest, RUNS.paths));
    t.log(`${RUNS.paths} cases`);
  },
);

test.serial(
  "POST bodies of any shape, type and encoding: no 5xx, errors in the contract (or JSON-RPC's on /mcp), no secret logged",
  async (t) => {
    await t.notThrowsAsync(checkRequests(bodyRequest, RUNS.bodies));
    t.log(`${RUNS.bodies} cases`);
  },
);

/** A raw exchange: the first response's status, content type and body, or null if the server closed without one. */
function rawExchange(bytes: Buffer): Promise<Answer | null> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1', () => socket.end(bytes));
    const chunks: Buffer[] = [];
    socket.setTimeout(5_000, () => reject(new Error('no answer and no close within 5 s')));
    socket.on('data', (chunk: Buffer) => chunks.push(chunk));
    socket.on('error', (error: NodeJS.ErrnoException) => reject(error));
    socket.on('close', () => {
      const text = Buffer.concat(chunks).toString('latin1');
      if (text === '') return resolve(null);
      const end = text.indexOf('\r\n\r\n');
      const head = text.slice(0, end);
      const length = Number(/\r\ncontent-length: (\d+)/i.exec(head)?.[1] ?? 0);
      resolve({
        status: Number(/^HTTP\/1\.[01] (\d{3})/.exec(head)?.[1]),
        contentType: /\r\ncontent-type: ([^\r]+)/i.exec(head)?.[1],
        body: Buffer.from(text.slice(end + 4, end + 4 + length), 'latin1').toString('utf8'),
      });
    });
  });
}

/** Bytes that may or may not be HTTP: a request line and headers with junk in any part, or no HTTP at all. */
const rawBytes = fc.oneof(
  fc.uint8Array({ minLength: 1, maxLength: 200 }).map((bytes) => Buffer.from(bytes)),
  fc
    .record({
      method: fc.oneof(fc.constantFrom('GET', 'POST', 'FROB', 'get', 'G ET', ''), fc.string({ unit: 'binary-ascii', maxLength: 8 })),
      target: fc.oneof(
        fc.constantFrom('/v1/isbn/9780439023481', '/health', '/mcp', '*', '', 'http://x/v1/changes?since=0'),
        fc.uint8Array({ maxLength: 30 }).map((bytes) => `/v1/${Buffer.from(bytes).toString('latin1')}`),
      ),
      version: fc.constantFrom('HTTP/1.1', 'HTTP/1.0', 'HTTP/2.0', 'HTTP/1.1x', ''),
      headers: fc.array(
        fc.tuple(
          fc.oneof(
            fc.constantFrom('Host', 'Content-Length', 'Transfer-Encoding', 'Authorization', 'Bad Header'),
            fc.string({ unit: 'binary-ascii', maxLength: 10 }),
          ),
          fc.string({ unit: 'binary', maxLength: 30 }),
        ),
        { maxLength: 4 },
      ),
      big: fc.constantFrom(0, 0, 0, 20_000),
    })
    .map(({ method, target, version, headers, big }) =>
      Buffer.from(
        `${method} ${target}${'x'.repeat(big)} ${version}\r\n${headers.map(([name, value]) => `${name}: ${value}\r\n`).join('')}\r\n`,
        'latin1',
      ),
    ),
);

test.serial("raw bytes, HTTP or not: whatever holds a request is answered, below 500, and an error is the contract's JSON", async (t) => {
  await t.notThrowsAsync(
    fc.assert(
      fc.asyncProperty(rawBytes, async (bytes) => {
        const from = logLines.length;
        const answer = await rawExchange(bytes);
        // Only bytes that hold no request at all (blank lines, which HTTP lets a server skip) may go unanswered: the connection is then closed.
        if (!answer) {
          if (bytes.toString('latin1').trim() === '') return;
          throw new Error(`${JSON.stringify(bytes.toString('latin1').slice(0, 120))}: no answer`);
        }
        // Raw requests carry no key: anything but the public paths must be refused.
        const target = /^\S* (\S*)/.exec(bytes.toString('latin1'))?.[1] ?? '';
        const problem =
          problemWith('GET', requestAccess({ method: 'GET', path: target, query: {} }) === 'public' ? target : '/', false, answer) ??
          problemInLog(from);
        if (problem) throw new Error(`${JSON.stringify(bytes.toString('latin1').slice(0, 120))}: ${problem}`);
      }),
      // A whole request the client follows by closing its side (`printf ... | nc`), to a path whose answer takes a moment.
      { numRuns: RUNS.raw, examples: [[Buffer.from('GET /health HTTP/1.0\r\n\r\n')], [Buffer.from('GET /health HTTP/1.1\r\n\r\n')]] },
    ),
  );
  t.log(`${RUNS.raw} cases`);
});

test.serial('no log line holds the secret of any key a request carried', (t) => {
  t.true(logLines.length > RUNS.routes, 'the server logged each request');
  const leaks = logLines.filter(holdsSecret);
  t.deepEqual(leaks, []);
});

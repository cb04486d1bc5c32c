import { createConnection, type Socket } from 'node:net';
import test from 'ava';
import type { ConnectionLimits } from '../src/config.js';
import type { RunningServer } from '../src/server.js';
import { createWorld, newKey, startTestServer, type TestWorld } from './helpers/env.js';

/**
 * Slow and silent clients (slow loris) against the connection limits, with the limits made short
 * so that each deadline shows within seconds: headers that never finish, a body that falls silent
 * or trickles past the request's deadline, and too many connections from one address. Raw sockets,
 * since an HTTP client does not let a test send half a request.
 */

const LIMITS: ConnectionLimits = {
  headersTimeoutMs: 1_000,
  requestTimeoutMs: 3_000,
  bodyIdleTimeoutMs: 500,
  maxConnectionsPerClient: 5,
  maxConnections: 0,
};

let world: TestWorld;
let server: RunningServer;
let authorization: string;

test.before(async () => {
  world = await createWorld();
  server = await startTestServer(world, { connectionLimits: LIMITS });
  authorization = (await newKey(world)).auth.Authorization;
});

test.after.always(async () => {
  await server?.stop();
  await world?.destroy();
});

interface Exchange {
  /** The status line's code, or null when the connection closed without an answer. */
  status: number | null;
  body: string;
  /** From the first byte sent to the connection's close. */
  ms: number;
}

function connect(): Promise<Socket> {
  const { hostname, port } = new URL(server.url);
  return new Promise((resolve, reject) => {
    const socket = createConnection({ host: hostname, port: Number(port) }, () => resolve(socket));
    socket.once('error', reject);
  });
}

/**
 * Sends `head`, then `trickle` one byte every `everyMs` (if given), and reads until the server
 * closes the connection, or gives up after `giveUpMs`.
 */
async function exchange(head: string, { trickle = '', everyMs = 200, giveUpMs = 10_000 } = {}): Promise<Exchange> {
  const socket = await connect();
  const started = performance.now();
  let received = '';
  socket.on('data', (chunk: Buffer) => (received += chunk.toString()));
  socket.on('error', () => undefined);
  socket.write(head);
  let sent = 0;
  const trickling =
    trickle === '' ? undefined : setInterval(() => socket.writable && socket.write(trickle[sent++ % trickle.length]!), everyMs);
  const closed = await new Promise<boolean>((resolve) => {
    const giveUp = setTimeout(() => resolve(false), giveUpMs);
    socket.once('close', () => {
      clearTimeout(giveUp);
      resolve(true);
    });
  });
  clearInterval(trickling);
  const ms = closed ? performance.now() - started : Infinity;
  socket.destroy();
  const status = /^HTTP\/1\.1 (\d{3}) /.exec(received);
  return { status: status ? Number(status[1]) : null, body: received.slice(received.indexOf('\r\n\r\n') + 4), ms };
}

const matchHead = (contentLength: string, key = true) =>
  `POST /v1/match HTTP/1.1\r\nHost: test\r\n${key ? `Authorization: ${authorization}\r\n` : ''}Content-Type: application/json\r\nContent-Length: ${contentLength}\r\n\r\n{"`;

test('a body that falls silent short of its declared length is a 408 in the contract shape once its silence passes the body deadline', async (t) => {
  for (const length of ['100000', '1000000000000']) {
    const answer = await exchange(matchHead(length));
    t.is(answer.status, 408, `Content-Length ${length}: ${answer.body}`);
    t.deepEqual(JSON.parse(answer.body), {
      error: { code: 'request_timeout', message: 'request body stalled: nothing received for 0.5 s' },
    });
    t.true(answer.ms >= LIMITS.bodyIdleTimeoutMs && answer.ms < 3 * LIMITS.bodyIdleTimeoutMs + 1_000, `closed after ${answer.ms} ms`);
  }
});

test('a silent body the app has answered already (no key: 401) does not hold the connection', async (t) => {
  const answer = await exchange(matchHead('100000', false));
  t.is(answer.status, 401);
  t.true(answer.ms < 3 * LIMITS.bodyIdleTimeoutMs + 1_000, `closed after ${answer.ms} ms`);
});

test('headers that never finish are a 408 in the contract shape at the header deadline', async (t) => {
  const answer = await exchange('GET /health HTTP/1.1\r\nHost: test\r\nX-Slow: ', { trickle: 'abcdefgh' });
  t.is(answer.status, 408, answer.body);
  t.deepEqual(JSON.parse(answer.body), { error: { code: 'request_timeout', message: 'request was not received in time' } });
  t.true(answer.ms >= LIMITS.headersTimeoutMs && answer.ms < LIMITS.headersTimeoutMs + 2_500, `closed after ${answer.ms} ms`);
});

test('a body that trickles, never silent for long, is a 408 at the request deadline', async (t) => {
  const answer = await exchange(matchHead('100000'), { trickle: 'aaaa', everyMs: 100 });
  t.is(answer.status, 408, answer.body);
  t.is((JSON.parse(answer.body) as { error: { code: string } }).error.code, 'request_timeout');
  t.true(answer.ms >= LIMITS.requestTimeoutMs - 100 && answer.ms < LIMITS.requestTimeoutMs + 2_500, `closed after ${answer.ms} ms`);
});

test('a keep-alive connection idle past the body deadline serves its next request', async (t) => {
  const socket = await connect();
  let received = '';
  socket.on('data', (chunk: Buffer) => (received += chunk.toString()));
  const body = '{"isbns": ["9780439023481"]}';
  const request = `POST /v1/isbn/batch HTTP/1.1\r\nHost: test\r\nAuthorization: ${authorization}\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n${body}`;
  const answered = async (count: number) => {
    while ((received.match(/HTTP\/1\.1 \d{3}/g) ?? []).length < count) await new Promise((resolve) => setTimeout(resolve, 20));
  };
  socket.write(request);
  await answered(1);
  await new Promise((resolve) => setTimeout(resolve, 3 * LIMITS.bodyIdleTimeoutMs));
  t.false(socket.destroyed);
  socket.write(request);
  await answered(2);
  t.deepEqual(received.match(/HTTP\/1\.1 \d{3}/g), ['HTTP/1.1 200', 'HTTP/1.1 200']);
  socket.destroy();
});

test.serial('connections past the cap from one address are a 429 in the contract shape; one closed makes room', async (t) => {
  // Serial tests run before the others of the file: these are the only connections open.
  const idle = await Promise.all(Array.from({ length: LIMITS.maxConnectionsPerClient }, connect));
  try {
    const refused = await fetch(`${server.url}/openapi.json`);
    t.is(refused.status, 429);
    t.is(refused.headers.get('retry-after'), '1');
    t.deepEqual(await refused.json(), {
      error: { code: 'too_many_connections', message: 'more than 5 open connections from one address: reuse a connection, or close one' },
    });
    const closed = new Promise((resolve) => idle[0]!.once('close', resolve));
    idle[0]!.destroy();
    await closed;
    // The server sees the close a moment after the client.
    let status = 0;
    for (let attempt = 0; attempt < 20 && status !== 200; attempt++) {
      const answer = await fetch(`${server.url}/openapi.json`, { headers: { Connection: 'close' } });
      // Read to the end, so that the connection is done with before the next request.
      await answer.arrayBuffer();
      status = answer.status;
      if (status !== 200) await new Promise((resolve) => setTimeout(resolve, 50));
    }
    t.is(status, 200);
  } finally {
    for (const socket of idle) socket.destroy();
  }
});

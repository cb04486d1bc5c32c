import { randomBytes } from 'node:crypto';
import { connect } from 'node:net';
import { Writable } from 'node:stream';
import test from 'ava';
import { pino } from 'pino';
import { loadConfig } from '../src/config.js';
import { migrate } from '../src/stores/postgres/migrate.js';
import { FLUSH_EVERY_MS, Meter } from '../src/services/meter.js';
import { UsageBatch, type UsageRecord } from '../src/domain/usage.js';
import { insertUsage } from '../src/stores/postgres/usage.js';
import { createWorld, databaseAtRelease, newKey, startTestServer, type TestWorld } from './helpers/env.js';
import { eventually } from './helpers/eventually.js';
import { runCli, spawnServer } from './helpers/processes.js';
import { meteredCalls, meteredCount } from './helpers/usage.js';

let world: TestWorld;
test.before(async () => {
  world = await createWorld();
});
test.after.always(() => world?.destroy());

const usageCount = (kid: string): Promise<number> => meteredCount(world.db, kid);

/** An ISBN lookup by `kid`, answered now, as the server records it. */
const isbnCall = (kid: string): UsageRecord => ({ kid, method: 'GET', route: '/v1/isbn/:isbn', status: 200, at: Date.now(), latencyMs: 1 });

/**
 * A POST /v1/isbn/batch whose headers the server has taken in (it said 100 Continue) and whose body
 * is held back: a call in flight for as long as the test likes. `send` sends the body and resolves
 * with the status the server answered (0 for a connection closed without an answer).
 */
async function heldCall(url: string, auth: { Authorization: string }): Promise<{ send(): Promise<number> }> {
  const body = JSON.stringify({ isbns: ['9780306406157'] });
  const socket = connect(Number(new URL(url).port), '127.0.0.1');
  let received = '';
  socket.on('data', (chunk: Buffer) => (received += chunk.toString('latin1')));
  const closed = new Promise<void>((resolve) => socket.on('close', () => resolve()));
  socket.on('error', () => undefined);
  socket.write(
    `POST /v1/isbn/batch HTTP/1.1\r\nHost: test\r\nAuthorization: ${auth.Authorization}\r\nContent-Type: application/json\r\n` +
      `Content-Length: ${Buffer.byteLength(body)}\r\nExpect: 100-continue\r\nConnection: close\r\n\r\n`,
  );
  if (!(await eventually(() => Promise.resolve(received.startsWith('HTTP/1.1 100 Continue\r\n')), 30_000)))
    throw new Error(`the server did not take the request in: ${JSON.stringify(received)}`);
  return {
    async send() {
      socket.write(body);
      await closed;
      return Number(/HTTP\/1\.1 ([2-5]\d\d)/.exec(received)?.[1] ?? 0);
    },
  };
}

test.serial(
  'N calls across a graceful restart, some in flight at SIGTERM, are every one answered and leave exactly N usage records',
  async (t) => {
    const { kid, auth } = await newKey(world, 'restart');
    const env = { ...world.env, RATE_LIMIT_MAX: '100000' };
    const total = 200;
    const inFlight = 20;
    // Every call must be answered: a failed fetch fails the test.
    const call = async (url: string) => {
      const response = await fetch(`${url}/v1/isbn/9780306406157`, { headers: auth });
      await response.arrayBuffer();
      t.is(response.status, 404);
    };

    const first = await spawnServer(env);
    for (let i = 0; i < total / 2 - inFlight; i++) await call(first.url);
    // Calls the server has received and not answered when SIGTERM arrives: it must finish and meter each.
    const held = await Promise.all(Array.from({ length: inFlight }, () => heldCall(first.url, auth)));
    first.child.kill('SIGTERM');
    t.true(
      await eventually(() => Promise.resolve(first.log.some((line) => line.includes('stopping'))), 10_000),
      'the server began to stop',
    );
    t.deepEqual(
      await Promise.all(held.map((call) => call.send())),
      Array.from({ length: inFlight }, () => 200),
      'every call in flight at SIGTERM was answered',
    );
    t.is(await first.exited, 0);

    const second = await spawnServer(env);
    for (let i = 0; i < total / 2; i++) await call(second.url);
    second.child.kill('SIGTERM');
    t.is(await second.exited, 0);

    const metered = await meteredCalls(world.db, kid);
    t.is(metered.length, total);
    t.is(
      metered.filter((record) => record.route === '/v1/isbn/batch' && record.status === 200).length,
      inFlight,
      'each call in flight is metered',
    );
  },
);

// The bound on usage lost to a crash (docs/operations.md, Metering bounds): the calls answered in the meter's last interval
// (100 ms), and those of a write under way; the margin is for a write and a timer on a busy machine.
const CRASH_LOSS_WINDOW_MS = 300;

test.serial('kill -9 in the middle of traffic loses only usage of the calls answered just before it', async (t) => {
  const { kid, auth } = await newKey(world, 'crash');
  const server = await spawnServer({ ...world.env, RATE_LIMIT_MAX: '1000000' });
  // Warm: the first call of a key reads it from PostgreSQL; it is metered and counted like the others.
  await (await fetch(`${server.url}/v1/isbn/9780306406157`, { headers: auth })).arrayBuffer();
  const answeredAt: number[] = [Date.now()];
  let killedAt = Infinity;
  const client = async () => {
    while (Date.now() < killedAt) {
      try {
        const response = await fetch(`${server.url}/v1/isbn/9780306406157`, { headers: auth });
        await response.arrayBuffer();
        if (Date.now() < killedAt) answeredAt.push(Date.now());
      } catch {
        return; // the server is gone
      }
    }
  };
  const clients = Array.from({ length: 8 }, client);
  // In the middle of traffic: a few hundred calls in, at a moment the test does not choose.
  const enough = 200 + Math.floor(Math.random() * 100);
  const deadline = Date.now() + 30_000;
  while (answeredAt.length < enough && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 5));
  killedAt = Date.now();
  server.child.kill('SIGKILL');
  await Promise.all(clients);
  await server.exited;

  const answered = answeredAt.length;
  const lost = answered - (await usageCount(kid));
  const lastMoments = answeredAt.filter((at) => at > killedAt - CRASH_LOSS_WINDOW_MS).length;
  t.log(`${answered} calls answered, ${lost} not metered; ${lastMoments} answered in the last ${CRASH_LOSS_WINDOW_MS} ms`);
  t.true(answered >= enough, `only ${answered} calls answered in 30 s`);
  t.true(lost <= lastMoments, `${lost} lost, more than the ${lastMoments} answered in the last ${CRASH_LOSS_WINDOW_MS} ms`);
});

test.serial('while PostgreSQL refuses the writes, usage waits in memory and is written when it accepts again', async (t) => {
  const server = await startTestServer(world, { rateLimitMax: 100_000 });
  try {
    const { kid, auth } = await newKey(world, 'outage');
    // An outage of the usage table alone: the rest of the service keeps working.
    await world.db.query('alter table usage_batches rename to usage_away');
    for (let i = 0; i < 30; i++) await (await fetch(`${server.url}/v1/isbn/123`, { headers: auth })).arrayBuffer();
    t.true(await eventually(() => Promise.resolve(server.services.meter?.health().failing === true)));
    const health = (await (await fetch(`${server.url}/health`)).json()) as { metering: { pending: number; dropped: number } };
    t.is(health.metering.pending, 30);
    t.is(health.metering.dropped, 0);
    await world.db.query('alter table usage_away rename to usage_batches');
    t.true(await eventually(async () => (await usageCount(kid)) === 30));
  } finally {
    await server.stop();
  }
});

test.serial('past its capacity the buffer drops the oldest records and says so in /health', async (t) => {
  const server = await startTestServer(world, { rateLimitMax: 100_000, meteringBufferMax: 10 });
  try {
    const { auth } = await newKey(world, 'overflow');
    await world.db.query('alter table usage_batches rename to usage_away');
    for (let i = 0; i < 15; i++) await (await fetch(`${server.url}/v1/isbn/123`, { headers: auth })).arrayBuffer();
    const health = (await (await fetch(`${server.url}/health`)).json()) as {
      status: string;
      metering: { pending: number; dropped: number };
    };
    t.is(health.metering.dropped, 5);
    t.is(health.metering.pending, 10);
    t.is(health.status, 'ok');
  } finally {
    await world.db.query('alter table if exists usage_away rename to usage_batches');
    await server.stop();
  }
});

test.serial('an overflowing buffer reports its drops in one log line, not one per dropped record', async (t) => {
  type Line = { msg: string; dropped?: number; droppedTotal?: number };
  const lines: Line[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _encoding, done) {
      lines.push(JSON.parse(chunk.toString()) as Line);
      done();
    },
  });
  await world.db.query('alter table usage_batches rename to usage_away');
  const meter = new Meter(world.db, pino({ level: 'info' }, sink), 10);
  try {
    for (let i = 0; i < 1_000; i++) meter.record(isbnCall('k'));
    t.is(meter.health().dropped, 990);
  } finally {
    await world.db.query('alter table if exists usage_away rename to usage_batches');
  }
  await meter.close();
  const reports = lines.filter((line) => line.msg === 'usage buffer full: oldest usage records dropped');
  // The first drop at once, the rest (with their count) when the meter closes.
  t.deepEqual(
    reports.map(({ dropped, droppedTotal }) => ({ dropped, droppedTotal })),
    [
      { dropped: 1, droppedTotal: 1 },
      { dropped: 989, droppedTotal: 990 },
    ],
  );
});

test.serial('a steady stream of calls is written per thousand calls or per flush tick, not a row per few calls', async (t) => {
  const meter = new Meter(world.db, pino({ level: 'silent' }), 100_000);
  const kid = `stream${randomBytes(3).toString('hex')}`;
  const started = performance.now();
  // As in a server: a few calls per turn of the event loop, so writes run while calls keep coming.
  for (let i = 1; i <= 3_000; i++) {
    meter.record(isbnCall(kid));
    if (i % 16 === 0) await new Promise(setImmediate);
  }
  const ticks = Math.floor((performance.now() - started) / FLUSH_EVERY_MS) + 1;
  await meter.close();
  t.is(await usageCount(kid), 3_000);
  const { rows } = await world.db.query<{ n: number }>(
    'select count(*)::int as n from usage_batches b where exists (select 1 from json_to_recordset(b.records) as g(kid text) where g.kid = $1)',
    [kid],
  );
  const batches = rows[0]!.n;
  // Three full batches, one more for each tick of the flush timer while the calls came (however slow
  // the machine made them), and the rest at close.
  t.true(batches <= 3 + ticks + 1, `${batches} batches in ${ticks} ticks`);
});

test.serial('a flush asked for while a write is under way still writes every call recorded before it', async (t) => {
  const meter = new Meter(world.db, pino({ level: 'silent' }), 100_000);
  const kid = `during${randomBytes(3).toString('hex')}`;
  for (let i = 0; i < 1_000; i++) meter.record(isbnCall(kid)); // a full batch: its write starts
  for (let i = 0; i < 5; i++) meter.record(isbnCall(kid));
  await meter.flush();
  t.is(await usageCount(kid), 1_005);
  t.is(meter.health().pending, 0);
  await meter.close();
});

test('a full buffer drops its earliest calls first, whatever group they are in', (t) => {
  const call = (route: string, at: number) => ({ kid: 'k', method: 'GET', route, status: 200, at, latencyMs: at / 10 });
  const batch = UsageBatch.of([call('/a', 1), call('/b', 2), call('/a', 3), call('/b', 4), call('/a', 5)]);
  t.is(batch.dropOldest(3), 3);
  t.is(batch.size, 2);
  t.deepEqual(batch.groups(), [
    { kid: 'k', method: 'GET', route: '/a', status: 200, at: [5], latencyMs: [0.5] },
    { kid: 'k', method: 'GET', route: '/b', status: 200, at: [4], latencyMs: [0.4] },
  ]);
  t.deepEqual(batch.bounds(), { first: 4, last: 5 });
  t.is(batch.dropOldest(10), 2);
  t.is(batch.size, 0);
});

test.serial('each call is metered with its route pattern and status; public routes are not metered', async (t) => {
  const server = await startTestServer(world, { rateLimitMax: 3 });
  try {
    const { kid, auth } = await newKey(world, 'patterns');
    await fetch(`${server.url}/health`);
    await fetch(`${server.url}/openapi.json`);
    await fetch(`${server.url}/v1/isbn/123`, { headers: auth });
    await fetch(`${server.url}/v1/books/bk_000000000000`, { headers: auth });
    await fetch(`${server.url}/v1/changes?since=0`, { headers: auth });
    await fetch(`${server.url}/v1/changes?since=0`, { headers: auth }); // over the limit: 429, still metered
    await server.services.meter?.flush();
    t.deepEqual(await meteredCalls(world.db, kid), [
      { method: 'GET', route: '/v1/isbn/:isbn', status: 400 },
      { method: 'GET', route: '/v1/books/:id', status: 404 },
      { method: 'GET', route: '/v1/changes', status: 200 },
      { method: 'GET', route: '/v1/changes', status: 429 },
    ]);
  } finally {
    await server.stop();
  }
});

test.serial('bookmeta usage reports calls per key, day and route, as a table or JSON', async (t) => {
  const { kid } = await newKey(world, 'report');
  const call = (route: string, status: number, at: string) => ({ kid, method: 'GET', route, status, at: Date.parse(at), latencyMs: 1 });
  // Two batches, the second spanning both days, so that a report by time has to look inside batches.
  await insertUsage(world.db, UsageBatch.of([call('/v1/isbn/:isbn', 200, '2026-01-02T10:00:00Z')]));
  await insertUsage(
    world.db,
    UsageBatch.of([call('/v1/isbn/:isbn', 404, '2026-01-02T11:00:00Z'), call('/v1/changes', 200, '2026-01-03T10:00:00Z')]),
  );
  const json = await runCli(world.env, ['usage', '--kid', kid, '--json']);
  t.is(json.code, 0, json.stderr);
  t.deepEqual(JSON.parse(json.stdout), [
    { day: '2026-01-02', kid, route: 'GET /v1/isbn/:isbn', calls: 2, errors: 1 },
    { day: '2026-01-03', kid, route: 'GET /v1/changes', calls: 1, errors: 0 },
  ]);
  const table = await runCli(world.env, ['usage', '--kid', kid, '--since', '2026-01-03']);
  t.is(table.code, 0, table.stderr);
  t.regex(table.stdout, /day\s+kid\s+route\s+calls\s+errors/);
  t.regex(table.stdout, /2026-01-03\s+\w+\s+GET \/v1\/changes\s+1\s+0/);
  t.notRegex(table.stdout, /2026-01-02/);
  // --until is exclusive: a call at that very moment is left out, one a millisecond before is in.
  const until = async (moment: string) => {
    const report = await runCli(world.env, ['usage', '--kid', kid, '--json', '--until', moment]);
    t.is(report.code, 0, report.stderr);
    return JSON.parse(report.stdout) as unknown;
  };
  t.deepEqual(await until('2026-01-03T10:00:00Z'), [{ day: '2026-01-02', kid, route: 'GET /v1/isbn/:isbn', calls: 2, errors: 1 }]);
  t.deepEqual(await until('2026-01-02T11:00:00.001Z'), [{ day: '2026-01-02', kid, route: 'GET /v1/isbn/:isbn', calls: 2, errors: 1 }]);
  t.deepEqual(await until('2026-01-02T11:00:00Z'), [{ day: '2026-01-02', kid, route: 'GET /v1/isbn/:isbn', calls: 1, errors: 0 }]);
});

test.serial('METERING=off: a server records no usage, and /health says metering is off', async (t) => {
  const { kid, auth } = await newKey(world, 'unmetered');
  const server = await startTestServer(world, loadConfig({ ...world.env, METERING: 'off' }));
  try {
    for (let i = 0; i < 5; i++) t.is((await fetch(`${server.url}/v1/isbn/9780306406157`, { headers: auth })).status, 404);
    const health = (await (await fetch(`${server.url}/health`)).json()) as { metering: unknown };
    t.deepEqual(health.metering, { enabled: false });
  } finally {
    await server.stop();
  }
  // Stopped, a server has written all the usage it held.
  t.is(await usageCount(kid), 0);
});

test.serial('usage rows are written as given, whatever characters the route holds', async (t) => {
  const { kid } = await newKey(world, 'copy');
  // A path that matched no route is metered as it came: the batch must carry any character intact.
  const route = '/v1/odd\\path\twith\ttabs\nand\r\nbreaks \\N';
  await insertUsage(
    world.db,
    UsageBatch.of([{ kid, method: 'GET', route, status: 404, at: Date.parse('2026-11-22T10:00:00.123Z'), latencyMs: 1.5 }]),
  );
  const { rows } = await world.db.query('select route, status, at, latency_ms from usage where kid = $1', [kid]);
  t.deepEqual(rows, [{ route, status: 404, at: new Date('2026-11-22T10:00:00.123Z'), latency_ms: 1.5 }]);
});

test('migrating to batch storage keeps every call recorded before it, to the microsecond', async (t) => {
  const { db, drop } = await databaseAtRelease(world, '003_usage_ledger.sql');
  try {
    const before = [
      { kid: 'k1', method: 'GET', route: '/v1/isbn/:isbn', status: 200, at: new Date('2026-01-02T10:00:00.123Z'), latency_ms: 1.25 },
      { kid: 'k1', method: 'GET', route: '/v1/changes', status: 429, at: new Date('2026-01-02T12:30:00Z'), latency_ms: 0.5 },
      { kid: 'k2', method: 'POST', route: '/mcp', status: 200, at: new Date('2026-01-03T01:00:00Z'), latency_ms: 3 },
    ];
    for (const row of before) {
      await db.query('insert into usage (kid, method, route, status, at, latency_ms) values ($1, $2, $3, $4, $5, $6)', Object.values(row));
    }
    await db.query(`update usage set at = at + interval '456 microseconds' where route = '/v1/isbn/:isbn'`);
    // Later migrations come after these; they are not this test's business.
    t.deepEqual((await migrate(db)).slice(0, 2), ['004_usage_batches.sql', '005_usage_groups.sql']);
    const { rows } = await db.query<(typeof before)[number] & { micros: number }>(
      'select kid, method, route, status, at, latency_ms, extract(microseconds from at)::int % 1000000 as micros from usage order by at',
    );
    t.deepEqual(
      rows.map(({ micros: _, ...row }) => row),
      before,
    );
    t.is(rows[0]!.micros, 123_456);
  } finally {
    await drop();
  }
});

test('migrating batches of one object per call to grouped batches keeps every call and its batch bounds', async (t) => {
  const { db, drop } = await databaseAtRelease(world, '004_usage_batches.sql');
  try {
    // A batch as release 004 wrote it: one JSON object per call.
    const calls = [
      {
        kid: 'k1',
        method: 'GET',
        route: '/v1/isbn/:isbn',
        status: 200,
        at: Date.parse('2026-01-02T10:00:00.123Z') + 0.456,
        latencyMs: 1.25,
      },
      { kid: 'k2', method: 'POST', route: '/mcp', status: 200, at: Date.parse('2026-01-02T10:00:01Z'), latencyMs: 3 },
      { kid: 'k1', method: 'GET', route: '/v1/isbn/:isbn', status: 200, at: Date.parse('2026-01-02T10:00:02Z'), latencyMs: 0.5 },
    ];
    await db.query('insert into usage_batches (first_at, last_at, records) values ($1, $2, $3)', [
      '2026-01-02T10:00:00.123456Z',
      '2026-01-02T10:00:02Z',
      JSON.stringify(calls),
    ]);
    t.deepEqual((await migrate(db)).slice(0, 1), ['005_usage_groups.sql']);
    const { rows } = await db.query(
      `select kid, method, route, status, to_char(at at time zone 'UTC', 'HH24:MI:SS.US') as at, latency_ms, batch_first_at, batch_last_at from usage order by at`,
    );
    const bounds = { batch_first_at: new Date('2026-01-02T10:00:00.123Z'), batch_last_at: new Date('2026-01-02T10:00:02Z') };
    t.deepEqual(rows, [
      { kid: 'k1', method: 'GET', route: '/v1/isbn/:isbn', status: 200, at: '10:00:00.123456', latency_ms: 1.25, ...bounds },
      { kid: 'k2', method: 'POST', route: '/mcp', status: 200, at: '10:00:01.000000', latency_ms: 3, ...bounds },
      { kid: 'k1', method: 'GET', route: '/v1/isbn/:isbn', status: 200, at: '10:00:02.000000', latency_ms: 0.5, ...bounds },
    ]);
    const { groups } = (await db.query<{ groups: number }>('select json_array_length(records) as groups from usage_batches')).rows[0]!;
    t.is(groups, 2);
  } finally {
    await drop();
  }
});

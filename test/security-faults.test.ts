import { Writable } from 'node:stream';
import test from 'ava';
import { pino } from 'pino';
import { createClient } from 'redis';
import type { Config } from '../src/config.js';
import { loggerOptions } from '../src/log.js';
import { startServer, type RunningServer } from '../src/server.js';
import { createWorld, newKey, type TestWorld } from './helpers/env.js';
import { eventually } from './helpers/eventually.js';
import { PostgresCluster, RedisProcess, TcpProxy } from './helpers/faults.js';

/**
 * The security findings that need a store to misbehave for real (issue 34): a Redis of the test's
 * own that refuses writes, and a proxy in front of the shared Elasticsearch that can be closed.
 */

let redis: RedisProcess;
let elastic: TcpProxy;
let world: TestWorld;
const servers: RunningServer[] = [];

interface LogLine {
  level: number;
  msg: string;
  store?: string;
  err?: { message: string };
}

async function startApi(overrides: Partial<Config> = {}): Promise<{ server: RunningServer; log: LogLine[] }> {
  const log: LogLine[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _encoding, done) {
      for (const line of chunk.toString().split('\n')) if (line) log.push(JSON.parse(line) as LogLine);
      done();
    },
  });
  const server = await startServer({ ...world.config, ...overrides }, pino(loggerOptions('info'), sink));
  servers.push(server);
  return { server, log };
}

/** A command on the test's own Redis, beside the server's connection. */
async function redisCommand(args: string[]): Promise<unknown> {
  const client = createClient({ url: redis.url });
  await client.connect();
  try {
    return await client.sendCommand(args);
  } finally {
    await client.quit();
  }
}

test.before(async () => {
  [redis, elastic] = await Promise.all([RedisProcess.start(), TcpProxy.start(process.env.ELASTICSEARCH_URL ?? 'http://127.0.0.1:9200')]);
  world = await createWorld({ REDIS_URL: redis.url, ELASTICSEARCH_URL: elastic.url });
});

test.after.always(async () => {
  await Promise.all(servers.map((server) => server.stop()));
  await world?.destroy().catch(() => undefined);
  await Promise.all([redis?.stop(), elastic?.close()]);
});

test.serial('a Redis that refuses writes (out of memory) leaves the rate limit counting in memory, never unlimited', async (t) => {
  const { server, log } = await startApi({ rateLimitMax: 5 });
  const { auth } = await newKey(world);
  await redisCommand(['CONFIG', 'SET', 'maxmemory-policy', 'noeviction']);
  await redisCommand(['CONFIG', 'SET', 'maxmemory', '1']);
  try {
    const statuses: number[] = [];
    for (let i = 0; i < 8; i++) {
      const response = await fetch(`${server.url}/v1/changes?since=0`, { headers: auth });
      await response.arrayBuffer();
      statuses.push(response.status);
    }
    t.deepEqual(statuses, [200, 200, 200, 200, 200, 429, 429, 429]);
    t.true(log.some((line) => line.msg === 'rate limiter failed; counting in memory' && /OOM/.test(line.err?.message ?? '')));
  } finally {
    await redisCommand(['CONFIG', 'SET', 'maxmemory', '0']);
  }
});

test.serial('/health says only up or down per store, and asks the stores at most once a second however often it is called', async (t) => {
  const { server, log } = await startApi();
  const { auth } = await newKey(world);
  const pings = async () => {
    const stats = String(await redisCommand(['INFO', 'commandstats']));
    return Number(/cmdstat_ping:calls=(\d+)/.exec(stats)?.[1] ?? 0);
  };
  const before = await pings();
  const started = performance.now();
  const answers = await Promise.all(Array.from({ length: 50 }, () => fetch(`${server.url}/health`).then((response) => response.json())));
  t.deepEqual(answers[0], {
    status: 'ok',
    checks: { postgres: { status: 'up' }, redis: { status: 'up' }, elasticsearch: { status: 'up' } },
    metering: { pending: 0, dropped: 0, failing: false },
  });
  const seconds = Math.floor((performance.now() - started) / 1_000);
  t.true((await pings()) - before <= 1 + seconds, `50 calls at once in ${seconds} s`);

  // Elasticsearch refuses connections and the usage table is away: the drivers' messages (addresses,
  // ports, table names) go to the log, never to the public answer.
  await elastic.close();
  await world.db.query('alter table usage_batches rename to usage_away');
  try {
    await (await fetch(`${server.url}/v1/changes?since=0`, { headers: auth })).arrayBuffer();
    t.true(await eventually(() => Promise.resolve(server.services.meter?.health().failing === true)));
    await new Promise((resolve) => setTimeout(resolve, 1_100));
    const response = await fetch(`${server.url}/health`);
    const text = await response.text();
    t.is(response.status, 503);
    t.deepEqual(JSON.parse(text), {
      status: 'degraded',
      checks: { postgres: { status: 'up' }, redis: { status: 'up' }, elasticsearch: { status: 'down' } },
      metering: { pending: 1, dropped: 0, failing: true },
    });
    t.notRegex(text, /127\.0\.0\.1|ECONNREFUSED|usage_batches|relation/);
    t.true(log.some((line) => /ECONNREFUSED/.test(JSON.stringify(line.err))));
  } finally {
    await world.db.query('alter table if exists usage_away rename to usage_batches');
    await elastic.open();
  }
});

test.serial(
  'while PostgreSQL is away, a known key keeps working only for KEY_OUTAGE_GRACE_S after PostgreSQL last confirmed it, then answers 503',
  async (t) => {
    const postgres = await PostgresCluster.create();
    const away = await createWorld({
      REDIS_URL: redis.url,
      ELASTICSEARCH_URL: elastic.url,
      DATABASE_URL: postgres.url('bookmeta_security'),
    });
    // Without metering, whose writes would wait for PostgreSQL on stop.
    const server = await startServer({ ...away.config, keyOutageGraceS: 4, meteringEnabled: false }, pino({ level: 'silent' }));
    try {
      const { auth } = await newKey(away);
      // An invalid ISBN is answered without any store once the key is checked: 400 while the key works.
      const call = async () => {
        const response = await fetch(`${server.url}/v1/isbn/123`, { headers: auth });
        return { status: response.status, body: (await response.json()) as { error: { code: string; message: string } } };
      };
      t.is((await call()).status, 400);
      const confirmedAt = Date.now();
      await postgres.stop();
      const until = (ms: number) => new Promise((resolve) => setTimeout(resolve, Math.max(0, confirmedAt + ms - Date.now())));
      await until(3_300);
      t.is((await call()).status, 400, 'past the age at which a key is read again, within the grace');
      await until(5_500);
      const after = await call();
      t.is(after.status, 503);
      t.regex(after.body.error.message, /^PostgreSQL is unavailable/);
    } finally {
      await server.stop();
      await away.destroy().catch(() => undefined);
      await postgres.destroy();
    }
  },
);

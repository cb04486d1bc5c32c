import type { TestFn } from 'ava';
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { loadConfig, type Config } from '../../src/config.js';
import { createLogger } from '../../src/log.js';
import { startServer, type RunningServer } from '../../src/server.js';
import { issueApiKey } from '../../src/services/apiKeys.js';
import { ensureDatabase, migrate } from '../../src/stores/postgres/migrate.js';
import { createPool, type Pool } from '../../src/stores/postgres/pool.js';
import { connectRedis, deleteKeysUnder, type Redis } from '../../src/stores/redis/client.js';
import { ResponseCache } from '../../src/stores/redis/responseCache.js';
import { patientFetch } from './client.js';

/**
 * One isolated world per test file: its own PostgreSQL database, Redis key prefix and
 * Elasticsearch index prefix, so ava can run files in parallel without them ever meeting.
 */
export interface TestWorld {
  name: string;
  config: Config;
  /** Environment for child processes (CLI, spawned servers) that must see the same world. */
  env: NodeJS.ProcessEnv;
  db: Pool;
  redis: Redis;
  cache: ResponseCache;
  /** Drops the database and the Redis keys of this world. */
  destroy(): Promise<void>;
}

const ADMIN_URL = process.env.TEST_DATABASE_ADMIN_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';

/** The wait a deployment has by default: a world given it answers 503 where production would. */
export const PRODUCTION_STORE_WAIT: NodeJS.ProcessEnv = { STORE_WAIT_MS: String(loadConfig({}).storeWaitMs) };

/**
 * Ten times the production wait, for worlds whose subject is neither the answers' speed nor the wait
 * and whose clients do not retry a 503 (each file says why it takes it).
 */
export const GENEROUS_STORE_WAIT: NodeJS.ProcessEnv = { STORE_WAIT_MS: '5000' };

export async function createWorld(overrides: NodeJS.ProcessEnv = {}): Promise<TestWorld> {
  const name = `t${randomBytes(5).toString('hex')}`;
  const databaseUrl = new URL(ADMIN_URL);
  databaseUrl.pathname = `/bookmeta_${name}`;
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    DATABASE_URL: databaseUrl.toString(),
    REDIS_PREFIX: `test:${name}:`,
    INDEX_PREFIX: `test-${name}-`,
    PORT: '0',
    LOG_LEVEL: process.env.TEST_LOG_LEVEL ?? 'silent',
    // Answers, not outages, are what most files test, through clients that do not retry: a loaded
    // 2-core machine running every file at once can keep a request past the production wait. The
    // search, match and lookup worlds run at the production wait with a client that retries a 503
    // (patientFetch), the fault tests too, their subject being the wait.
    STORE_WAIT_MS: process.env.STORE_WAIT_MS ?? GENEROUS_STORE_WAIT.STORE_WAIT_MS,
    ...overrides,
  };
  const config = loadConfig(env);
  await ensureDatabase(config.databaseUrl);
  const db = createPool(config.databaseUrl, 5);
  await migrate(db);
  const redis = await connectRedis(config.redisUrl);
  return {
    name,
    config,
    env,
    db,
    redis,
    cache: new ResponseCache(redis, config.redisPrefix),
    async destroy() {
      await db.end();
      await deleteKeysUnder(redis, config.redisPrefix);
      await redis.quit();
      await dropDatabase(databaseUrl.toString());
    },
  };
}

/** Drops the database the URL names, connections and all. */
/**
 * A scratch database of the world's server as the release that ended with migration `last` left it,
 * for tests of the migrations after it; `drop` ends its pool and drops it.
 */
export async function databaseAtRelease(world: TestWorld, last: string): Promise<{ db: Pool; url: string; drop: () => Promise<void> }> {
  const url = new URL(world.config.databaseUrl);
  url.pathname = `/bookmeta_m${randomBytes(5).toString('hex')}`;
  await ensureDatabase(url.toString());
  const db = createPool(url.toString(), 2);
  await migrate(db, { upTo: last });
  return {
    db,
    url: url.toString(),
    drop: async () => {
      await db.end();
      await dropDatabase(url.toString());
    },
  };
}

export async function dropDatabase(databaseUrl: string): Promise<void> {
  const admin = new pg.Client({ connectionString: ADMIN_URL });
  await admin.connect();
  try {
    await admin.query(
      `drop database if exists ${pg.escapeIdentifier(decodeURIComponent(new URL(databaseUrl).pathname.slice(1)))} with (force)`,
    );
  } finally {
    await admin.end();
  }
}

/** An API server inside the test process, on a free port. */
export async function startTestServer(world: TestWorld, overrides: Partial<Config> = {}): Promise<RunningServer> {
  return startServer({ ...world.config, ...overrides }, createLogger(world.config.logLevel));
}

export async function newKey(world: TestWorld, name = 'test'): Promise<{ kid: string; key: string; auth: { Authorization: string } }> {
  const { kid, key } = await issueApiKey(world.db, name);
  return { kid, key, auth: { Authorization: `Bearer ${key}` } };
}

/** A world with an API server and a key, set up once for a test file: the usual start of an HTTP test. */
export interface ApiFixture {
  world: TestWorld;
  server: RunningServer;
  kid: string;
  key: string;
  auth: { Authorization: string };
  /** GET (or any method with `init`) on the server with the key; redirects are returned, not followed. */
  get(path: string, init?: RequestInit): Promise<Response>;
}

export function useApi(
  test: TestFn,
  options: {
    env?: NodeJS.ProcessEnv;
    server?: Partial<Config>;
    prepare?: (world: TestWorld) => Promise<void>;
    /** The production store wait, asked by a client that retries a 503 (patientFetch). */
    productionWait?: boolean;
  } = {},
): ApiFixture {
  const fixture = {} as ApiFixture;
  const ask = options.productionWait ? patientFetch() : fetch;
  test.before(async () => {
    fixture.world = await createWorld({ ...options.env, ...(options.productionWait ? PRODUCTION_STORE_WAIT : {}) });
    await options.prepare?.(fixture.world);
    fixture.server = await startTestServer(fixture.world, options.server);
    Object.assign(fixture, await newKey(fixture.world));
    fixture.get = (path, init = {}) =>
      ask(`${fixture.server.url}${path}`, {
        redirect: 'manual',
        ...init,
        headers: { ...fixture.auth, ...(init.headers as Record<string, string>) },
      });
  });
  test.after.always(async () => {
    await fixture.server?.stop();
    await fixture.world?.destroy();
  });
  return fixture;
}

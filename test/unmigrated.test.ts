import { randomBytes } from 'node:crypto';
import { readdir } from 'node:fs/promises';
import test from 'ava';
import { projectPath } from '../src/paths.js';
import { issueApiKey } from '../src/services/apiKeys.js';
import { createPool } from '../src/stores/postgres/pool.js';
import { deleteKeysUnder, connectRedis } from '../src/stores/redis/client.js';
import { dropDatabase } from './helpers/env.js';
import { runCli, spawnServer } from './helpers/processes.js';

/** `bookmeta migrate` and `bookmeta serve` pointed at a database that does not exist yet. */

const ADMIN_URL = process.env.TEST_DATABASE_ADMIN_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const name = `u${randomBytes(5).toString('hex')}`;

/** The environment of a deployment whose database has never been created. */
function freshEnv(database: string): NodeJS.ProcessEnv {
  const url = new URL(ADMIN_URL);
  url.pathname = `/bookmeta_${database}`;
  return {
    ...process.env,
    DATABASE_URL: url.toString(),
    REDIS_PREFIX: `test:${name}:`,
    INDEX_PREFIX: `test-${name}-`,
    LOG_LEVEL: 'silent',
  };
}

const created: string[] = [];
test.after.always(async () => {
  await Promise.all(created.map((url) => dropDatabase(url)));
  const redis = await connectRedis(process.env.REDIS_URL || 'redis://127.0.0.1:6379');
  await deleteKeysUnder(redis, `test:${name}:`);
  await redis.quit();
});

/** The migrations applied to the database at `url`, in order, with when each was applied. */
async function applied(url: string): Promise<{ version: string; applied_at: Date }[]> {
  const db = createPool(url, 1);
  try {
    return (await db.query<{ version: string; applied_at: Date }>('select version, applied_at from schema_migrations order by version'))
      .rows;
  } finally {
    await db.end();
  }
}

test('bookmeta migrate creates a database that does not exist and applies every migration; run again, it applies none', async (t) => {
  const env = freshEnv(`${name}m`);
  created.push(env.DATABASE_URL!);
  const first = await runCli(env, ['migrate']);
  t.is(first.code, 0, first.stderr);
  t.is(first.stdout.trim(), 'database is up to date');
  const migrations = (await readdir(projectPath('src', 'stores', 'postgres', 'migrations'))).filter((file) => file.endsWith('.sql')).sort();
  const afterFirst = await applied(env.DATABASE_URL!);
  t.deepEqual(
    afterFirst.map((row) => row.version),
    migrations,
  );
  const second = await runCli(env, ['migrate']);
  t.is(second.code, 0, second.stderr);
  t.deepEqual(await applied(env.DATABASE_URL!), afterFirst, 'nothing applied again');
});

test('bookmeta serve on a database that does not exist creates and migrates it, then answers with a key issued there', async (t) => {
  const env = freshEnv(`${name}s`);
  created.push(env.DATABASE_URL!);
  const server = await spawnServer(env);
  try {
    const db = createPool(env.DATABASE_URL!, 1);
    const { key } = await issueApiKey(db, 'fresh').finally(() => db.end());
    const response = await fetch(`${server.url}/v1/isbn/9780306406157`, { headers: { Authorization: `Bearer ${key}` } });
    t.is(response.status, 404, await response.clone().text());
    t.deepEqual(await response.json(), { error: { code: 'not_found', message: 'no book with ISBN 9780306406157' } });
  } finally {
    server.child.kill('SIGTERM');
  }
  t.is(await server.exited, 0);
});

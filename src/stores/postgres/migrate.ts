import { readdir, readFile } from 'node:fs/promises';
import pg from 'pg';
import { projectPath } from '../../paths.js';
import { type Pool, withTransaction } from './pool.js';

const MIGRATIONS_DIR = projectPath('src', 'stores', 'postgres', 'migrations');
// Any constant works; it only has to be the same for every process that migrates.
const MIGRATION_LOCK = 7_340_001;

/** Creates the database named by the URL when it does not exist yet, so a fresh machine needs no manual step. */
export async function ensureDatabase(databaseUrl: string): Promise<void> {
  const url = new URL(databaseUrl);
  const name = decodeURIComponent(url.pathname.slice(1));
  url.pathname = '/postgres';
  const admin = new pg.Client({ connectionString: url.toString() });
  await admin.connect();
  try {
    const { rowCount } = await admin.query('select 1 from pg_database where datname = $1', [name]);
    if (rowCount === 0) {
      await admin.query(`create database ${pg.escapeIdentifier(name)}`).catch((error: { code?: string }) => {
        if (error.code !== '42P04') throw error; // created meanwhile by another process
      });
    }
  } finally {
    await admin.end();
  }
}

/**
 * Applies the numbered SQL files not yet applied, in order, in one transaction. Returns their names.
 * `upTo` stops after the named file, leaving the database as the release that ended with it did.
 */
export async function migrate(pool: Pool, { upTo }: { upTo?: string } = {}): Promise<string[]> {
  const files = (await readdir(MIGRATIONS_DIR)).filter((file) => /^\d+_.+\.sql$/.test(file) && (upTo === undefined || file <= upTo)).sort();
  return withTransaction(pool, async (client) => {
    // One migrator at a time: several API instances may start together.
    await client.query('select pg_advisory_xact_lock($1)', [MIGRATION_LOCK]);
    await client.query(`create table if not exists schema_migrations (
      version text primary key, applied_at timestamptz not null default now())`);
    const { rows } = await client.query<{ version: string }>('select version from schema_migrations');
    const applied = new Set(rows.map((row) => row.version));
    const pending = files.filter((file) => !applied.has(file));
    for (const file of pending) {
      await client.query(await readFile(`${MIGRATIONS_DIR}/${file}`, 'utf8'));
      await client.query('insert into schema_migrations (version) values ($1)', [file]);
    }
    return pending;
  });
}

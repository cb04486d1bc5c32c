// What the Open Library import benchmarks share: databases of their own on the server DATABASE_URL
// names, `bookmeta import openlibrary` run as an operator runs it, and what it costs.

import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import pg from 'pg';

import { projectPath } from '../../src/paths.js';
import { ensureDatabase, migrate } from '../../src/stores/postgres/migrate.js';
import { createPool } from '../../src/stores/postgres/pool.js';
import { runMeasured } from './bench.js';

export const serverUrl = new URL(process.env.DATABASE_URL || 'postgres://postgres@127.0.0.1:5432/bookmeta');

export const urlOf = (name: string): string => {
  const url = new URL(serverUrl);
  url.pathname = `/${name}`;
  return url.toString();
};

export async function run(
  command: string,
  args: string[],
  env: NodeJS.ProcessEnv = process.env,
): Promise<{ seconds: number; stdout: string; peakRssMb: number }> {
  const outcome = await runMeasured(command, args, env);
  if (outcome.code !== 0) throw new Error(`${command} ${args.join(' ')} exited with ${outcome.code}: ${outcome.stdout}`);
  return outcome;
}

async function admin<T>(work: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: new URL('/postgres', serverUrl).toString() });
  await client.connect();
  try {
    return await work(client);
  } finally {
    await client.end();
  }
}

export async function dropDatabase(name: string): Promise<void> {
  await admin((client) => client.query(`drop database if exists ${pg.escapeIdentifier(name)} with (force)`));
}

export async function freshDatabase(name: string): Promise<string> {
  await dropDatabase(name);
  await ensureDatabase(urlOf(name));
  const db = createPool(urlOf(name), 1);
  await migrate(db);
  await db.end();
  return urlOf(name);
}

/** A copy of a database (nobody may be connected to it meanwhile). */
export async function copyDatabase(from: string, name: string): Promise<string> {
  await dropDatabase(name);
  await admin((client) => client.query(`create database ${pg.escapeIdentifier(name)} template ${pg.escapeIdentifier(from)}`));
  return urlOf(name);
}

export const cli = existsSync(projectPath('dist', 'loader', 'cli.js'))
  ? [projectPath('dist', 'loader', 'cli.js')]
  : ['--import', 'tsx', projectPath('loader', 'cli.ts')];
export const loadAverage = async (): Promise<string> => (await readFile('/proc/loadavg', 'utf8')).split(' ').slice(0, 3).join(' ');

/**
 * Sampled every 200 ms until `done` settles: the largest private memory (RssAnon) of any PostgreSQL
 * backend of the database, and the most disk the database took (its files, temporary tables
 * included, and the server's temporary files: sorts and spills, of every database).
 */
export async function peaksOfDatabase(databaseName: string, done: Promise<unknown>): Promise<{ backendMb: number; diskBytes: number }> {
  const pool = createPool(new URL('/postgres', serverUrl).toString(), 1);
  let peakKb = 0;
  let diskBytes = 0;
  let finished = false;
  void done.finally(() => (finished = true));
  try {
    while (!finished) {
      const { rows } = await pool.query<{ pid: number }>(
        "select pid from pg_stat_activity where datname = $1 and backend_type = 'client backend'",
        [databaseName],
      );
      for (const { pid } of rows) {
        const status = await readFile(`/proc/${pid}/status`, 'utf8').catch(() => '');
        const kb = Number(/RssAnon:\s+(\d+)/.exec(status)?.[1] ?? 0);
        peakKb = Math.max(peakKb, kb);
      }
      const { rows: disk } = await pool.query<{ bytes: number }>(
        'select pg_database_size($1) + coalesce((select sum(size) from pg_ls_tmpdir()), 0) as bytes',
        [databaseName],
      );
      diskBytes = Math.max(diskBytes, disk[0]!.bytes);
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
  } finally {
    await pool.end();
  }
  return { backendMb: peakKb / 1024, diskBytes };
}

export interface ImportRun {
  method: string;
  records: number;
  editions: number;
  /** The report's lines, one per file. */
  report: string[];
  seconds: number;
  peakRssMb: number;
  backendMb: number;
  /** The most disk the database and the server's temporary files took during the import. */
  peakDiskBytes: number;
  loadBefore: string;
  loadAfter: string;
}

const readCount = (stdout: string): number => [...stdout.matchAll(/: read (\d+) rows/g)].reduce((sum, match) => sum + Number(match[1]), 0);

/** `bookmeta import openlibrary --method METHOD FILES` into the database `name`, in a process of its own, measured. */
export async function importRun(
  name: string,
  method: 'set-based' | 'record-by-record',
  files: readonly string[],
  batchSize: string,
  say: (text: string) => void,
): Promise<ImportRun> {
  const loadBefore = await loadAverage();
  say(`${method}: importing into ${name} (load ${loadBefore})`);
  const importing = run(process.execPath, [...cli, 'import', 'openlibrary', '--method', method, '--batch-size', batchSize, ...files], {
    ...process.env,
    DATABASE_URL: urlOf(name),
    LOG_LEVEL: 'warn',
  });
  const [outcome, { backendMb, diskBytes }] = await Promise.all([importing, peaksOfDatabase(name, importing)]);
  const editionLines = /ol_dump_editions\.txt: read (\d+) rows/.exec(outcome.stdout);
  const report = outcome.stdout.split('\n').filter((line) => line.includes(': read '));
  const result = {
    method,
    records: readCount(outcome.stdout),
    editions: Number(editionLines?.[1] ?? 0),
    report,
    seconds: outcome.seconds,
    peakRssMb: outcome.peakRssMb,
    backendMb,
    peakDiskBytes: diskBytes,
    loadBefore,
    loadAfter: await loadAverage(),
  };
  say(`${method}: ${result.records} records in ${result.seconds.toFixed(1)} s (load ${result.loadAfter})`);
  return result;
}

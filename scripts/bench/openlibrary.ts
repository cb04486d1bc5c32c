// Open Library import at scale: `bookmeta import openlibrary` against a plain COPY of the same lines
// into an unindexed table (the physical floor of getting the bytes into PostgreSQL), in one run; then
// what the imported catalogue costs on disk and how fast its point lookups and change feed answer.
//
//   node --import tsx scripts/bench/openlibrary.ts [--editions 1000000] [--seed 42] [--work-dir /var/tmp/bookmeta-bench] [--batch-size 2000]
//
// 1. Generates the dumps with scripts/dev/generate-openlibrary.ts (kept in the work dir for the next run).
// 2. A fresh database bookmeta_bench_ol_<N>_<seed>. Baseline: psql \copy of every line of the three
//    files into an unindexed table of one text column; lines/s. The table is dropped afterwards.
// 3. `bookmeta import openlibrary` as an operator runs it, in its own process: authors and works,
//    then the editions file alone; records/s of all three and editions/s, peak RSS (VmHWM).
// 4. Disk per edition in PostgreSQL: every catalogue table with its indexes, after VACUUM ANALYZE.
// 5. One at a time, after a warm-up: uncached point lookups of random books (GET /v1/books/:id's read,
//    PointReads) p50/p99, and a page of 100 changes from a random cursor (GET /v1/changes's read) p95.
// The database stays for `scripts/bench/reindex.ts --database` and `scripts/bench/search.ts --database`.
// Honours DATABASE_URL (its server; the database name is replaced).

import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import pg from 'pg';

import { projectPath } from '../../src/paths.js';
import { readChanges } from '../../src/stores/postgres/changes.js';
import { ensureDatabase, migrate } from '../../src/stores/postgres/migrate.js';
import { PointReads } from '../../src/stores/postgres/pointReads.js';
import { createPool } from '../../src/stores/postgres/pool.js';
import { generateOpenLibrary } from '../dev/generate-openlibrary.js';
import { runMeasured, timedSequentially } from '../lib/bench.js';
import { percentile } from '../lib/percentile.js';

const { values } = parseArgs({
  options: {
    editions: { type: 'string', default: '1000000' },
    seed: { type: 'string', default: '42' },
    'work-dir': { type: 'string', default: '/var/tmp/bookmeta-bench' },
    'batch-size': { type: 'string', default: '2000' },
  },
});
const editions = Number(values.editions);
const seed = Number(values.seed);
const say = (text: string) => process.stderr.write(`bench-openlibrary: ${text}\n`);

const serverUrl = new URL(process.env.DATABASE_URL || 'postgres://postgres@127.0.0.1:5432/bookmeta');
const databaseName = `bookmeta_bench_ol_${editions}_${seed}`;
const databaseUrl = new URL(serverUrl);
databaseUrl.pathname = `/${databaseName}`;
const dumpDir = join(values['work-dir']!, `openlibrary-${editions}-${seed}`);
const files = { authors: join(dumpDir, 'ol_dump_authors.txt'), works: join(dumpDir, 'ol_dump_works.txt'), editions: join(dumpDir, 'ol_dump_editions.txt') };

async function run(command: string, args: string[], env: NodeJS.ProcessEnv = process.env): Promise<{ seconds: number; stdout: string; peakRssMb: number }> {
  const outcome = await runMeasured(command, args, env);
  if (outcome.code !== 0) throw new Error(`${command} ${args.join(' ')} exited with ${outcome.code}: ${outcome.stdout}`);
  return outcome;
}

async function freshDatabase(): Promise<void> {
  const admin = new pg.Client({ connectionString: new URL('/postgres', serverUrl).toString() });
  await admin.connect();
  await admin.query(`drop database if exists ${pg.escapeIdentifier(databaseName)} with (force)`);
  await admin.end();
  await ensureDatabase(databaseUrl.toString());
  const db = createPool(databaseUrl.toString(), 1);
  await migrate(db);
  await db.end();
}

/** The baseline: every line of the three files copied as one text column into a table without indexes. */
async function copyBaseline(): Promise<{ lines: number; seconds: number }> {
  const psql = (sql: string) => run('psql', ['-X', '-q', '-d', databaseUrl.toString(), '-c', sql]);
  await psql('create table bench_lines (line text)');
  let seconds = 0;
  for (const path of Object.values(files)) {
    // CSV with separators that never occur in a dump line: each line is one value, taken as is.
    seconds += (await psql(`\\copy bench_lines (line) from '${path}' with (format csv, delimiter E'\\x1f', quote E'\\x1e')`)).seconds;
  }
  const db = createPool(databaseUrl.toString(), 1);
  const { rows } = await db.query<{ n: number }>('select count(*)::bigint as n from bench_lines');
  await db.query('drop table bench_lines');
  await db.end();
  return { lines: rows[0]!.n, seconds };
}

const cli = existsSync(projectPath('dist', 'loader', 'cli.js')) ? [projectPath('dist', 'loader', 'cli.js')] : ['--import', 'tsx', projectPath('loader', 'cli.ts')];
const importFiles = (paths: string[]) =>
  run(process.execPath, [...cli, 'import', 'openlibrary', '--no-progress', '--batch-size', values['batch-size']!, ...paths], { ...process.env, DATABASE_URL: databaseUrl.toString(), LOG_LEVEL: 'warn' });

const readCount = (stdout: string): number => [...stdout.matchAll(/: read (\d+) rows/g)].reduce((sum, match) => sum + Number(match[1]), 0);

async function diskPerEdition(): Promise<{ bytes: number; editions: number; tables: string }> {
  const db = createPool(databaseUrl.toString(), 1);
  try {
    await db.query('vacuum analyze');
    const tables = ['books', 'works', 'authors', 'author_names', 'book_authors', 'external_ids', 'openlibrary_records', 'changes'];
    const { rows } = await db.query<{ relname: string; bytes: number }>(
      'select relname, pg_total_relation_size(oid)::bigint as bytes from pg_class where relname = any($1) and relkind = $2 order by bytes desc',
      [tables, 'r'],
    );
    const { rows: count } = await db.query<{ n: number }>('select count(*)::bigint as n from books where merged_into is null and deleted_at is null');
    const bytes = rows.reduce((sum, row) => sum + row.bytes, 0);
    return { bytes, editions: count[0]!.n, tables: rows.map((row) => `${row.relname} ${(row.bytes / 2 ** 20).toFixed(0)} MB`).join(', ') };
  } finally {
    await db.end();
  }
}

async function latencies(): Promise<{ lookup: number[]; changes: number[] }> {
  const db = createPool(databaseUrl.toString(), 2);
  try {
    const { rows } = await db.query<{ id: string }>('select id from books tablesample system (1) repeatable ($1) limit 2000', [seed]);
    const ids = rows.map((row) => row.id);
    const { rows: last } = await db.query<{ seq: number }>('select max(seq)::bigint as seq from changes');
    const reads = new PointReads(db);
    const warm = Math.min(200, Math.floor(ids.length / 2));
    await timedSequentially(ids.slice(0, warm).map((id) => () => reads.book(id)));
    const lookup = await timedSequentially(ids.slice(warm).map((id) => () => reads.book(id)));
    // Cursors spread evenly over the feed, in a scattered order.
    const cursors = Array.from({ length: 1000 }, (_, index) => Math.floor((((index * 7919) % 1000) / 1000) * last[0]!.seq));
    const changes = await timedSequentially(cursors.map((since) => () => readChanges(db, since, 100)));
    return { lookup, changes };
  } finally {
    await db.end();
  }
}

say(`generating ${editions} editions (seed ${seed}) into ${dumpDir}`);
if (!existsSync(files.editions)) await generateOpenLibrary({ editions, seed }, dumpDir);
await freshDatabase();
say('baseline: COPY of the same lines into an unindexed table');
const copy = await copyBaseline();
say(`baseline: ${copy.lines} lines in ${copy.seconds.toFixed(1)} s; now bookmeta import openlibrary (authors and works, then editions)`);
const first = await importFiles([files.authors, files.works]);
say(`authors and works: ${readCount(first.stdout)} records in ${first.seconds.toFixed(1)} s`);
const second = await importFiles([files.editions]);
const records = readCount(first.stdout) + readCount(second.stdout);
const importSeconds = first.seconds + second.seconds;
const copyRate = copy.lines / copy.seconds;
const importRate = records / importSeconds;
const disk = await diskPerEdition();
const { lookup, changes } = await latencies();
console.log(`open library dumps:          ${editions} editions, ${records} lines (seed ${seed})`);
console.log(`baseline COPY (unindexed):   ${Math.round(copyRate)} lines/s (${copy.seconds.toFixed(1)} s)`);
console.log(`bookmeta import openlibrary: ${Math.round(importRate)} records/s (${importSeconds.toFixed(1)} s); ratio ${(importRate / copyRate).toFixed(3)} (target >= 0.25)`);
console.log(`  editions file alone:       ${Math.round(readCount(second.stdout) / second.seconds)} editions/s (target >= 10,000); peak RSS ${Math.max(first.peakRssMb, second.peakRssMb).toFixed(0)} MB (target < 500)`);
console.log(`  projection at 10,000,000 editions (same rate): ${((10_000_000 / editions) * importSeconds / 3600).toFixed(1)} h`);
console.log(`PostgreSQL on disk:          ${(disk.bytes / 2 ** 30).toFixed(2)} GB for ${disk.editions} live books, ${Math.round(disk.bytes / disk.editions)} bytes per edition (${disk.tables})`);
console.log(`uncached point lookup:       p50 ${percentile(lookup, 50).toFixed(2)} ms, p99 ${percentile(lookup, 99).toFixed(2)} ms (n=${lookup.length}; target p99 < 10 ms)`);
console.log(`changes page of 100:         p50 ${percentile(changes, 50).toFixed(2)} ms, p95 ${percentile(changes, 95).toFixed(2)} ms (n=${changes.length}; target p95 < 50 ms)`);
console.log(`database kept: ${databaseName} (for scripts/bench/reindex.ts --database ${databaseName} and scripts/bench/search.ts --database ${databaseName})`);

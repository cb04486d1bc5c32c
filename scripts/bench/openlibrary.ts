// Open Library import at scale, both ways over the same files in one run: the set-based first load
// and the record-by-record path (`bookmeta import openlibrary --method ...`), each into a fresh
// database, against a hand-written SQL load of the same files into the same tables (and the plain
// COPY of their lines it starts with: the physical floor of getting the bytes into PostgreSQL); then
// what the imported catalogue costs on disk and how fast its point lookups and change feed answer.
//
//   node --import tsx scripts/bench/openlibrary.ts [--editions 1000000] [--seed 42] [--work-dir /var/tmp/bookmeta-bench]
//     [--batch-size 2000] [--keep] [--bracket] [--set-based-only] [--no-baselines]
//
// 1. Generates the dumps with scripts/dev/generate-openlibrary.ts.
// 2. Baselines: psql \copy of every line of the three files into an unindexed table of one text column
//    (lines/s), then openlibrary-by-hand.sql over them (editions/s, peak disk), in a database of their own.
//    With --no-baselines, neither (at 10 M editions the hand-written load alone takes most of an hour).
// 3. Set-based, then record by record (with --bracket, set-based again after it, against the
//    machine's load changing meanwhile), each `bookmeta import openlibrary` of all three files in
//    its own process into its own fresh database (with --set-based-only, the set-based load alone:
//    at 10 M editions the record-by-record path takes hours): editions/s, the importer's peak RSS (VmHWM), the
//    PostgreSQL backends' peak private memory (RssAnon) and the peak disk of the database and the
//    server's temporary files (both sampled every 200 ms), and the load average.
// 4. Disk per edition in PostgreSQL, per table with its indexes, after VACUUM ANALYZE.
// 5. One at a time, after a warm-up: uncached point lookups of random books (GET /v1/books/:id's read,
//    PointReads) p50/p99, and a page of 100 changes from a random cursor (GET /v1/changes's read) p95.
// The databases are dropped and the dumps deleted at the end, unless --keep (then the set-based
// database stays for `scripts/bench/reindex.ts --database` and `scripts/bench/search.ts --database`).
// Honours DATABASE_URL (its server; the database name is replaced).

import { existsSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { parseArgs } from 'node:util';

import { readChanges } from '../../src/stores/postgres/changes.js';
import { PointReads } from '../../src/stores/postgres/pointReads.js';
import { createPool, REQUEST_PATH_PLANS } from '../../src/stores/postgres/pool.js';
import { generateOpenLibrary } from '../dev/generate-openlibrary.js';
import { timedSequentially } from '../lib/bench.js';
import {
  dropDatabase,
  freshDatabase,
  importRun,
  loadAverage,
  peaksOfDatabase,
  run,
  urlOf,
  type ImportRun,
} from '../lib/openlibraryImport.js';
import { percentile } from '../lib/percentile.js';

const { values } = parseArgs({
  options: {
    editions: { type: 'string', default: '1000000' },
    seed: { type: 'string', default: '42' },
    'work-dir': { type: 'string', default: '/var/tmp/bookmeta-bench' },
    'batch-size': { type: 'string', default: '2000' },
    keep: { type: 'boolean', default: false },
    bracket: { type: 'boolean', default: false },
    'set-based-only': { type: 'boolean', default: false },
    'no-baselines': { type: 'boolean', default: false },
  },
});
const editions = Number(values.editions);
const seed = Number(values.seed);
const say = (text: string) => process.stderr.write(`bench-openlibrary: ${text}\n`);

const databaseNameOf = (run: string) => `bookmeta_bench_ol_${editions}_${seed}_${run}`;
const dumpDir = join(values['work-dir'], `openlibrary-${editions}-${seed}`);
const files = {
  authors: join(dumpDir, 'ol_dump_authors.txt'),
  works: join(dumpDir, 'ol_dump_works.txt'),
  editions: join(dumpDir, 'ol_dump_editions.txt'),
};

/**
 * The baselines, in a fresh database of their own: every line of the three files copied as one text
 * column into a table without indexes (the physical floor of getting the bytes into PostgreSQL), then
 * a hand-written SQL load of those lines into the catalogue tables (openlibrary-by-hand.sql).
 */
async function handWrittenLoad(
  name: string,
): Promise<{ lines: number; copySeconds: number; sqlSeconds: number; editions: number; peakDiskBytes: number; load: string }> {
  const databaseUrl = await freshDatabase(name);
  const psql = (...args: string[]) => run('psql', ['-X', '-q', '-d', databaseUrl, ...args]);
  const load = await loadAverage();
  const loading = (async () => {
    await psql('-c', 'create table bench_lines (line text)');
    let copySeconds = 0;
    for (const path of Object.values(files)) {
      // CSV with separators that never occur in a dump line: each line is one value, taken as is.
      copySeconds += (await psql('-c', `\\copy bench_lines (line) from '${path}' with (format csv, delimiter E'\\x1f', quote E'\\x1e')`))
        .seconds;
    }
    const db = createPool(databaseUrl, 1);
    const { rows } = await db.query<{ n: number }>('select count(*)::bigint as n from bench_lines');
    const sqlSeconds = (await psql('-f', join(import.meta.dirname, 'openlibrary-by-hand.sql'))).seconds;
    const { rows: books } = await db.query<{ n: number }>('select count(*)::bigint as n from books');
    await db.query('drop table bench_lines');
    await db.end();
    return { lines: rows[0]!.n, copySeconds, sqlSeconds, editions: books[0]!.n };
  })();
  const [loaded, { diskBytes }] = await Promise.all([loading, peaksOfDatabase(name, loading)]);
  return { ...loaded, peakDiskBytes: diskBytes, load: `${load} -> ${await loadAverage()}` };
}

/** `bookmeta import openlibrary` of all three files, as an operator runs it, into a fresh database of its own. */
async function importFresh(method: 'set-based' | 'record-by-record', name: string): Promise<ImportRun> {
  await freshDatabase(name);
  return importRun(name, method, [files.authors, files.works, files.editions], values['batch-size'], say);
}

async function diskPerEdition(databaseUrl: string): Promise<{ bytes: number; editions: number; tables: string }> {
  const db = createPool(databaseUrl, 1);
  try {
    await db.query('vacuum analyze');
    const tables = ['books', 'works', 'authors', 'author_names', 'book_authors', 'external_ids', 'openlibrary_records', 'changes'];
    const { rows } = await db.query<{ relname: string; bytes: number }>(
      'select relname, pg_total_relation_size(oid)::bigint as bytes from pg_class where relname = any($1) and relkind = $2 order by bytes desc',
      [tables, 'r'],
    );
    const { rows: count } = await db.query<{ n: number }>(
      'select count(*)::bigint as n from books where merged_into is null and deleted_at is null',
    );
    const bytes = rows.reduce((sum, row) => sum + row.bytes, 0);
    return { bytes, editions: count[0]!.n, tables: rows.map((row) => `${row.relname} ${(row.bytes / 2 ** 20).toFixed(0)} MB`).join(', ') };
  } finally {
    await db.end();
  }
}

async function latencies(databaseUrl: string): Promise<{ lookup: number[]; changes: number[] }> {
  const db = createPool(databaseUrl, 2, REQUEST_PATH_PLANS);
  try {
    const { rows } = await db.query<{ id: string }>(
      'select public_id(id) as id from books tablesample system (1) repeatable ($1) limit 2000',
      [seed],
    );
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

async function baselines() {
  say('baselines: COPY of the same lines into an unindexed table, then a hand-written SQL load of them');
  const byHand = await handWrittenLoad(names.byHand);
  const seconds = byHand.copySeconds + byHand.sqlSeconds;
  say(`baselines: ${byHand.lines} lines copied in ${byHand.copySeconds.toFixed(1)} s, loaded by hand in ${seconds.toFixed(1)} s`);
  return { ...byHand, seconds };
}

say(`generating ${editions} editions (seed ${seed}) into ${dumpDir}`);
if (!existsSync(files.editions)) await generateOpenLibrary({ editions, seed }, dumpDir);
const names = {
  set: databaseNameOf('set'),
  record: databaseNameOf('record'),
  again: databaseNameOf('set_again'),
  byHand: databaseNameOf('by_hand'),
};
try {
  const byHand = values['no-baselines'] ? undefined : await baselines();
  const runs = [await importFresh('set-based', names.set)];
  if (!values['set-based-only']) runs.push(await importFresh('record-by-record', names.record));
  if (values.bracket) runs.push(await importFresh('set-based', names.again));
  const disk = await diskPerEdition(urlOf(names.set));
  const { lookup, changes } = await latencies(urlOf(names.set));
  const gb = (bytes: number) => `${(bytes / 2 ** 30).toFixed(2)} GB`;
  console.log(`open library dumps:          ${editions} editions (seed ${seed})`);
  if (byHand) {
    console.log(
      `baseline COPY (unindexed):   ${Math.round(byHand.lines / byHand.copySeconds)} lines/s (${byHand.copySeconds.toFixed(1)} s), ${byHand.lines} lines`,
    );
    console.log(
      `baseline hand-written SQL:   ${byHand.seconds.toFixed(1)} s (COPY, then SQL ${byHand.sqlSeconds.toFixed(1)} s): ${Math.round(editions / byHand.seconds)} editions/s, ` +
        `${byHand.editions} books; peak disk ${gb(byHand.peakDiskBytes)}; load ${byHand.load}`,
    );
  }
  for (const result of runs) {
    console.log(
      `import --method ${result.method.padEnd(16)} ${result.seconds.toFixed(1)} s: ${Math.round(result.editions / result.seconds)} editions/s (target >= 10,000), ${Math.round(result.records / result.seconds)} records/s, ` +
        `${byHand ? `ratio to the hand-written SQL load ${(byHand.seconds / result.seconds).toFixed(2)}; ` : ''}importer peak RSS ${result.peakRssMb.toFixed(0)} MB (target < 500), ` +
        `PostgreSQL backend peak private ${result.backendMb.toFixed(0)} MB; peak disk ${gb(result.peakDiskBytes)}; load ${result.loadBefore} -> ${result.loadAfter}`,
    );
  }
  const record = runs.find((result) => result.method === 'record-by-record');
  const sets = runs.filter((result) => result.method === 'set-based');
  if (record)
    console.log(
      `set-based against record-by-record: ${sets.map((set) => `${(record.seconds / set.seconds).toFixed(2)}x`).join(' and ')} faster`,
    );
  console.log(
    `  projection at 10,000,000 editions (same rate, set-based): ${(((10_000_000 / editions) * Math.max(...sets.map((set) => set.seconds))) / 60).toFixed(0)} min`,
  );
  console.log(
    `PostgreSQL on disk:          ${(disk.bytes / 2 ** 30).toFixed(2)} GB for ${disk.editions} live books, ${Math.round(disk.bytes / disk.editions)} bytes per edition (${disk.tables})`,
  );
  console.log(
    `uncached point lookup:       p50 ${percentile(lookup, 50).toFixed(2)} ms, p99 ${percentile(lookup, 99).toFixed(2)} ms (n=${lookup.length}; target p99 < 10 ms)`,
  );
  console.log(
    `changes page of 100:         p50 ${percentile(changes, 50).toFixed(2)} ms, p95 ${percentile(changes, 95).toFixed(2)} ms (n=${changes.length}; target p95 < 50 ms)`,
  );
} finally {
  await dropDatabase(names.record);
  await dropDatabase(names.again);
  await dropDatabase(names.byHand);
  if (values.keep)
    console.log(
      `database kept: ${names.set} (for scripts/bench/reindex.ts --database ${names.set} and scripts/bench/search.ts --database ${names.set}); dumps kept in ${dumpDir}`,
    );
  else {
    await dropDatabase(names.set);
    await rm(dumpDir, { recursive: true, force: true });
  }
}

import { stat } from 'node:fs/promises';
import { availableParallelism } from 'node:os';
import type { OlRecord } from '../../../src/domain/openlibrary.js';
import type { PoolClient } from '../../../src/stores/postgres/pool.js';
import { createProgress } from '../../index/progress.js';
import { indexAside, setAside, swapIn } from '../../stores/postgres/catalogueAside.js';
import {
  analyzeCatalogue,
  beginFirstLoad,
  CATALOGUE_TABLES,
  claimFirstLoad,
  emptyStaging,
  keepNewest,
  recordInserts,
  resolveReferences,
  routeIsbnsTaken,
  stageRecords,
  writeCatalogue,
} from '../../stores/postgres/openlibraryFirstLoad.js';
import { deriveWorkPopularityIn } from '../../stores/postgres/readerSignals.js';
import type { ImportReport } from '../importer.js';
import { applyOlRecordsIn } from './apply.js';
import { olNameKey, olWorkKey } from './keys.js';
import { addTally, dumpLines, emptyReport, recordsAtLines } from './dump.js';
import { StagePool, type StagedChunk } from './stage.js';
import { OL_BATCH, type OlImportOptions } from './options.js';
import { forgetCached, type OlStores } from './stores.js';

/**
 * A first load: Open Library dumps into a catalogue that holds no Open Library record yet, set-based
 * and in one transaction. Records are read and mapped by domain/openlibrary.ts as the record path
 * reads them (so the mapping lives once), copied into a staging table, and written with one
 * statement per table (see stores/postgres/openlibraryFirstLoad.ts). What that cannot decide alone,
 * editions whose ISBN another edition or an existing book has, goes through the record path (apply.ts)
 * afterwards, in the same transaction, in file order.
 *
 * The result is the catalogue the record path makes from the same files given authors first, then
 * works, then editions (its results depend on that order; a first load reads the files as one
 * dump). Until the commit nothing is visible: the API keeps answering from the catalogue as it was,
 * and a load killed at any moment leaves it so. Answers null when the catalogue holds Open Library
 * records (checked under a lock), without having written anything.
 */

// Lines per chunk a worker stages, and chunks under way at once: enough to keep both the workers and
// PostgreSQL busy, few enough to bound the importer's memory.
const STAGE_CHUNK = 2_000;
const IN_FLIGHT = 8;
const LABEL = 'openlibrary first load';
// Dumps smaller than this are staged on the main thread: starting workers would cost more than they save.
const WORTH_WORKERS = 32 * 2 ** 20;

const totalBytes = async (paths: readonly string[]): Promise<number> =>
  (await Promise.all(paths.map((path) => stat(path)))).reduce((sum, file) => sum + file.size, 0);

export async function firstLoad(paths: readonly string[], stores: OlStores, options: OlImportOptions): Promise<ImportReport[] | null> {
  const client = await stores.db.connect();
  const say = (text: string) => {
    if (options.progress !== false) process.stderr.write(`${LABEL}: ${text}\n`);
  };
  let ended = false;
  try {
    await beginFirstLoad(client);
    if (!(await claimFirstLoad(client))) return null;
    // An empty catalogue is built aside and swapped in at the end; one with other sources' books, in place.
    const aside = await setAside(client, CATALOGUE_TABLES);
    say(aside ? `building ${aside.tables.join(', ')} aside` : 'writing into the catalogue in place');
    const started = performance.now();
    const reports: ImportReport[] = [];
    const pool = new StagePool(options.stageWorkers ?? ((await totalBytes(paths)) < WORTH_WORKERS ? 0 : availableParallelism()));
    try {
      for (const [file, path] of paths.entries()) reports.push(await stageFile(client, pool, path, file, options));
    } finally {
      await pool.close();
    }
    const timed = async <T>(phase: string, work: () => Promise<T>, describe: (result: T) => string): Promise<T> => {
      const start = performance.now();
      const result = await work();
      say(`${phase}: ${describe(result)} in ${((performance.now() - start) / 1000).toFixed(1)} s`);
      return result;
    };
    await timed(
      'newest revision of each key',
      () => keepNewest(client),
      ({ dropped, stagedBytes }) => `${dropped} older records of repeated keys left out (staged ${Math.round(stagedBytes / 2 ** 20)} MB)`,
    );
    const routed = await timed(
      'repeated ISBNs',
      () => routeIsbnsTaken(client),
      (lines) => `${lines.length} editions left to the record path`,
    );
    await timed(
      'redirects and placeholders',
      () => resolveReferences(client),
      (made) => `${made} placeholders`,
    );
    await timed(
      'catalogue tables',
      () => writeCatalogue(client, { work: olWorkKey(''), author: olNameKey('') }, aside !== null),
      () => (aside ? 'written aside' : 'written'),
    );
    await timed(
      'change feed',
      () => recordInserts(client),
      (count) => `${count} inserts`,
    );
    await countStaged(client, reports);
    await emptyStaging(client);
    if (aside)
      await timed(
        'indexes',
        () => indexAside(client, aside),
        () => `${aside.builds.length} built`,
      );
    await timed(
      'statistics',
      () => analyzeCatalogue(client),
      () => 'analyzed',
    );
    const touched = await timed(
      'record path',
      () => applyRouted(client, paths, routed, reports, options.batchSize ?? OL_BATCH),
      (ids) => `${ids.size} entities touched`,
    );
    // Before the commit: the books loaded then need no change of their own for it (see deriveWorkPopularityIn).
    await timed(
      'work popularity',
      () => deriveWorkPopularityIn(client),
      ({ works, changed }) => `${works} works, ${changed} books of others updated`,
    );
    if (aside)
      await timed(
        'swap',
        () => swapIn(client, aside),
        () => `${aside.tables.length} tables in place of the empty ones`,
      );
    await timed(
      'commit',
      () => client.query('commit'),
      () => 'committed',
    );
    ended = true;
    // The statistics analyzed inside the transaction are committed with it.
    await forgetCached(stores, touched);
    say(`done in ${((performance.now() - started) / 1000).toFixed(1)} s`);
    return reports;
  } finally {
    if (!ended) await client.query('rollback').catch(() => undefined);
    // The session's temp_buffers cannot be set back once temporary tables were used: not for reuse.
    client.release(true);
  }
}

/** One file into the staging table, in one COPY, its lines read and mapped by the pool meanwhile. */
async function stageFile(client: PoolClient, pool: StagePool, path: string, file: number, options: OlImportOptions): Promise<ImportReport> {
  const report = emptyReport(path);
  const size = (await stat(path)).size;
  const { lines, bytesRead } = dumpLines(path);
  const progress =
    options.progress === false ? null : createProgress({ label: `${LABEL}: staging ${report.source}`, total: 0, unit: 'records' });
  async function* staged(): AsyncGenerator<string> {
    // Chunks being staged, oldest first: taken in order, so the table and the report keep file order.
    const pending: Promise<StagedChunk>[] = [];
    const taken = async () => {
      const chunk = await pending.shift()!;
      addTally(report, chunk.tally);
      const read = bytesRead();
      if (read > 0) progress?.setTotal(Math.round((report.read * size) / read));
      progress?.add(chunk.tally.imported);
      return chunk.copy;
    };
    let chunk: string[] = [];
    let firstLine = 1;
    for await (const { line, text } of lines) {
      if (chunk.length === 0) firstLine = line;
      chunk.push(text);
      if (chunk.length < STAGE_CHUNK) continue;
      pending.push(pool.run({ file, firstLine, lines: chunk }));
      chunk = [];
      if (pending.length >= IN_FLIGHT) yield await taken();
    }
    if (chunk.length > 0) pending.push(pool.run({ file, firstLine, lines: chunk }));
    while (pending.length > 0) yield await taken();
  }
  await stageRecords(client, staged());
  progress?.finish();
  return report;
}

async function countStaged(client: PoolClient, reports: ImportReport[]): Promise<void> {
  const { rows } = await client.query<{ file: number; inserted: number; updated: number }>(
    `select file, count(*) filter (where type in ('author', 'work', 'edition') and not routed)::int as inserted,
            count(*) filter (where type in ('redirect', 'delete'))::int as updated
       from ol_stage group by file`,
  );
  for (const row of rows) {
    const report = reports[row.file]!;
    report.inserted += row.inserted;
    report.updated += row.updated;
  }
}

/** The routed editions through the record path, file by file in line order; answers what they touched. */
async function applyRouted(
  client: PoolClient,
  paths: readonly string[],
  routed: readonly { file: number; line: number }[],
  reports: ImportReport[],
  batchSize: number,
): Promise<Set<string>> {
  const touched = new Set<string>();
  for (const [file, path] of paths.entries()) {
    const lines = routed.filter((row) => row.file === file).map((row) => row.line);
    if (lines.length === 0) continue;
    const report = reports[file]!;
    let batch: OlRecord[] = [];
    const apply = async () => {
      const outcome = await applyOlRecordsIn(client, batch);
      batch = [];
      report.inserted += outcome.inserted;
      report.updated += outcome.updated;
      for (const id of outcome.touched) touched.add(id);
    };
    for await (const { record } of recordsAtLines(path, lines)) {
      batch.push(record);
      if (batch.length >= batchSize) await apply();
    }
    if (batch.length > 0) await apply();
  }
  for (const report of reports) report.unchanged = report.imported - report.inserted - report.updated;
  return touched;
}

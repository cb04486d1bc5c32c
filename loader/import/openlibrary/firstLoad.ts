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
  partOfLine,
  recordInserts,
  resolveReferences,
  routeIsbnsTaken,
  stageRecords,
  writeAuthorsAndWorks,
  writeEditions,
  type StagePart,
} from '../../stores/postgres/openlibraryFirstLoad.js';
import { deriveWorkPopularityIn } from '../../stores/postgres/readerSignals.js';
import { noteWorksKeyed } from '../../stores/postgres/authors.js';
import type { ImportReport } from '../importer.js';
import { applyOlRecordsIn } from './apply.js';
import { olNameKey, olWorkKey, ownWorkKey } from './keys.js';
import { addTally, dumpLines, emptyReport, recordsAtLines } from './dump.js';
import { StagePool, type StagedChunk, type StageJob } from './stage.js';
import { OL_BATCH, type OlImportOptions } from './options.js';
import { forgetCached, type OlStores } from './stores.js';

/**
 * A first load: Open Library dumps into a catalogue that holds no Open Library record yet, set-based
 * and in one transaction. Records are read and mapped by domain/openlibrary.ts as the record path
 * reads them (so the mapping lives once), copied into a staging table, and written with one
 * statement per table (see stores/postgres/openlibraryFirstLoad.ts), in two parts: the records of
 * author and work keys, then those of edition keys, each part staged, written and emptied before
 * the next is staged. What that cannot decide alone, editions whose ISBN another edition or an
 * existing book has, goes through the record path (apply.ts) afterwards, in the same transaction, in
 * file order.
 *
 * Into an empty catalogue, the tables are built aside, indexed once their rows are in, and swapped
 * in just before the commit (see stores/postgres/catalogueAside.ts); beside other sources' books,
 * written in place.
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
    const timed = async <T>(phase: string, work: () => Promise<T>, describe: (result: T) => string): Promise<T> => {
      const start = performance.now();
      const result = await work();
      say(`${phase}: ${describe(result)} in ${((performance.now() - start) / 1000).toFixed(1)} s`);
      return result;
    };
    const reports = paths.map((path) => emptyReport(path));
    const pool = new StagePool(options.stageWorkers ?? ((await totalBytes(paths)) < WORTH_WORKERS ? 0 : availableParallelism()));
    let routed: { file: number; line: number }[] = [];
    try {
      // Files with lines of edition keys, read again for the second part.
      const withEditions = new Set<number>();
      for (const part of ['authors and works', 'editions'] as const) {
        for (const [file, path] of paths.entries())
          if (part === 'authors and works' || withEditions.has(file))
            if (await stageFile(client, pool, { path, file, part, report: reports[file]! }, options)) withEditions.add(file);
        await timed(
          `${part}: newest revision of each key`,
          () => keepNewest(client),
          ({ dropped, stagedBytes }) =>
            `${dropped} older records of repeated keys left out (staged ${Math.round(stagedBytes / 2 ** 20)} MB)`,
        );
        if (part === 'editions') {
          routed = await timed(
            `${part}: repeated ISBNs`,
            () => routeIsbnsTaken(client),
            (lines) => `${lines.length} editions left to the record path`,
          );
          await timed(
            `${part}: redirects and placeholders`,
            () => resolveReferences(client),
            (made) => `${made} placeholders`,
          );
        }
        await timed(
          `${part}: catalogue tables`,
          () =>
            part === 'editions'
              ? writeEditions(client, { work: olWorkKey(''), author: olNameKey('') }, aside !== null)
              : writeAuthorsAndWorks(client, aside !== null),
          () => (aside ? 'written aside' : 'written'),
        );
        await timed(
          `${part}: change feed`,
          () => recordInserts(client, part),
          (count) => `${count} inserts`,
        );
        await countStaged(client, reports);
        await emptyStaging(client, part);
      }
    } finally {
      await pool.close();
    }
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
    // With the load, not after it: a kill after the commit leaves them to the next import (see ../authors.ts).
    await noteWorksKeyed(client, ownWorkKey(''));
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

/**
 * The lines of one file that belong to `part` into the staging table, in one COPY, read and mapped by
 * the pool meanwhile; answers whether the file has lines of the other part.
 */
async function stageFile(
  client: PoolClient,
  pool: StagePool,
  { path, file, part, report }: { path: string; file: number; part: StagePart; report: ImportReport },
  options: OlImportOptions,
): Promise<boolean> {
  const size = (await stat(path)).size;
  const { lines, bytesRead } = dumpLines(path);
  const progress =
    options.progress === false
      ? null
      : createProgress({ label: `${LABEL}: staging ${part} of ${report.source}`, total: 0, unit: 'records' });
  let others = false;
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
    let chunk: StageJob = { file, lines: [], numbers: [] };
    for await (const { line, text } of lines) {
      if (partOfLine(text) !== part) {
        others = true;
        continue;
      }
      chunk.lines.push(text);
      chunk.numbers.push(line);
      if (chunk.lines.length < STAGE_CHUNK) continue;
      pending.push(pool.run(chunk));
      chunk = { file, lines: [], numbers: [] };
      if (pending.length >= IN_FLIGHT) yield await taken();
    }
    if (chunk.lines.length > 0) pending.push(pool.run(chunk));
    while (pending.length > 0) yield await taken();
  }
  await stageRecords(client, staged());
  progress?.finish();
  return others;
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

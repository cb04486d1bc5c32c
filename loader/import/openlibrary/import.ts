import { stat } from 'node:fs/promises';
import { resolveTouchedAuthors } from '../authors.js';
import { createProgress, type ProgressReporter } from '../../index/progress.js';
import { hasOlRecords } from '../../stores/postgres/openlibrary.js';
import { deriveWorkPopularity, type ReaderDumpKind } from '../../stores/postgres/readerSignals.js';
import type { ImportReport } from '../importer.js';
import { applyInBatches } from './batches.js';
import { dumpRecords, emptyReport } from './dump.js';
import { firstLoad } from './firstLoad.js';
import { reimport } from './reimport.js';
import type { OlImportOptions } from './options.js';
import { OlStatistics } from './statistics.js';
import { firstLine, importReaderDump, readerDumpKind } from './readerDumps.js';
import { forgetCached, type OlStores } from './stores.js';

/**
 * `bookmeta import openlibrary FILE...`. Set-based unless `--method record-by-record`: into a
 * catalogue that holds no Open Library records yet, a first load in one transaction (see
 * firstLoad.ts); into one that does, a re-import that compares every line's key and revision with
 * the catalogue's as a set and applies only the new and newer records (see reimport.ts). Record by
 * record, it streams dump files (.txt or .txt.gz, authors, works, editions or all types, in any
 * order) line by line in constant memory, and applies every record in batches of one transaction
 * each (see apply.ts), skipping by revision those it has. Either way a killed import loses at most
 * the batch under way (a first load, all of it), and running it again skips, by revision, every
 * record already applied. The authors the records touched are then resolved across sources (see
 * ../authors.ts; after a first load's commit, so a kill meanwhile leaves them noted for the next
 * import). The readers' dumps (reading log, ratings) are counted per work after the catalogue's (see
 * readerDumps.ts), and every run ends by deriving the works' popularity, of the works as resolved.
 */
export async function importOpenLibrary(
  paths: readonly string[],
  stores: OlStores,
  options: OlImportOptions = {},
): Promise<ImportReport[]> {
  // The readers' dumps (reading log, ratings) are counts per work; the others are the catalogue's records.
  const dumps: { path: string; readers: ReaderDumpKind | null }[] = [];
  for (const path of paths) dumps.push({ path, readers: readerDumpKind(path, await firstLine(path)) });
  const catalogue = dumps.filter((dump) => dump.readers === null).map((dump) => dump.path);
  const reports = catalogue.length > 0 ? await importCatalogueDumps(catalogue, stores, options) : [];
  stores.log.info(await resolveTouchedAuthors(stores.db, stores.cache), 'authors resolved across sources');
  for (const { path, readers } of dumps) if (readers !== null) reports.push(await importReaderDump(path, readers, stores.db, options));
  // Readers and editions make a work's popularity: derived again from everything imported. A work's
  // record shows its readers, and so do its books' (their cached answers are kept under the work too).
  const popularity = await deriveWorkPopularity(stores.db, {
    readersChanged: stores.cache ? (works) => forgetCached(stores, new Set(works)) : undefined,
  });
  stores.log.info(popularity, 'work popularity derived');
  return reports;
}

async function importCatalogueDumps(paths: readonly string[], stores: OlStores, options: OlImportOptions): Promise<ImportReport[]> {
  if ((options.method ?? 'auto') !== 'record-by-record') {
    // A first load answers null, having written nothing, when the catalogue holds Open Library records (or got some meanwhile).
    const reports = (await hasOlRecords(stores.db)) ? null : await firstLoad(paths, stores, options);
    return reports ?? (await reimport(paths, stores, options));
  }
  const reports: ImportReport[] = [];
  const statistics = new OlStatistics(stores.db);
  for (const path of paths) reports.push(await importFile(path, stores, statistics, options));
  return reports;
}

async function importFile(path: string, stores: OlStores, statistics: OlStatistics, options: OlImportOptions): Promise<ImportReport> {
  const report = emptyReport(path);
  const size = (await stat(path)).size;
  const { records, bytesRead } = dumpRecords(path, report);
  const progress: ProgressReporter | null =
    options.progress === false ? null : createProgress({ label: report.source, total: 0, unit: 'records' });
  await applyInBatches(records, report, stores, statistics, options.batchSize, (count) => {
    const read = bytesRead();
    if (read > 0) progress?.setTotal(Math.round((report.read * size) / read));
    progress?.add(count);
  });
  progress?.finish();
  return report;
}

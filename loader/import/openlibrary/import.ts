import { stat } from 'node:fs/promises';
import type { OlRecord } from '../../../src/domain/openlibrary.js';
import { createProgress, type ProgressReporter } from '../../index/progress.js';
import { hasOlRecords } from '../../stores/postgres/openlibrary.js';
import { deriveWorkPopularity, type ReaderDumpKind } from '../../stores/postgres/readerSignals.js';
import type { ImportReport } from '../importer.js';
import { applyOlRecords } from './apply.js';
import { dumpRecords, emptyReport } from './dump.js';
import { firstLoad } from './firstLoad.js';
import { OL_BATCH, type OlImportOptions } from './options.js';
import { OlStatistics } from './statistics.js';
import { firstLine, importReaderDump, readerDumpKind } from './readerDumps.js';
import { forgetCached, type OlStores } from './stores.js';

/**
 * `bookmeta import openlibrary FILE...`. Into a catalogue that holds no Open Library records yet, a
 * first load: set-based, in one transaction (see firstLoad.ts). Otherwise record by record: streams
 * dump files (.txt or .txt.gz, authors, works, editions or all types, in any order) line by line in
 * constant memory, and applies their records in batches of one transaction each (see apply.ts). A
 * killed import loses at most the batch under way, and running it again skips, by revision, every
 * record already applied. The readers' dumps (reading log, ratings) are counted per work after the
 * catalogue's (see readerDumps.ts), and every run ends by deriving the works' popularity.
 */
export async function importOpenLibrary(paths: readonly string[], stores: OlStores, options: OlImportOptions = {}): Promise<ImportReport[]> {
  // The readers' dumps (reading log, ratings) are counts per work; the others are the catalogue's records.
  const dumps: { path: string; readers: ReaderDumpKind | null }[] = [];
  for (const path of paths) dumps.push({ path, readers: readerDumpKind(path, await firstLine(path)) });
  const catalogue = dumps.filter((dump) => dump.readers === null).map((dump) => dump.path);
  const reports = catalogue.length > 0 ? await importCatalogueDumps(catalogue, stores, options) : [];
  for (const { path, readers } of dumps) if (readers !== null) reports.push(await importReaderDump(path, readers, stores.db, options));
  // Readers and editions make a work's popularity: derived again from everything imported.
  const popularity = await deriveWorkPopularity(stores.db);
  stores.log.info(popularity, 'work popularity derived');
  return reports;
}

async function importCatalogueDumps(paths: readonly string[], stores: OlStores, options: OlImportOptions): Promise<ImportReport[]> {
  const method = options.method ?? 'auto';
  if (method === 'set-based' || (method === 'auto' && !(await hasOlRecords(stores.db)))) {
    const reports = await firstLoad(paths, stores, options);
    // `auto` and a catalogue that got Open Library records meanwhile: record by record after all.
    if (reports !== null) return reports;
    if (method === 'set-based') throw new Error('the catalogue holds Open Library records: a set-based load is a first load; import record by record (--method record-by-record or auto)');
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
  const progress: ProgressReporter | null = options.progress === false ? null : createProgress({ label: report.source, total: 0, unit: 'records' });
  const batchSize = options.batchSize ?? OL_BATCH;
  let batch: OlRecord[] = [];
  // The batch PostgreSQL is applying while the next one is parsed: reading and writing overlap, and
  // batches still commit one at a time, in file order.
  let applying: Promise<void> = Promise.resolve();

  const apply = async (records: OlRecord[]) => {
    const outcome = await applyOlRecords(stores.db, records);
    report.imported += records.length;
    report.inserted += outcome.inserted;
    report.updated += outcome.updated;
    report.unchanged += outcome.unchanged;
    await forgetCached(stores, outcome.touched);
    await statistics.recordsApplied(records.length);
    const read = bytesRead();
    if (read > 0) progress?.setTotal(Math.round((report.read * size) / read));
    progress?.add(records.length);
  };

  const flush = async () => {
    if (batch.length === 0) return;
    const records = batch;
    batch = [];
    await applying;
    applying = apply(records);
    // Awaited by the next flush; a failure surfaces there.
    applying.catch(() => undefined);
  };

  for await (const { record } of records) {
    batch.push(record);
    if (batch.length >= batchSize) await flush();
  }
  await flush();
  await applying;
  progress?.finish();
  return report;
}


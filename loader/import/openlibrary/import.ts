import { createReadStream } from 'node:fs';
import { stat } from 'node:fs/promises';
import { basename } from 'node:path';
import { createInterface } from 'node:readline';
import { createGunzip } from 'node:zlib';
import { parseOlLine, type OlRecord } from '../../../src/domain/openlibrary.js';
import type { Logger } from '../../../src/log.js';
import type { Pool } from '../../../src/stores/postgres/pool.js';
import type { ResponseCache } from '../../../src/stores/redis/responseCache.js';
import { createProgress, type ProgressReporter } from '../../index/progress.js';
import type { ImportReport } from '../importer.js';
import { applyOlRecords } from './apply.js';
import { OlStatistics } from './statistics.js';
import { firstLine, importReaderDump, readerDumpKind } from './readerDumps.js';
import { deriveWorkPopularity } from '../../stores/postgres/readerSignals.js';

/**
 * `bookmeta import openlibrary FILE...`: streams dump files (.txt or .txt.gz, authors, works,
 * editions or all types, in any order) line by line in constant memory, and applies their records in
 * batches of one transaction each (see apply.ts). A killed import loses at most the batch under way,
 * and running it again skips, by revision, every record already applied.
 */

export const OL_BATCH = 2_000;
// A real dump can have many bad lines; the report lists this many per file and counts the rest.
const LISTED_REJECTIONS = 1_000;

export interface OlImportOptions {
  batchSize?: number;
  /** A progress bar on a terminal, plain lines elsewhere (default true). */
  progress?: boolean;
}

interface DumpLine {
  line: number;
  text: string;
}

/** The lines of a dump file, decompressed when it ends in .gz; `bytesRead()` tells how far into the file. */
function dumpLines(path: string): { lines: AsyncIterable<DumpLine>; bytesRead: () => number } {
  // Chunks of about a hundred lines: the batch PostgreSQL is applying is answered between two of them.
  const file = createReadStream(path, { highWaterMark: 1 << 16 });
  const input = path.endsWith('.gz') ? file.pipe(createGunzip()) : file;
  file.on('error', (error) => input.destroy(error));
  const reader = createInterface({ input, crlfDelay: Infinity });
  async function* numbered(): AsyncGenerator<DumpLine> {
    let line = 0;
    for await (const text of reader) yield { line: ++line, text };
  }
  return { lines: numbered(), bytesRead: () => file.bytesRead };
}

export async function importOpenLibrary(
  paths: readonly string[],
  stores: { db: Pool; cache: ResponseCache | null; log: Logger },
  options: OlImportOptions = {},
): Promise<ImportReport[]> {
  const reports: ImportReport[] = [];
  const statistics = new OlStatistics(stores.db);
  for (const path of paths) {
    const readers = readerDumpKind(path, await firstLine(path));
    reports.push(readers === null ? await importFile(path, stores, statistics, options) : await importReaderDump(path, readers, () => dumpLines(path), stores.db, options));
  }
  // Readers and editions make a work's popularity: derived again from everything imported.
  const popularity = await deriveWorkPopularity(stores.db);
  stores.log.info(popularity, 'work popularity derived');
  return reports;
}

async function importFile(path: string, stores: { db: Pool; cache: ResponseCache | null; log: Logger }, statistics: OlStatistics, options: OlImportOptions): Promise<ImportReport> {
  const report: ImportReport = { source: `openlibrary ${basename(path)}`, read: 0, imported: 0, inserted: 0, updated: 0, unchanged: 0, repaired: 0, rejected: [], rejectedUnlisted: 0, skipped: 0 };
  const size = (await stat(path)).size;
  const { lines, bytesRead } = dumpLines(path);
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
    // The writes are committed; cached answers that showed these entities are now stale.
    await stores.cache?.invalidate(outcome.touched).catch((error: unknown) => {
      stores.log.warn({ err: error }, 'could not drop cached answers; they expire within 24 hours');
    });
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

  for await (const { line, text } of lines) {
    const parsed = parseOlLine(text);
    if (parsed === null) continue;
    report.read += 1;
    if ('rejected' in parsed) {
      if (report.rejected.length < LISTED_REJECTIONS) report.rejected.push({ line, reason: parsed.rejected });
      else report.rejectedUnlisted! += 1;
      continue;
    }
    if ('skipped' in parsed) {
      report.skipped! += 1;
      continue;
    }
    if (parsed.record.type === 'edition' && parsed.record.edition.isbnRepaired) report.repaired += 1;
    batch.push(parsed.record);
    if (batch.length >= batchSize) await flush();
  }
  await flush();
  await applying;
  progress?.finish();
  return report;
}

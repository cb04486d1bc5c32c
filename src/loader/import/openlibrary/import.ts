import { createReadStream } from 'node:fs';
import { stat } from 'node:fs/promises';
import { basename } from 'node:path';
import { createInterface } from 'node:readline';
import { createGunzip } from 'node:zlib';
import { parseOlLine, type OlRecord } from '../../../domain/openlibrary.js';
import type { Logger } from '../../../log.js';
import type { Pool } from '../../../stores/postgres/pool.js';
import type { ResponseCache } from '../../../stores/redis/responseCache.js';
import { createProgress, type ProgressReporter } from '../../index/progress.js';
import type { ImportReport } from '../importer.js';
import { applyOlRecords } from './apply.js';

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
  const file = createReadStream(path, { highWaterMark: 1 << 20 });
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
  for (const path of paths) reports.push(await importFile(path, stores, options));
  return reports;
}

async function importFile(path: string, stores: { db: Pool; cache: ResponseCache | null; log: Logger }, options: OlImportOptions): Promise<ImportReport> {
  const report: ImportReport = { source: `openlibrary ${basename(path)}`, read: 0, imported: 0, inserted: 0, updated: 0, unchanged: 0, repaired: 0, rejected: [], rejectedUnlisted: 0, skipped: 0 };
  const size = (await stat(path)).size;
  const { lines, bytesRead } = dumpLines(path);
  const progress: ProgressReporter | null = options.progress === false ? null : createProgress({ label: report.source, total: 0, unit: 'records' });
  const batchSize = options.batchSize ?? OL_BATCH;
  let batch: OlRecord[] = [];

  const flush = async () => {
    if (batch.length === 0) return;
    const outcome = await applyOlRecords(stores.db, batch);
    report.imported += batch.length;
    report.inserted += outcome.inserted;
    report.updated += outcome.updated;
    report.unchanged += outcome.unchanged;
    // The writes are committed; cached answers that showed these entities are now stale.
    await stores.cache?.invalidate(outcome.touched).catch((error: unknown) => {
      stores.log.warn({ err: error }, 'could not drop cached answers; they expire within 24 hours');
    });
    const read = bytesRead();
    if (read > 0) progress?.setTotal(Math.round((report.read * size) / read));
    progress?.add(batch.length);
    batch = [];
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
  progress?.finish();
  return report;
}

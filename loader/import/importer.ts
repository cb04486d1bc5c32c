import { upsertEditions, type EditionInput, type SourcePolicy } from './editions.js';
import { analyzeCatalogueTables } from '../stores/postgres/editions.js';
import type { Pool } from '../../src/stores/postgres/pool.js';
import type { ResponseCache } from '../../src/stores/redis/responseCache.js';
import type { Logger } from '../../src/log.js';
import { csvRows, type CsvProblem } from './csvRows.js';
import { resolveTouchedAuthors } from './authors.js';

/** What one source row becomes: an edition to write, or the reason it cannot be. */
export type ParsedRow = { edition: EditionInput; repaired: boolean } | { rejected: string };

export interface CatalogueSource {
  name: string;
  policy: SourcePolicy;
  parse(record: Record<string, string>, line: number): ParsedRow;
}

export interface ImportReport {
  source: string;
  read: number;
  imported: number;
  inserted: number;
  updated: number;
  unchanged: number;
  repaired: number;
  rejected: CsvProblem[];
  /** Rejections counted but not listed, past a bound on how many a report keeps. */
  rejectedUnlisted?: number;
  /** Lines of a kind the source holds but the catalogue does not (Open Library's subjects, pages...). */
  skipped?: number;
}

/** A report of `source` before its first line: every count at zero. */
export const newReport = (source: string): ImportReport => ({
  source,
  read: 0,
  imported: 0,
  inserted: 0,
  updated: 0,
  unchanged: 0,
  repaired: 0,
  rejected: [],
});

const BATCH = 1_000;

/** How one kind of row is read and written, for `importRows`. */
export interface RowImport<Row extends object> {
  batchSize: number;
  parse(record: Record<string, string>, line: number): Row | { rejected: string };
  /** Writes one batch and adds its outcome to the report. */
  writeBatch(rows: Row[]): Promise<void>;
  onProgress?: (report: ImportReport) => void;
}

/**
 * The loop every importer shares: streams the CSV rows of `path`, parses each, and writes them in
 * batches of `batchSize`, calling `onProgress` after each batch. Every row counts in `report.read`;
 * a row the CSV parser cannot read or `parse` rejects goes to `report.rejected`, never stopping the import.
 */
export async function importRows<Row extends object>(path: string, report: ImportReport, rows: RowImport<Row>): Promise<void> {
  let batch: Row[] = [];
  const flush = async () => {
    if (batch.length === 0) return;
    await rows.writeBatch(batch);
    batch = [];
    rows.onProgress?.(report);
  };
  const unreadable = (problem: CsvProblem) => {
    report.read += 1;
    report.rejected.push(problem);
  };
  for await (const { line, record } of csvRows(path, unreadable)) {
    report.read += 1;
    const parsed = rows.parse(record, line);
    if ('rejected' in parsed) {
      report.rejected.push({ line, reason: parsed.rejected });
      continue;
    }
    batch.push(parsed);
    if (batch.length >= rows.batchSize) await flush();
  }
  await flush();
}

/**
 * Streams a source file into the catalogue in batches of BATCH rows, one transaction each. Memory
 * stays constant whatever the file size; a bad row is reported and never stops the import. The
 * tables it changed are left with fresh planner statistics (analyzeCatalogueTables), and the authors
 * it touched resolved across sources (resolveTouchedAuthors).
 */
export async function importCatalogue(
  source: CatalogueSource,
  path: string,
  stores: { db: Pool; cache: ResponseCache | null; log: Logger },
  onProgress: (report: ImportReport) => void = () => undefined,
): Promise<ImportReport> {
  const report = newReport(source.name);
  await importRows(path, report, {
    batchSize: BATCH,
    parse: (record, line) => {
      const parsed = source.parse(record, line);
      if ('rejected' in parsed) return parsed;
      if (parsed.repaired) report.repaired += 1;
      return parsed.edition;
    },
    writeBatch: async (editions) => {
      const outcome = await upsertEditions(stores.db, editions, source.policy);
      report.imported += editions.length;
      report.inserted += outcome.inserted;
      report.updated += outcome.updated;
      report.unchanged += outcome.unchanged + outcome.skippedMerged;
      // The writes are committed; cached answers that showed these entities are now stale.
      await stores.cache?.invalidate(outcome.touched).catch((error: unknown) => {
        stores.log.warn({ err: error }, 'could not drop cached answers; they expire within 24 hours');
      });
    },
    onProgress,
  });
  if (report.inserted + report.updated > 0) await analyzeCatalogueTables(stores.db);
  stores.log.info(await resolveTouchedAuthors(stores.db, stores.cache), 'authors resolved across sources');
  return report;
}

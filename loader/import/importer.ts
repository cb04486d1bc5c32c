import type { EditionInput, SourcePolicy } from '../../src/stores/postgres/editions.js';
import { upsertEditions } from '../../src/stores/postgres/editions.js';
import type { Pool } from '../../src/stores/postgres/pool.js';
import type { ResponseCache } from '../../src/stores/redis/responseCache.js';
import type { Logger } from '../../src/log.js';
import { csvRows, type CsvProblem } from './csvRows.js';

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
}

const BATCH = 1_000;

/**
 * Streams a source file into the catalogue in batches of BATCH rows, one transaction each. Memory
 * stays constant whatever the file size; a bad row is reported and never stops the import.
 */
export async function importCatalogue(
  source: CatalogueSource,
  path: string,
  stores: { db: Pool; cache: ResponseCache | null; log: Logger },
  onProgress: (report: ImportReport) => void = () => undefined,
): Promise<ImportReport> {
  const report: ImportReport = { source: source.name, read: 0, imported: 0, inserted: 0, updated: 0, unchanged: 0, repaired: 0, rejected: [] };
  let batch: EditionInput[] = [];
  const flush = async () => {
    if (batch.length === 0) return;
    const outcome = await upsertEditions(stores.db, batch, source.policy);
    report.imported += batch.length;
    report.inserted += outcome.inserted;
    report.updated += outcome.updated;
    report.unchanged += outcome.unchanged + outcome.skippedMerged;
    batch = [];
    // The writes are committed; cached answers that showed these entities are now stale.
    await stores.cache?.invalidate(outcome.touched).catch((error: unknown) => {
      stores.log.warn({ err: error }, 'could not drop cached answers; they expire within 24 hours');
    });
    onProgress(report);
  };
  for await (const { line, record } of csvRows(path, (problem) => report.rejected.push(problem))) {
    report.read += 1;
    const parsed = source.parse(record, line);
    if ('rejected' in parsed) {
      report.rejected.push({ line, reason: parsed.rejected });
      continue;
    }
    if (parsed.repaired) report.repaired += 1;
    batch.push(parsed.edition);
    if (batch.length >= BATCH) await flush();
  }
  await flush();
  report.read += report.rejected.filter((problem) => problem.reason.startsWith('unreadable CSV')).length;
  return report;
}

import type { OlRecord } from '../../../src/domain/openlibrary.js';
import type { ImportReport } from '../importer.js';
import { applyOlRecords } from './apply.js';
import type { DumpRecord } from './dump.js';
import { OL_BATCH } from './options.js';
import type { OlStatistics } from './statistics.js';
import { forgetCached, type OlStores } from './stores.js';

/**
 * Records through the record path (apply.ts) in batches of one transaction each, in the order given,
 * counting what they did in `report`; `applied` hears of each batch once it is committed. The batch
 * PostgreSQL is applying while the next one is read: reading and writing overlap, and batches still
 * commit one at a time, in order. A kill loses at most the batch under way.
 */
export async function applyInBatches(
  records: AsyncIterable<DumpRecord>,
  report: ImportReport,
  stores: OlStores,
  statistics: OlStatistics,
  batchSize: number = OL_BATCH,
  applied: (count: number) => void = () => undefined,
): Promise<void> {
  let batch: OlRecord[] = [];
  let applying: Promise<void> = Promise.resolve();

  const apply = async (records: OlRecord[]) => {
    const outcome = await applyOlRecords(stores.db, records);
    report.imported += records.length;
    report.inserted += outcome.inserted;
    report.updated += outcome.updated;
    report.unchanged += outcome.unchanged;
    await forgetCached(stores, outcome.touched);
    await statistics.recordsApplied(records.length);
    applied(records.length);
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
}

import { stat } from 'node:fs/promises';
import { parseOlHeader, parseOlLine } from '../../../src/domain/openlibrary.js';
import type { PoolClient } from '../../../src/stores/postgres/pool.js';
import { createProgress } from '../../index/progress.js';
import { beginReimport, changedLines, chooseChanged, stagedHeader, stageHeaders } from '../../stores/postgres/openlibraryReimport.js';
import type { ImportReport } from '../importer.js';
import { applyInBatches } from './batches.js';
import { dumpLines, emptyReport, linesAt, reject, tally, type DumpRecord } from './dump.js';
import type { OlImportOptions } from './options.js';
import { OlStatistics } from './statistics.js';
import type { OlStores } from './stores.js';

/**
 * A re-import: dumps into a catalogue that already holds Open Library records (a newer month's, or
 * the same again). Most of their records are the catalogue's already, so they are compared as a set
 * before any is read in full: the type, key and revision of every line are copied into a temporary
 * table (no JSON is parsed), and one join with openlibrary_records picks, of each key, its newest
 * line when that is newer than the stored revision or the key is new (see
 * stores/postgres/openlibraryReimport.ts). Only those lines are read again, parsed and applied by
 * the record path (apply.ts), file by file in line order, in batches of one transaction each. So a
 * re-import writes and records changes exactly as the record path does for the same lines, and a
 * kill leaves what the record path leaves: the batches committed so far, which a rerun skips by
 * revision. The record path applies a key's older lines too when a newer one follows in another
 * batch; here only the newest counts, which ends in the same catalogue with fewer changes.
 *
 * The report counts as the record path's does: read, skipped and rejected lines (a line whose
 * header is sound but whose JSON is not is found and rejected when its key is to be applied, as
 * the record path does; one whose key the catalogue holds at the same or a newer revision goes
 * unread and counts as unchanged), imported, new, updated and unchanged records. `repaired` counts
 * the ISBNs repaired among the records read in full.
 */

const LABEL = 'openlibrary re-import';
// Lines per COPY chunk of the staging table.
const STAGE_CHUNK = 5_000;

export async function reimport(paths: readonly string[], stores: OlStores, options: OlImportOptions): Promise<ImportReport[]> {
  const client = await stores.db.connect();
  const say = (text: string) => {
    if (options.progress !== false) process.stderr.write(`${LABEL}: ${text}\n`);
  };
  try {
    const started = performance.now();
    await beginReimport(client);
    const reports: ImportReport[] = [];
    // Lines whose header is sound, per file: each either applied or unchanged in the end.
    const staged: number[] = [];
    for (const [file, path] of paths.entries()) {
      const { report, lines } = await stageFile(client, path, file, options);
      reports.push(report);
      staged.push(lines);
    }
    const chooseStarted = performance.now();
    const changed = await chooseChanged(client);
    const total = staged.reduce((sum, lines) => sum + lines, 0);
    say(`new or newer than the catalogue: ${changed} of ${total} records in ${((performance.now() - chooseStarted) / 1000).toFixed(1)} s`);

    const statistics = new OlStatistics(stores.db);
    const progress = options.progress === false ? null : createProgress({ label: `${LABEL}: applying`, total: changed, unit: 'records' });
    for (const [file, path] of paths.entries()) {
      const report = reports[file]!;
      const applied = { lines: 0 };
      await applyInBatches(changedRecords(client, path, file, report, applied), report, stores, statistics, options.batchSize, (count) =>
        progress?.add(count),
      );
      // The lines not applied: records the catalogue has at this revision or a newer one.
      const unread = staged[file]! - applied.lines;
      report.imported += unread;
      report.unchanged += unread;
    }
    progress?.finish();
    say(`done in ${((performance.now() - started) / 1000).toFixed(1)} s`);
    return reports;
  } finally {
    // The session's settings and temporary tables go with it: not for reuse.
    client.release(true);
  }
}

/** The header of each line of one file into the staging table; answers the file's report so far and how many lines were staged. */
async function stageFile(
  client: PoolClient,
  path: string,
  file: number,
  options: OlImportOptions,
): Promise<{ report: ImportReport; lines: number }> {
  const report = emptyReport(path);
  const size = (await stat(path)).size;
  const { lines, bytesRead } = dumpLines(path);
  const progress =
    options.progress === false ? null : createProgress({ label: `${LABEL}: staging ${report.source}`, total: 0, unit: 'records' });
  let staged = 0;
  async function* rows(): AsyncGenerator<string> {
    let chunk = '';
    let count = 0;
    const taken = () => {
      const text = chunk;
      chunk = '';
      staged += count;
      const read = bytesRead();
      if (read > 0) progress?.setTotal(Math.round((report.read * size) / read));
      progress?.add(count);
      count = 0;
      return text;
    };
    for await (const { line, text } of lines) {
      const outcome = parseOlHeader(text);
      if (outcome === null || !('header' in outcome)) {
        tally(report, line, outcome);
        continue;
      }
      report.read += 1;
      chunk += stagedHeader(file, line, outcome.header.key, outcome.header.revision);
      if (++count >= STAGE_CHUNK) yield taken();
    }
    if (count > 0) yield taken();
  }
  await stageHeaders(client, rows());
  progress?.finish();
  return { report, lines: staged };
}

/** The records of the lines of one file the catalogue lacks, read again and parsed; `applied.lines` counts the lines read. */
async function* changedRecords(
  client: PoolClient,
  path: string,
  file: number,
  report: ImportReport,
  applied: { lines: number },
): AsyncGenerator<DumpRecord> {
  for await (const { line, text } of linesAt(path, changedLines(client, file))) {
    applied.lines += 1;
    const outcome = parseOlLine(text);
    if (outcome === null) continue;
    if ('rejected' in outcome) reject(report, line, outcome.rejected);
    else if ('record' in outcome) {
      if (outcome.record.type === 'edition' && outcome.record.edition.isbnRepaired) report.repaired += 1;
      yield { line, record: outcome.record };
    }
  }
}

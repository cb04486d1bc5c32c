import { createReadStream } from 'node:fs';
import { stat } from 'node:fs/promises';
import { basename } from 'node:path';
import { createInterface } from 'node:readline';
import { createGunzip } from 'node:zlib';
import type { Pool } from '../../../src/stores/postgres/pool.js';
import { createProgress } from '../../index/progress.js';
import { ReaderCounting, type ReaderDumpKind, type ReaderField, type ReaderLine } from '../../stores/postgres/readerSignals.js';
import type { ImportReport } from '../importer.js';
import { dumpLines, emptyReport, reject } from './dump.js';

/**
 * Open Library's readers' dumps, published monthly beside the others (CC0):
 *  - reading log (ol_dump_reading-log_DATE.txt.gz): work key, edition key or empty, shelf
 *    (`Want to Read`, `Currently Reading`, `Already Read`), date;
 *  - ratings (ol_dump_ratings_DATE.txt.gz): work key, edition key or empty, rating 1 to 5, date.
 * Tab-separated, one reader's entry a line, no reader named. Only counts are kept (see
 * stores/postgres/readerSignals.ts): per work, each shelf and each star, and the reading log's
 * entries per work and day for trending. The lines stream into PostgreSQL, which counts them. A
 * dump replaces the counts of the previous one, so a second run of the same file changes nothing.
 * A bad line is rejected with its line number and reason.
 */

// Lines per chunk handed to COPY: enough to cost nothing per line; Node holds about a chunk at a time.
const LINES_PER_CHUNK = 1_000;

const SHELVES: Record<string, ReaderField> = {
  'Want to Read': 'wantToRead',
  'Currently Reading': 'currentlyReading',
  'Already Read': 'alreadyRead',
};
// Older dumps wrote keys without their path ("OL45804W") and a header line; empty and \N are a missing edition.
const WORK_KEY = /^(?:\/works\/)?(OL\d+W)$/u;
const EDITION_KEY = /^(?:(?:\/books\/)?OL\d+M|\\N)?$/u;
const DATE = /^\d{4}-\d{2}-\d{2}(?:[ T][\d:.]+)?$/u;
const HEADER = /^work_(?:key|id)\t/u;

/** Whether `YYYY-MM-DD` names a day of the calendar (not 2023-02-30, nor the year 0 PostgreSQL has not), as PostgreSQL's date will read it. */
const isCalendarDay = (day: string): boolean => {
  const date = new Date(`${day}T00:00:00Z`);
  return !day.startsWith('0000') && !Number.isNaN(date.getTime()) && date.toISOString().startsWith(day);
};

/** What a dump file holds, from its name as Open Library publishes it, else from its first line. */
export function readerDumpKind(path: string, firstLine: string): ReaderDumpKind | null {
  const name = basename(path);
  if (/reading-log/u.test(name)) return 'reading-log';
  if (/ratings/u.test(name)) return 'ratings';
  const columns = firstLine.split('\t');
  if (!WORK_KEY.test(columns[0] ?? '') && !HEADER.test(firstLine)) return null;
  return /^[1-5]$/u.test(columns[2] ?? '') || /\trating\b/u.test(firstLine) ? 'ratings' : 'reading-log';
}

/** One line of a readers' dump: the entry, its rejection, or null for a blank or header line. */
export function parseReaderLine(kind: ReaderDumpKind, text: string): ReaderLine | { rejected: string } | null {
  const line = text.replace(/\r$/u, '');
  if (line.trim() === '' || HEADER.test(line)) return null;
  const columns = line.split('\t');
  if (columns.length !== 4) return { rejected: `expected 4 tab-separated columns, got ${columns.length}` };
  const [work, edition, value, date] = columns as [string, string, string, string];
  const workKey = WORK_KEY.exec(work);
  if (!workKey) return { rejected: `invalid work key "${work.slice(0, 40)}"` };
  if (!EDITION_KEY.test(edition)) return { rejected: `invalid edition key "${edition.slice(0, 40)}"` };
  const day = date.slice(0, 10);
  if (!DATE.test(date) || !isCalendarDay(day)) return { rejected: `invalid date "${date.slice(0, 40)}"` };
  if (kind === 'reading-log') {
    const field = SHELVES[value];
    if (field === undefined) return { rejected: `unknown shelf "${value.slice(0, 40)}" (Want to Read, Currently Reading or Already Read)` };
    return { workKey: workKey[1]!, field, rating: 0, day };
  }
  if (!/^[1-5]$/u.test(value)) return { rejected: `invalid rating "${value.slice(0, 40)}" (1 to 5)` };
  return { workKey: workKey[1]!, field: 'ratings', rating: Number(value), day };
}

export async function importReaderDump(
  path: string,
  kind: ReaderDumpKind,
  db: Pool,
  options: { progress?: boolean } = {},
): Promise<ImportReport> {
  const report = emptyReport(path);
  const progress = options.progress === false ? null : createProgress({ label: report.source, total: 0, unit: 'lines' });
  const size = (await stat(path)).size;
  const counting = await ReaderCounting.open(db, kind);
  try {
    // Opened once counting can start: the lines flow from then on.
    const dump = dumpLines(path);
    let shown = 0;
    const showProgress = () => {
      const read = dump.bytesRead();
      if (read > 0) progress?.setTotal(Math.round((report.read * size) / read));
      progress?.add(report.read - shown);
      shown = report.read;
    };
    async function* chunks(): AsyncGenerator<ReaderLine[]> {
      let chunk: ReaderLine[] = [];
      for await (const { line, text } of dump.lines) {
        const parsed = parseReaderLine(kind, text);
        if (parsed === null) continue;
        report.read += 1;
        if ('rejected' in parsed) {
          reject(report, line, parsed.rejected);
          continue;
        }
        report.imported += 1;
        chunk.push(parsed);
        if (chunk.length === LINES_PER_CHUNK) {
          yield chunk;
          chunk = [];
          showProgress();
        }
      }
      if (chunk.length > 0) yield chunk;
      showProgress();
    }
    await counting.stage(chunks());
    const outcome = await counting.finish();
    report.inserted = outcome.inserted;
    report.updated = outcome.updated;
    report.unchanged = outcome.unchanged;
  } finally {
    await counting.close();
    progress?.finish();
  }
  return report;
}

/** The first line of a dump file (decompressed when it ends in .gz), or '' for an empty file. */
export async function firstLine(path: string): Promise<string> {
  const file = createReadStream(path, { highWaterMark: 1 << 14 });
  const input = path.endsWith('.gz') ? file.pipe(createGunzip()) : file;
  file.on('error', (error) => input.destroy(error));
  const reader = createInterface({ input, crlfDelay: Infinity });
  try {
    for await (const text of reader) return text;
    return '';
  } finally {
    reader.close();
    file.destroy();
  }
}

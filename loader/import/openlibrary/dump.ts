import { createReadStream } from 'node:fs';
import { basename } from 'node:path';
import { createInterface } from 'node:readline';
import { createGunzip } from 'node:zlib';
import { parseOlLine, type OlLine, type OlRecord } from '../../../src/domain/openlibrary.js';
import { newReport, type ImportReport } from '../importer.js';

/** Reading Open Library dump files (.txt or .txt.gz) into records, in constant memory, for either import path. */

// A real dump can have many bad lines; the report lists this many per file and counts the rest.
const LISTED_REJECTIONS = 1_000;

export interface DumpLine {
  line: number;
  text: string;
}

/** The lines of a dump file, decompressed when it ends in .gz; `bytesRead()` tells how far into the file. */
export function dumpLines(path: string): { lines: AsyncIterable<DumpLine>; bytesRead: () => number } {
  // Chunks of about a hundred lines: the batch PostgreSQL is applying is answered between two of them.
  const file = createReadStream(path, { highWaterMark: 1 << 16 });
  const input = path.endsWith('.gz') ? file.pipe(createGunzip()) : file;
  file.on('error', (error) => input.destroy(error));
  async function* numbered(): AsyncGenerator<DumpLine> {
    // Made when the first line is asked for: a reader made earlier would emit lines nobody awaits yet, and lose them.
    const reader = createInterface({ input, crlfDelay: Infinity });
    let line = 0;
    for await (const text of reader) yield { line: ++line, text };
  }
  return { lines: numbered(), bytesRead: () => file.bytesRead };
}

export function emptyReport(path: string): ImportReport {
  return { ...newReport(`openlibrary ${basename(path)}`), rejectedUnlisted: 0, skipped: 0 };
}

export interface DumpRecord {
  line: number;
  record: OlRecord;
}

/**
 * The records of one dump file, in file order; every line is counted in `report` as it is read
 * (read, rejected with its line and reason, skipped, repaired). `bytesRead()` tells how far into the file.
 */
export function dumpRecords(path: string, report: ImportReport): { records: AsyncIterable<DumpRecord>; bytesRead: () => number } {
  const { lines, bytesRead } = dumpLines(path);
  async function* parsed(): AsyncGenerator<DumpRecord> {
    for await (const { line, text } of lines) {
      const record = tally(report, line, parseOlLine(text));
      if (record) yield { line, record };
    }
  }
  return { records: parsed(), bytesRead };
}

/** Counts one parsed line in the report; answers its record, if it is one to apply. */
export function tally(report: ImportReport, line: number, outcome: OlLine | null): OlRecord | null {
  if (outcome === null) return null;
  report.read += 1;
  if ('rejected' in outcome) {
    reject(report, line, outcome.rejected);
    return null;
  }
  if ('skipped' in outcome) {
    report.skipped! += 1;
    return null;
  }
  if (outcome.record.type === 'edition' && outcome.record.edition.isbnRepaired) report.repaired += 1;
  return outcome.record;
}

/** Counts a rejected line: listed with its reason while the list is short, else only counted. */
export function reject(report: ImportReport, line: number, reason: string): void {
  if (report.rejected.length < LISTED_REJECTIONS) report.rejected.push({ line, reason });
  else report.rejectedUnlisted! += 1;
}

/** Adds what `part` counted (a later part of the same file) to `report`. */
export function addTally(report: ImportReport, part: ImportReport): void {
  report.read += part.read;
  report.imported += part.imported;
  report.skipped! += part.skipped!;
  report.repaired += part.repaired;
  for (const { line, reason } of part.rejected) reject(report, line, reason);
  report.rejectedUnlisted! += part.rejectedUnlisted!;
}

/** The given lines of a dump file (ascending line numbers), read again. */
export async function* linesAt(path: string, wanted: Iterable<number> | AsyncIterable<number>): AsyncGenerator<DumpLine> {
  // Opened for the first line wanted: a file with none is not opened.
  let lines: AsyncIterator<DumpLine> | null = null;
  try {
    for await (const number of wanted) {
      lines ??= dumpLines(path).lines[Symbol.asyncIterator]();
      for (;;) {
        const next = await lines.next();
        if (next.done) return;
        if (next.value.line === number) {
          yield next.value;
          break;
        }
      }
    }
  } finally {
    // The rest of the file is not read.
    await lines?.return?.(undefined);
  }
}

/** The records of the given lines of a dump file (ascending line numbers), read again. */
export async function* recordsAtLines(path: string, wanted: readonly number[]): AsyncGenerator<DumpRecord> {
  for await (const { line, text } of linesAt(path, wanted)) {
    const outcome = parseOlLine(text);
    if (outcome !== null && 'record' in outcome) yield { line, record: outcome.record };
  }
}

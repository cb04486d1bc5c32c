import { createReadStream } from 'node:fs';
import { parse } from 'csv-parse';

export interface CsvRow {
  /** Line of the file where the record starts (the header is line 1). */
  line: number;
  record: Record<string, string>;
}

export interface CsvProblem {
  line: number;
  reason: string;
}

/**
 * Streams a CSV file with a header row, one record at a time (constant memory). A record the parser
 * cannot read is reported through `onProblem` and skipped, never ending the stream.
 */
export async function* csvRows(path: string, onProblem: (problem: CsvProblem) => void): AsyncGenerator<CsvRow> {
  const parser = createReadStream(path).pipe(
    parse({
      columns: true,
      bom: true,
      info: true,
      relax_quotes: true,
      skip_empty_lines: true,
      skip_records_with_error: true,
    }),
  );
  parser.on('skip', (error: Error & { lines?: number }) =>
    onProblem({ line: error.lines ?? 0, reason: `unreadable CSV: ${error.message}` }),
  );
  for await (const { record, info } of parser as AsyncIterable<{ record: Record<string, string>; info: { lines: number } }>) {
    yield { line: info.lines, record };
  }
}

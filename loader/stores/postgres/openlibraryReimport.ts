import type { PoolClient } from '../../../src/stores/postgres/pool.js';
import { copyText } from './copy.js';

/**
 * The SQL of an Open Library re-import (loader/import/openlibrary/reimport.ts): the key and revision
 * of every dump line are copied into a temporary table of the caller's session, and one join with
 * openlibrary_records tells which lines the record path has to apply. Nothing here writes the
 * catalogue; the session's temporary tables go with it.
 */

/** A staged line: where it is, and the key and revision it carries. */
const HEADER_COLUMNS = ['file', 'line', 'key', 'revision'] as const;

/**
 * One staged line in COPY's text format, in HEADER_COLUMNS' order. A key is OL, digits and a letter,
 * a revision a whole number: nothing to escape.
 */
export const stagedHeader = (file: number, line: number, key: string, revision: number): string =>
  `${file}\t${line}\t${key}\t${revision}\n`;

// The join and the sort of the lines it keeps: in memory for a dump of a few million lines, spilled past it.
const WORK_MEM = '64MB';

/**
 * Prepares the session (a pooled one: temp_buffers may not be changed in a session that has used
 * temporary tables, so the staging table spills to its files past the default).
 */
export async function beginReimport(client: PoolClient): Promise<void> {
  await client.query(`set work_mem = '${WORK_MEM}'`);
  await client.query(
    'create temp table ol_reimport (file integer not null, line integer not null, key text not null, revision integer not null)',
  );
}

/** Staged lines (see stagedHeader), in one COPY. */
export async function stageHeaders(client: PoolClient, text: AsyncIterable<string>): Promise<void> {
  await copyText(client, 'ol_reimport', HEADER_COLUMNS, text);
}

/**
 * The lines to apply: of each key, its newest line (highest revision, the first line of it on a tie,
 * files in the order given), when the key is new to the catalogue, only named so far (a placeholder's
 * `pending`), or stored with an older revision. Kept in the session for `changedLines`; answers how
 * many there are.
 *
 * Only the lines newer than the catalogue are sorted by key: a key whose newest line is not newer
 * than what is stored has no line newer either, and the newest line of a key that has one is one.
 */
export async function chooseChanged(client: PoolClient): Promise<number> {
  await client.query('analyze ol_reimport');
  const { rowCount } = await client.query(
    `create temp table ol_reimport_changed as
     select distinct on (s.key) s.file, s.line
       from ol_reimport s left join openlibrary_records r on r.key = s.key
      where r.key is null or r.state = 'pending' or s.revision > r.revision
      order by s.key, s.revision desc, s.file, s.line`,
  );
  await client.query('alter table ol_reimport_changed add primary key (file, line)');
  return rowCount ?? 0;
}

// Line numbers fetched at a time: a re-import of a dump that is all new stays in bounded memory.
const PAGE = 50_000;

/** The lines of one file to apply, in line order. */
export async function* changedLines(client: PoolClient, file: number): AsyncGenerator<number> {
  let after = 0;
  for (;;) {
    const { rows } = await client.query<{ line: number }>(
      'select line from ol_reimport_changed where file = $1 and line > $2 order by line limit $3',
      [file, after, PAGE],
    );
    for (const { line } of rows) yield line;
    if (rows.length < PAGE) return;
    after = rows[rows.length - 1]!.line;
  }
}

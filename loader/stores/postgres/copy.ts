import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { from as copyFrom } from 'pg-copy-streams';
import type { PoolClient } from '../../../src/stores/postgres/pool.js';

/**
 * Rows into a table with `COPY ... FROM STDIN` (text format), in the caller's transaction: the
 * cheapest way to hand PostgreSQL many rows (a JSON parameter costs it about three times as much per
 * row). Values are text, numbers, text arrays or null.
 */

// Rows per chunk written to the stream: large enough to cost nothing per row, small enough to stream.
const ROWS_PER_CHUNK = 500;

export async function copyRows(client: PoolClient, table: string, columns: readonly string[], rows: readonly object[]): Promise<void> {
  if (rows.length === 0) return;
  await copyText(client, table, columns, chunks(columns, rows));
}

/**
 * Rows of `table` into a staging table of the session (emptied first, and at commit) in one COPY,
 * for the caller's statement to apply; answers its name. Its columns are the table's, but text for
 * `ids`, the columns of entity ids: the rows hold public ids, which the table stores as keys, so the
 * statement applying them parses each once (entity_key).
 */
export async function stageRows(
  client: PoolClient,
  table: string,
  columns: readonly string[],
  ids: readonly string[],
  rows: readonly object[],
): Promise<string> {
  const staging = `${table}_batch`;
  await client.query(
    `create temp table if not exists ${staging} on commit delete rows as
     select ${columns.map((column) => (ids.includes(column) ? `null::text as ${column}` : column)).join(', ')} from ${table} with no data`,
  );
  // A transaction may stage several batches (a first load's record path does).
  await client.query(`truncate ${staging}`);
  await copyRows(client, staging, columns, rows);
  return staging;
}

/** Rows into a table as copyRows writes them, through stageRows: `ids` are its columns of entity ids. */
export async function copyRowsWithIds(
  client: PoolClient,
  table: string,
  columns: readonly string[],
  ids: readonly string[],
  rows: readonly object[],
): Promise<void> {
  if (rows.length === 0) return;
  const staging = await stageRows(client, table, columns, ids, rows);
  await client.query(
    `insert into ${table} (${columns.join(', ')})
     select ${columns.map((column) => (ids.includes(column) ? `entity_key(${column})` : column)).join(', ')} from ${staging}`,
  );
}

/** Rows already in COPY's text format (see `copyLines`), in one COPY statement. */
export async function copyText(
  client: PoolClient,
  table: string,
  columns: readonly string[],
  text: Iterable<string> | AsyncIterable<string>,
): Promise<void> {
  const stream = client.query(copyFrom(`copy ${table} (${columns.join(', ')}) from stdin`));
  await pipeline(Readable.from(text), stream);
}

function* chunks(columns: readonly string[], rows: readonly object[]): Generator<string> {
  for (let start = 0; start < rows.length; start += ROWS_PER_CHUNK) yield copyLines(columns, rows.slice(start, start + ROWS_PER_CHUNK));
}

/** Rows as lines of COPY's text format. */
export function copyLines(columns: readonly string[], rows: readonly object[]): string {
  let text = '';
  for (const row of rows) {
    for (const [at, column] of columns.entries()) text += (at === 0 ? '' : '\t') + field((row as Record<string, unknown>)[column]);
    text += '\n';
  }
  return text;
}

const ESCAPES: Record<string, string> = { '\\': '\\\\', '\t': '\\t', '\n': '\\n', '\r': '\\r' };
const SPECIAL = /[\\\t\n\r]/g;
const escaped = (text: string): string => text.replace(SPECIAL, (character) => ESCAPES[character]!);

/** One value in COPY's text format: `\N` for null, a text array as its literal, backslash escapes. */
function field(value: unknown): string {
  if (value === null || value === undefined) return '\\N';
  if (Array.isArray(value)) return escaped(`{${value.map((element) => `"${String(element).replace(/["\\]/g, '\\$&')}"`).join(',')}}`);
  if (typeof value === 'string') return escaped(value);
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  throw new TypeError(`a ${typeof value} has no COPY text form here`);
}

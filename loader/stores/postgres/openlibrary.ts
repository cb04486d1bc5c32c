import type { WorkKind } from '../../../src/domain/titles.js';
import type { Pool, PoolClient, Queryable } from '../../../src/stores/postgres/pool.js';
import { copyRowsWithIds, stageRows } from './copy.js';
import { withStoredCover } from './covers.js';
import { EDITION_FIELDS, creditAuthors, editionFieldsOf, type EditionFields } from './editions.js';

/**
 * The SQL of the Open Library importer: its bookkeeping (openlibrary_records), external identifiers,
 * and set-based writes of authors, works and books, each one statement (or one COPY) for a whole
 * batch. New rows are copied straight into their table; the keys' rows, inserted or updated, go
 * through a staging table. What to write is decided in loader/import/openlibrary/; every function
 * runs in the caller's transaction.
 */

export type OlState = 'record' | 'pending' | 'redirect' | 'delete';

export interface OlRecordRow {
  key: string;
  revision: number;
  state: OlState;
  entity_id: string | null;
  /** See keys.ts digestOf. */
  digest: string | null;
  redirect_to: string | null;
}

/**
 * Prices index probes as what they are for a batch's lookups: reads of cached pages. With the default
 * cost of a random page (4, a spinning disk's), a few thousand probes of `key = any($1)` cost more on
 * paper than a parallel scan of the whole table, which is several times slower in fact. For the rest
 * of the caller's transaction only.
 */
export async function priceIndexProbesAsCached(client: PoolClient): Promise<void> {
  await client.query('set local random_page_cost = 1.1');
}

// The digest as text: a bigint past 2^53 would not survive the pool's conversion to a JS number.
const RECORD_READ = 'key, revision, state, public_id(entity_id) as entity_id, digest::text as digest, redirect_to';

export async function olRecords(client: PoolClient, keys: readonly string[]): Promise<Map<string, OlRecordRow>> {
  if (keys.length === 0) return new Map();
  const { rows } = await client.query<OlRecordRow>(`select ${RECORD_READ} from openlibrary_records where key = any($1)`, [keys]);
  return new Map(rows.map((row) => [row.key, row]));
}

/** Keys redirected to any of `targets` whose own entity has not been merged yet. */
export async function redirectsTo(client: PoolClient, targets: readonly string[]): Promise<OlRecordRow[]> {
  if (targets.length === 0) return [];
  const { rows } = await client.query<OlRecordRow>(
    `select ${RECORD_READ} from openlibrary_records
      where redirect_to = any($1) and entity_id is not null`,
    [targets],
  );
  return rows;
}

const RECORD_COLUMNS = ['key', 'revision', 'state', 'entity_id', 'digest', 'redirect_to'] as const;

/** Inserts or replaces the rows of keys: copied into a staging table (see stageRows), then one upsert. */
export async function saveOlRecords(client: PoolClient, rows: readonly OlRecordRow[]): Promise<void> {
  if (rows.length === 0) return;
  const staging = await stageRows(client, 'openlibrary_records', RECORD_COLUMNS, ['entity_id'], rows);
  await client.query(
    `insert into openlibrary_records (${RECORD_COLUMNS.join(', ')})
     select key, revision, state, entity_key(entity_id), digest, redirect_to from ${staging}
     on conflict (key) do update set revision = excluded.revision, state = excluded.state, entity_id = excluded.entity_id,
       digest = excluded.digest, redirect_to = excluded.redirect_to`,
  );
}

export interface ExternalId {
  entity_id: string;
  scheme: string;
  value: string;
}

/** Adds identifiers; one already known is left as it is. */
export async function addExternalIds(client: PoolClient, ids: readonly ExternalId[]): Promise<void> {
  if (ids.length === 0) return;
  await client.query(
    `insert into external_ids (entity_id, scheme, value)
     select * from unnest(entity_keys($1), $2::text[], $3::text[])
     on conflict do nothing`,
    [ids.map((id) => id.entity_id), ids.map((id) => id.scheme), ids.map((id) => id.value)],
  );
}

export interface OlAuthorRow {
  id: string;
  name: string;
  bio: string | null;
  birth_date: string | null;
  death_date: string | null;
  alternate_names: string[];
}

export interface OlWorkRow {
  id: string;
  title: string;
  subtitle: string | null;
  kind: WorkKind;
  subjects: string[];
  description: string | null;
  original_year: number | null;
  cover_url: string | null;
}

const COLUMNS = {
  authors: ['name', 'bio', 'birth_date', 'death_date', 'alternate_names'],
  works: ['title', 'subtitle', 'kind', 'subjects', 'description', 'original_year', 'cover_url'],
} as const;

/** New authors (identity key `ol:<key>`: Open Library tells its homonyms apart) or works (work key `ol:<key>`). */
export async function insertKeyed(
  client: PoolClient,
  table: 'authors',
  rows: readonly (OlAuthorRow & { name_key: string })[],
): Promise<void>;
export async function insertKeyed(client: PoolClient, table: 'works', rows: readonly (OlWorkRow & { work_key: string })[]): Promise<void>;
export async function insertKeyed(client: PoolClient, table: keyof typeof COLUMNS, rows: readonly object[]): Promise<void> {
  await copyRowsWithIds(
    client,
    table,
    ['id', table === 'authors' ? 'name_key' : 'work_key', ...COLUMNS[table]],
    ['id'],
    rows.map(withStoredCover),
  );
}

/** Replaces the Open Library fields of authors or works (a record revives a deleted one). */
export async function updateKeyed(client: PoolClient, table: 'authors', rows: readonly OlAuthorRow[]): Promise<void>;
export async function updateKeyed(client: PoolClient, table: 'works', rows: readonly OlWorkRow[]): Promise<void>;
export async function updateKeyed(client: PoolClient, table: keyof typeof COLUMNS, rows: readonly object[]): Promise<void> {
  if (rows.length === 0) return;
  // The ids are public ids, parsed here: the row type's bigint column would refuse them.
  await client.query(
    `update ${table} t set ${COLUMNS[table].map((column) => `${column} = r.${column}`).join(', ')}, deleted_at = null, updated_at = now()
       from jsonb_array_elements($1) e cross join jsonb_populate_record(null::${table}, e - 'id') r where t.id = entity_key(e->>'id')`,
    [JSON.stringify(rows.map(withStoredCover))],
  );
}

/** The books (merged ones aside) of the works whose kind `rows`, about to be written, change. */
export async function booksOfKindChanges(client: PoolClient, rows: readonly Pick<OlWorkRow, 'id' | 'kind'>[]): Promise<string[]> {
  if (rows.length === 0) return [];
  const { rows: books } = await client.query<{ id: string }>(
    `select public_id(b.id) as id from unnest(entity_keys($1), $2::text[]) r(id, kind) join works w on w.id = r.id and w.kind <> r.kind
       join books b on b.work_id = w.id and b.merged_into is null
      order by b.id`,
    [rows.map((row) => row.id), rows.map((row) => row.kind)],
  );
  return books.map((book) => book.id);
}

/** Work keys of works by id (to tell Open Library's works from ours). */
export async function workKeys(client: PoolClient, ids: readonly string[]): Promise<Map<string, string>> {
  if (ids.length === 0) return new Map();
  const { rows } = await client.query<{ id: string; work_key: string }>(
    'select public_id(id) as id, work_key from works where id = any(entity_keys($1))',
    [ids],
  );
  return new Map(rows.map((row) => [row.id, row.work_key]));
}

/** A book as the importer compares it. */
export type OlStoredBook = EditionFields & {
  id: string;
  work_id: string;
  isbn_13: string | null;
  source_key: string | null;
  merged_into: string | null;
  deleted_at: Date | null;
  author_ids: string[];
};

const BOOK_READ = `select public_id(b.id) as id, public_id(b.work_id) as work_id, b.isbn_13, b.source_key, public_id(b.merged_into) as merged_into,
       b.deleted_at, ${editionFieldsOf('b')},
       coalesce((select array_agg(public_id(author_id) order by position) from book_authors where book_id = b.id), '{}') as author_ids
  from books b`;

export async function booksByIdOrIsbn(client: PoolClient, ids: readonly string[], isbn13s: readonly string[]): Promise<OlStoredBook[]> {
  if (ids.length === 0 && isbn13s.length === 0) return [];
  const { rows } = await client.query<OlStoredBook>(`${BOOK_READ} where b.id = any(entity_keys($1)) or b.isbn_13 = any($2)`, [
    ids,
    isbn13s,
  ]);
  return rows;
}

export type OlBookRow = Partial<EditionFields> & {
  id: string;
  work_id: string;
  isbn_13: string | null;
  isbn_10: string | null;
  source_key: string;
};
export type OlBookUpdate = EditionFields & { id: string; work_id: string; deleted_at: Date | null };

// Popularity keeps its default: Open Library has none.
const NEW_BOOK_COLUMNS = [
  'id',
  'work_id',
  'isbn_13',
  'isbn_10',
  'source_key',
  ...EDITION_FIELDS.filter((field) => field !== 'popularity'),
] as const;

export async function insertOlBooks(client: PoolClient, books: readonly OlBookRow[]): Promise<void> {
  await copyRowsWithIds(client, 'books', NEW_BOOK_COLUMNS, ['id', 'work_id'], books.map(withStoredCover));
}

/** Writes the work, every edition field and the deletion mark of each book. */
export async function updateOlBooks(client: PoolClient, books: readonly OlBookUpdate[]): Promise<void> {
  if (books.length === 0) return;
  const columns = [...EDITION_FIELDS, 'deleted_at'];
  // The ids are public ids, parsed here: the row type's bigint columns would refuse them.
  await client.query(
    `update books b set work_id = entity_key(e->>'work_id'), ${columns.map((column) => `${column} = r.${column}`).join(', ')}, updated_at = now()
       from jsonb_array_elements($1) e cross join jsonb_populate_record(null::books, e - '{id,work_id}'::text[]) r
      where b.id = entity_key(e->>'id')`,
    [JSON.stringify(books.map(withStoredCover))],
  );
}

/** Replaces the credits of each book with the authors given, in order. */
export async function replaceCredits(
  client: PoolClient,
  credits: readonly { bookId: string; authorIds: readonly string[] }[],
): Promise<void> {
  if (credits.length === 0) return;
  await client.query('delete from book_authors where book_id = any(entity_keys($1))', [credits.map((credit) => credit.bookId)]);
  await creditAuthors(client, credits);
}

/** Marks entities of one table deleted; answers those that were live. */
export async function markDeleted(client: PoolClient, table: 'books' | 'works' | 'authors', ids: readonly string[]): Promise<string[]> {
  if (ids.length === 0) return [];
  const { rows } = await client.query<{ id: string }>(
    `update ${table} set deleted_at = now(), updated_at = now()
      where id = any(entity_keys($1)) and deleted_at is null and merged_into is null returning public_id(id) as id`,
    [ids],
  );
  return rows.map((row) => row.id);
}

/** The survivor of each id (itself when not merged). */
export async function survivors(
  client: PoolClient,
  table: 'books' | 'works' | 'authors',
  ids: readonly string[],
): Promise<Map<string, string>> {
  if (ids.length === 0) return new Map();
  const { rows } = await client.query<{ id: string; survivor: string }>(
    `select public_id(id) as id, public_id(coalesce(merged_into, id)) as survivor from ${table} where id = any(entity_keys($1))`,
    [ids],
  );
  return new Map(rows.map((row) => [row.id, row.survivor]));
}

/** Fresh planner statistics for the tables an import grows (outside any batch's transaction). */
export async function analyzeOlTables(db: Pool): Promise<void> {
  await db.query('analyze books, works, authors, book_authors, external_ids, openlibrary_records');
}

/** Whether the catalogue holds any Open Library key (a first load is for a catalogue that does not). */
export async function hasOlRecords(db: Queryable): Promise<boolean> {
  const { rows } = await db.query<{ any: boolean }>('select exists (select 1 from openlibrary_records) as any');
  return rows[0]!.any;
}

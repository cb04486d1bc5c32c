import type { Pool, PoolClient } from '../../../src/stores/postgres/pool.js';
import type { WorkKind } from '../../../src/domain/titles.js';
import { withStoredCover } from './covers.js';

/**
 * The SQL of the catalogue's write side for importers: authors and their spellings, works, editions
 * and their credited authors. Which rows to write, and with what, is decided by the loader
 * (loader/import/editions.ts); every function here runs in the caller's transaction.
 */

/** Fields of a book an importer may supply; absent means "this source does not know". */
export interface EditionFields {
  title: string;
  subtitle: string | null;
  series: string | null;
  series_number: string | null;
  publisher: string | null;
  year: number | null;
  language: string | null;
  pages: number | null;
  cover_url: string | null;
  popularity: number;
  average_rating: number | null;
  /** The Goodreads work whose ratings goodreads_rated counts (goodbooks' work_id). */
  goodreads_work: number | null;
  /** How many of that work's Goodreads readers gave 1, 2, 3, 4 and 5 stars. */
  goodreads_rated: number[] | null;
  subjects: string[] | null;
  description: string | null;
  physical_format: string | null;
}

export type EditionField = keyof EditionFields;
export const EDITION_FIELDS: readonly EditionField[] = [
  'title',
  'subtitle',
  'series',
  'series_number',
  'publisher',
  'year',
  'language',
  'pages',
  'cover_url',
  'popularity',
  'average_rating',
  'goodreads_work',
  'goodreads_rated',
  'subjects',
  'description',
  'physical_format',
];

/** The edition fields of the books row `alias` as importers read them: a cover's URL whole (see covers.ts). */
export const editionFieldsOf = (alias: string): string =>
  EDITION_FIELDS.map((field) => (field === 'cover_url' ? `cover_url_of(${alias}.cover_url) as cover_url` : `${alias}.${field}`)).join(', ');

/** An edition as stored, with what identifies it. */
export type StoredEdition = EditionFields & {
  id: string;
  isbn_13: string | null;
  isbn_10: string | null;
  source_key: string | null;
  work_id: string;
  merged_into: string | null;
};

export type NewEdition = Partial<EditionFields> & Pick<StoredEdition, 'id' | 'work_id' | 'isbn_13' | 'isbn_10' | 'source_key'>;

/** The author each identity key already names, through any of its spellings. */
export async function authorIdsByKey(client: PoolClient, keys: readonly string[]): Promise<Map<string, string>> {
  const { rows } = await client.query<{ name_key: string; author_id: string }>(
    'select distinct on (name_key) name_key, public_id(author_id) as author_id from author_names where name_key = any($1)',
    [keys],
  );
  return new Map(rows.map((row) => [row.name_key, row.author_id]));
}

/** Inserts the authors whose key is new; answers the id of each inserted, by key. A key created meanwhile by another transaction is left out. */
export async function insertAuthors(
  client: PoolClient,
  authors: readonly { id: string; name: string; key: string }[],
): Promise<Map<string, string>> {
  const { rows } = await client.query<{ id: string; name_key: string }>(
    `insert into authors (id, name, name_key)
     select * from unnest(entity_keys($1), $2::text[], $3::text[])
     on conflict (name_key) do nothing
     returning public_id(id) as id, name_key`,
    [authors.map((author) => author.id), authors.map((author) => author.name), authors.map((author) => author.key)],
  );
  return new Map(rows.map((row) => [row.name_key, row.id]));
}

/** The surviving author of each key (a merged author answers its survivor). */
export async function survivingAuthorIdsByKey(client: PoolClient, keys: readonly string[]): Promise<Map<string, string>> {
  const { rows } = await client.query<{ id: string; name_key: string }>(
    'select public_id(coalesce(merged_into, id)) as id, name_key from authors where name_key = any($1)',
    [keys],
  );
  return new Map(rows.map((row) => [row.name_key, row.id]));
}

/** Records spellings of authors; answers those not seen before. */
export async function insertSpellings(
  client: PoolClient,
  spellings: readonly { name: string; key: string; authorId: string }[],
): Promise<{ name: string; authorId: string }[]> {
  const { rows } = await client.query<{ name: string; author_id: string }>(
    `insert into author_names (name, name_key, author_id)
     select * from unnest($1::text[], $2::text[], entity_keys($3))
     on conflict (name) do nothing
     returning name, public_id(author_id) as author_id`,
    [spellings.map((s) => s.name), spellings.map((s) => s.key), spellings.map((s) => s.authorId)],
  );
  return rows.map((row) => ({ name: row.name, authorId: row.author_id }));
}

export async function authorNames(client: PoolClient, ids: readonly string[]): Promise<{ id: string; name: string }[]> {
  const { rows } = await client.query<{ id: string; name: string }>(
    'select public_id(id) as id, name from authors where id = any(entity_keys($1))',
    [ids],
  );
  return rows;
}

export async function updateAuthorName(client: PoolClient, id: string, name: string): Promise<void> {
  await client.query('update authors set name = $2, updated_at = now() where id = entity_key($1)', [id, name]);
}

export async function touchAuthor(client: PoolClient, id: string): Promise<void> {
  await client.query('update authors set updated_at = now() where id = entity_key($1)', [id]);
}

/**
 * Inserts the works whose grouping key is new; answers the ids inserted. Grouping keys hold a "|",
 * and their index only them (migration 040): the same condition here lets the planner use it.
 */
export async function insertWorks(
  client: PoolClient,
  works: readonly { id: string; key: string; title: string; originalYear: number | null; kind: WorkKind }[],
): Promise<string[]> {
  const { rows } = await client.query<{ id: string }>(
    `insert into works (id, work_key, title, original_year, kind)
     select * from unnest(entity_keys($1), $2::text[], $3::text[], $4::int[], $5::text[])
     on conflict (work_key) where work_key like '%|%' do nothing
     returning public_id(id) as id`,
    [
      works.map((work) => work.id),
      works.map((work) => work.key),
      works.map((work) => work.title),
      works.map((work) => work.originalYear),
      works.map((work) => work.kind),
    ],
  );
  return rows.map((row) => row.id);
}

/** Works by grouping key (see insertWorks). */
export async function worksByKey(
  client: PoolClient,
  keys: readonly string[],
): Promise<{ id: string; work_key: string; merged_into: string | null }[]> {
  const { rows } = await client.query<{ id: string; work_key: string; merged_into: string | null }>(
    "select public_id(id) as id, work_key, public_id(merged_into) as merged_into from works where work_key = any($1) and work_key like '%|%'",
    [keys],
  );
  return rows;
}

/**
 * Editions by ISBN-13 or by the source key of a row without ISBN. Open Library's source keys are
 * never looked up here, and the index of source keys leaves them out (the same condition lets the
 * planner use it).
 */
export async function editionsByIsbnOrSourceKey(
  client: PoolClient,
  isbn13s: readonly string[],
  sourceKeys: readonly string[],
): Promise<StoredEdition[]> {
  const { rows } = await client.query<StoredEdition>(
    `select public_id(b.id) as id, b.isbn_13, b.isbn_10, b.source_key, public_id(b.work_id) as work_id, public_id(b.merged_into) as merged_into,
            ${editionFieldsOf('b')}
       from books b where isbn_13 = any($1) or (source_key = any($2) and source_key not like 'openlibrary:%')`,
    [isbn13s, sourceKeys],
  );
  return rows;
}

export async function insertEditions(client: PoolClient, editions: readonly NewEdition[]): Promise<void> {
  const columns = ['isbn_13', 'isbn_10', 'source_key', ...EDITION_FIELDS];
  // The ids are public ids, parsed here: the row type's bigint columns would refuse them.
  await client.query(
    `insert into books (id, work_id, ${columns.join(', ')})
     select entity_key(e->>'id'), entity_key(e->>'work_id'), ${columns.map((column) => `r.${column}`).join(', ')}
       from jsonb_array_elements($1) e cross join jsonb_populate_record(null::books, e - '{id,work_id}'::text[]) r`,
    [JSON.stringify(editions.map(withStoredCover))],
  );
}

export async function updateEdition(client: PoolClient, id: string, changed: Partial<Record<EditionField, unknown>>): Promise<void> {
  const fields = Object.keys(changed) as EditionField[];
  const stored = withStoredCover(changed);
  await client.query(
    `update books set ${[...fields.map((field, index) => `${field} = $${index + 2}`), 'updated_at = now()'].join(', ')} where id = entity_key($1)`,
    [id, ...fields.map((field) => stored[field])],
  );
}

/** The authors credited on an edition, in credited order. */
export async function creditedAuthorIds(client: PoolClient, bookId: string): Promise<string[]> {
  const { rows } = await client.query<{ author_id: string }>(
    'select public_id(author_id) as author_id from book_authors where book_id = entity_key($1) order by position',
    [bookId],
  );
  return rows.map((row) => row.author_id);
}

/** Credits authors on editions, in the order given (an author named twice is credited once). */
export async function creditAuthors(
  client: PoolClient,
  credits: readonly { bookId: string; authorIds: readonly string[] }[],
): Promise<void> {
  const rows = credits.flatMap(({ bookId, authorIds }) =>
    [...new Set(authorIds)].map((authorId, position) => ({ bookId, authorId, position })),
  );
  if (rows.length === 0) return;
  await client.query(
    `insert into book_authors (book_id, author_id, position)
     select * from unnest(entity_keys($1), entity_keys($2), $3::smallint[])`,
    [rows.map((row) => row.bookId), rows.map((row) => row.authorId), rows.map((row) => row.position)],
  );
}

export async function uncreditAuthors(client: PoolClient, bookId: string): Promise<void> {
  await client.query('delete from book_authors where book_id = entity_key($1)', [bookId]);
}

/**
 * Fresh planner statistics for the tables a catalogue import grows, once its batches are committed:
 * autovacuum may be off or behind, and a planner that guesses from empty tables turns the API's
 * reads (an author's work count, say) into scans that outlast a request's wait.
 */
export async function analyzeCatalogueTables(db: Pool): Promise<void> {
  await db.query('analyze books, works, authors, author_names, book_authors, changes');
}

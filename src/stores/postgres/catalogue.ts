import type { AuthorRecord, AuthorSummary, BookRecord, Lookup, WorkListing, WorkRecord } from '../../domain/records.js';
import { AUTHOR_WORKS_SHOWN, WORK_EDITIONS_SHOWN } from '../../domain/records.js';
import type { Queryable } from './pool.js';

/**
 * Read side of the catalogue: the records the API returns, built in SQL. The point lookups take a
 * list of keys, so that the lookups of one turn share a query (see PointReads), and are named
 * statements: each connection parses and plans them once, not on every cache miss. Ids go in through
 * entity_keys and come out through public_id (migration 060).
 */

/** The identifiers of entity `id` (a column reference) as a JSON object of arrays by scheme. */
const IDENTIFIERS = (id: string) => `
  coalesce((select json_object_agg(i.scheme, i.ids) from (
      select 'openlibrary' as scheme, json_agg(o.key order by o.key) as ids
        from openlibrary_records o where o.entity_id = ${id} and o.state = 'record' having count(*) > 0
      union all
      select e.scheme, json_agg(e.value order by e.value) from external_ids e where e.entity_id = ${id} group by e.scheme) i), '{}'::json)`;

// One SELECT list for every book query, so a book reads the same wherever it comes from.
const BOOK_COLUMNS = `
  public_id(b.id) as id, public_id(b.work_id) as work_id, (select w.kind from works w where w.id = b.work_id) as kind, b.isbn_13, b.isbn_10, b.title, b.subtitle, b.series, b.series_number,
  coalesce((select json_agg(json_build_object('id', public_id(a.id), 'name', a.name) order by ba.position)
              from book_authors ba join authors a on a.id = ba.author_id
             where ba.book_id = b.id), '[]'::json) as authors,
  b.publisher, b.year, b.language, b.pages, cover_url_of(b.cover_url) as cover_url, b.physical_format,
  coalesce(b.subjects, '{}') as subjects, b.description,
  b.popularity as ratings_count, b.average_rating,
  readers_of_work(b.work_id) as readers, rating_of_work(b.work_id) as rating,
  ${IDENTIFIERS('b.id')} as identifiers,
  to_char(b.updated_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"') as updated_at`;

/** What a point lookup reads besides the record: whether the row was merged or deleted. */
type Fate = { merged_into: string | null; deleted: boolean };
type BookRow = BookRecord & Fate;

/** Point lookups by key: a record found, or the id it was merged into; keys no row has are absent. */
export type Lookups<T> = Map<string, NonNullable<Lookup<T>>>;

function lookups<T extends object>(rows: (T & Fate)[], keyOf: (row: T) => string): Lookups<T> {
  const found: Lookups<T> = new Map();
  for (const { merged_into: mergedInto, deleted, ...record } of rows) {
    const row = record as unknown as T;
    found.set(keyOf(row), mergedInto ? { mergedInto } : deleted ? { deleted } : { found: row });
  }
  return found;
}

export async function findBooks(db: Queryable, ids: readonly string[]): Promise<Lookups<BookRecord>> {
  const { rows } = await db.query<BookRow>({
    name: 'books-by-id',
    text: `select ${BOOK_COLUMNS}, public_id(b.merged_into) as merged_into, b.deleted_at is not null as deleted
           from books b where b.id = any(entity_keys($1))`,
    values: [ids],
  });
  return lookups(rows, (book) => book.id);
}

export async function findBooksByIsbn13(db: Queryable, isbns: readonly string[]): Promise<Lookups<BookRecord>> {
  const { rows } = await db.query<BookRow>({
    name: 'books-by-isbn13',
    text: `select ${BOOK_COLUMNS}, public_id(b.merged_into) as merged_into, b.deleted_at is not null as deleted
           from books b where b.isbn_13 = any($1)`,
    values: [isbns],
  });
  return lookups(rows, (book) => book.isbn_13!);
}

/** Live books by id, in the order of `ids`; ids that are unknown or merged are left out. */
export async function booksByIds(db: Queryable, ids: readonly string[]): Promise<BookRecord[]> {
  if (ids.length === 0) return [];
  const { rows } = await db.query<BookRecord>(
    `select ${BOOK_COLUMNS} from books b where b.id = any(entity_keys($1)) and b.merged_into is null and b.deleted_at is null`,
    [ids],
  );
  return inOrderOf(ids, rows);
}

/** The rows in the order of `ids`, leaving out ids no row has. */
function inOrderOf<T extends { id: string }>(ids: readonly string[], rows: T[]): T[] {
  const byId = new Map(rows.map((row) => [row.id, row]));
  return ids.flatMap((id) => byId.get(id) ?? []);
}

// The columns of a work that lists of works show too (WorkListing), so all read the same.
export const WORK_LISTING_COLUMNS = `
  public_id(w.id) as id, w.kind, w.title, w.subtitle, w.original_year, cover_url_of(w.cover_url) as cover_url,
  coalesce((select json_agg(json_build_object('id', public_id(a.id), 'name', a.name) order by first_position, a.name)
              from (select ba.author_id, min(ba.position) as first_position
                      from books b join book_authors ba on ba.book_id = b.id
                     where b.work_id = w.id and b.merged_into is null and b.deleted_at is null
                     group by ba.author_id) wa
              join authors a on a.id = wa.author_id), '[]'::json) as authors,
  readers_of_work(w.id) as readers, rating_of_work(w.id) as rating,
  (select count(*)::int from books b where b.work_id = w.id and b.merged_into is null and b.deleted_at is null) as edition_count`;

/** Live works by id, as lists show them, in the order of `ids`; ids that are unknown, merged or deleted are left out. */
export async function workListings(db: Queryable, ids: readonly string[]): Promise<WorkListing[]> {
  if (ids.length === 0) return [];
  const { rows } = await db.query<WorkListing>({
    name: 'work-listings',
    text: `select ${WORK_LISTING_COLUMNS} from works w where w.id = any(entity_keys($1)) and w.merged_into is null and w.deleted_at is null`,
    values: [ids],
  });
  return inOrderOf(ids, rows);
}

export async function findWorks(db: Queryable, ids: readonly string[]): Promise<Lookups<WorkRecord>> {
  const { rows } = await db.query<WorkRecord & Fate>({
    name: 'works-by-id',
    text: `select ${WORK_LISTING_COLUMNS}, coalesce(w.subjects, '{}') as subjects, w.description,
       ${IDENTIFIERS('w.id')} as identifiers,
       coalesce((select json_agg(e) from (
                   select public_id(b.id) as id, b.isbn_13, b.title, b.publisher, b.year, b.language
                     from books b where b.work_id = w.id and b.merged_into is null and b.deleted_at is null
                    order by b.popularity desc, b.year nulls last, b.id
                    limit ${WORK_EDITIONS_SHOWN}) e), '[]'::json) as editions,
       to_char(w.updated_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"') as updated_at,
       public_id(w.merged_into) as merged_into, w.deleted_at is not null as deleted
     from works w where w.id = any(entity_keys($1))`,
    values: [ids],
  });
  return lookups(rows, (work) => work.id);
}

// The columns of an author that search results show too, so both read the same.
const AUTHOR_SUMMARY_COLUMNS = (workCount: string) => `
  public_id(a.id) as id, a.name,
  coalesce((select json_agg(distinct n.name) from (
               select name from author_names where author_id = a.id
               union select unnest(a.alternate_names)) n
             where n.name <> a.name), '[]'::json) as alternate_names,
  ${workCount} as work_count,
  a.bio, a.birth_date, a.death_date, ${IDENTIFIERS('a.id')} as identifiers`;
const WORK_COUNT = `(select count(distinct b.work_id)::int from book_authors ba join books b on b.id = ba.book_id
    where ba.author_id = a.id and b.merged_into is null and b.deleted_at is null)`;

/**
 * Live authors by id, in the order of the hits; ids that are unknown or merged are left out. Their
 * work counts are the search index's (see stores/elasticsearch/search.ts searchAuthors).
 */
export async function authorSummariesOf(db: Queryable, hits: readonly { id: string; workCount: number }[]): Promise<AuthorSummary[]> {
  if (hits.length === 0) return [];
  const { rows } = await db.query<AuthorSummary>(
    `select ${AUTHOR_SUMMARY_COLUMNS('counted.work_count')}
       from unnest(entity_keys($1), $2::int[]) as counted(id, work_count)
       join authors a on a.id = counted.id
      where a.merged_into is null and a.deleted_at is null`,
    [hits.map((hit) => hit.id), hits.map((hit) => hit.workCount)],
  );
  return inOrderOf(
    hits.map((hit) => hit.id),
    rows,
  );
}

export async function findAuthors(db: Queryable, ids: readonly string[]): Promise<Lookups<AuthorRecord>> {
  const { rows } = await db.query<AuthorRecord & Fate>({
    name: 'authors-by-id',
    text: `select ${AUTHOR_SUMMARY_COLUMNS(WORK_COUNT)},
       coalesce((select json_agg(json_build_object('id', public_id(w.id), 'title', w.title, 'original_year', w.original_year)
                          order by pw.popularity desc, w.title)
                   from (select b.work_id, sum(b.popularity) as popularity
                           from book_authors ba join books b on b.id = ba.book_id
                          where ba.author_id = a.id and b.merged_into is null and b.deleted_at is null
                          group by b.work_id
                          order by popularity desc
                          limit ${AUTHOR_WORKS_SHOWN}) pw
                   join works w on w.id = pw.work_id), '[]'::json) as works,
       to_char(a.updated_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"') as updated_at,
       public_id(a.merged_into) as merged_into, a.deleted_at is not null as deleted
     from authors a where a.id = any(entity_keys($1))`,
    values: [ids],
  });
  return lookups(rows, (author) => author.id);
}

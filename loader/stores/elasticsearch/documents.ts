import Cursor from 'pg-cursor';
import { authorKey } from '../../../src/domain/names.js';
import { PRIOR_MEAN, PRIOR_RATINGS } from '../../../src/domain/ratings.js';
import { distinctSubjects } from '../../../src/domain/subjects.js';
import type { BookRecord } from '../../../src/domain/records.js';
import type { PoolClient, Queryable } from '../../../src/stores/postgres/pool.js';
import type { IndexKind } from './indices.js';

/**
 * The documents of the search indices, built from PostgreSQL in batches: one SQL statement per batch
 * of ids (sync) or one streamed statement for the whole table (reindex), never one query per row.
 *
 * Book documents are assembled by PostgreSQL itself as JSON text (json_build_object), so a full
 * reindex pipes them into bulk requests without parsing and re-serialising a million objects in
 * Node. Author documents need authorKey() from src/domain/names.ts and are finished here, and so
 * are the subject fields of book documents (subjectKey() of src/domain/subjects.ts).
 *
 * The per-row lookups are written as `lateral (… offset 0)` subqueries so that they stay primary-key
 * probes whatever the planner's statistics say: right after a bulk import, before autovacuum has
 * analysed the tables, a hash join over a whole table per author is far slower.
 *
 * Only live entities (neither merged nor deleted) have documents. `updated_seq` is the change-sequence
 * number the document is versioned with in Elasticsearch (see loader/index/sync.ts).
 */

/** Shape of a document in the books index (mappings/books.json): the record's fields, plus what search needs. */
export type BookDocument = Pick<
  BookRecord,
  | 'id'
  | 'work_id'
  | 'kind'
  | 'isbn_13'
  | 'isbn_10'
  | 'title'
  | 'subtitle'
  | 'series'
  | 'series_number'
  | 'authors'
  | 'publisher'
  | 'year'
  | 'language'
  | 'pages'
  | 'cover_url'
  | 'physical_format'
  | 'subjects'
  | 'average_rating'
> & {
  /** The work's title: for goodbooks its original title, which a record may give instead of the edition's. */
  work_title: string;
  author_ids: string[];
  author_names: string[];
  /** The name of the author credited first: the book is theirs more than a co-author's or contributor's. */
  first_author: string | null;
  /** Each credit as "<author id>\u001f<name>": the author facet counts and names them in one aggregation. */
  author_facet: string[];
  /** The book's ratings_count (books.popularity) plus its work's popularity from readers and editions (work_popularity). */
  popularity: number;
  /** The book's damped average rating (domain/ratings.ts); null when nobody rated it. */
  rating: number | null;
  /** What a work sorts by when search shows one result per work: the year it was first published (the edition's year when unknown), */
  work_year: number | null;
  /** the popularity of all its live editions together, */
  work_readers: number;
  /** and the damped average of all their ratings. */
  work_rating: number | null;
  /** subjectKey() of each subject, once. */
  subject_keys: string[];
  /** "<key>\u001f<spelling>" for each key: the subject facet shows a key in its most common spelling. */
  subject_facet: string[];
  /** Ids of live books "readers of this book also liked", best first; never an edition of the same work. */
  also_liked: string[];
  updated_seq: number;
};

/** Shape of a document in the authors index (mappings/authors.json). */
export interface AuthorDocument {
  id: string;
  name: string;
  alternate_names: string[];
  /** authorKey(name) */
  name_key: string;
  /** Distinct works of the author's live books. */
  work_count: number;
  /** Sum of the popularity of the author's live books, as their documents have it. */
  popularity: number;
  updated_seq: number;
}

/** A document ready for a bulk request: its id and its JSON text. */
export interface BuiltDocument {
  id: string;
  json: string;
}

// The damped average of domain/ratings.ts, over `count` ratings summing to `sum`.
const dampedRating = (count: string, sum: string) =>
  `case when ${count} > 0 then (${PRIOR_RATINGS} * ${PRIOR_MEAN} + ${sum}) / (${PRIOR_RATINGS} + ${count}) end`;

// $1 is the version (updated_seq); the filter may use $2. The subject fields are added by bookDocument.
const BOOK_SELECT = (filter: string) => `
  select b.id, coalesce(b.subjects, w.subjects, '{}') as subjects, json_build_object(
      'id', b.id,
      'work_id', b.work_id,
      'kind', w.kind,
      'work_title', w.title,
      'isbn_13', b.isbn_13,
      'isbn_10', b.isbn_10,
      'title', b.title,
      'subtitle', b.subtitle,
      'series', b.series,
      'series_number', b.series_number,
      'authors', coalesce(a.authors, '[]'::json),
      'author_ids', coalesce(a.ids, '[]'::json),
      'author_names', coalesce(a.names, '[]'::json),
      'first_author', a.names->>0,
      'author_facet', coalesce(a.facet, '[]'::json),
      'publisher', b.publisher,
      'year', b.year,
      'language', b.language,
      'pages', b.pages,
      'cover_url', cover_url_of(b.cover_url),
      'physical_format', b.physical_format,
      -- The edition's subjects, else its work's: Open Library keeps most subjects on works.
      'subjects', coalesce(b.subjects, w.subjects, '{}'),
      'popularity', b.popularity + coalesce(wp.popularity, 0),
      'average_rating', b.average_rating,
      'rating', ${dampedRating('b.popularity', 'b.popularity * b.average_rating')},
      'work_year', coalesce(w.original_year, b.year),
      'work_readers', ws.popularity + coalesce(wp.popularity, 0),
      'work_rating', ${dampedRating('ws.ratings', 'ws.rating_sum')},
      'also_liked', coalesce(l.ids, '[]'::json),
      'updated_seq', $1::bigint
    )::text as json
    from books b
    cross join lateral (select kind, title, subjects, original_year from works where id = b.work_id offset 0) w
    left join lateral (select popularity from work_popularity where work_id = b.work_id offset 0) wp on true
    cross join lateral (
      select sum(e.popularity) as popularity,
             sum(e.popularity) filter (where e.average_rating is not null) as ratings,
             sum(e.popularity * e.average_rating) as rating_sum
        from books e where e.work_id = b.work_id and e.merged_into is null and e.deleted_at is null
    ) ws
    left join lateral (
      select json_agg(json_build_object('id', ba.author_id, 'name', au.name) order by ba.position) as authors,
             json_agg(ba.author_id order by ba.position) as ids,
             json_agg(au.name order by ba.position) as names,
             json_agg(ba.author_id || chr(31) || au.name order by ba.position) as facet
        from book_authors ba
        cross join lateral (select name from authors where id = ba.author_id offset 0) au
       where ba.book_id = b.id
    ) a on true
    left join lateral (
      select json_agg(o.id order by u.ord) as ids
        from book_also_liked al
        cross join lateral unnest(al.liked) with ordinality as u(id, ord)
        cross join lateral (select id from books where id = u.id and merged_into is null and work_id <> b.work_id offset 0) o
       where al.book_id = b.id
    ) l on true
   where b.merged_into is null and b.deleted_at is null and ${filter}`;

const AUTHOR_SELECT = (filter: string) => `
  select a.id, a.name,
         coalesce((select array_agg(distinct n.name) from (
                      select name from author_names where author_id = a.id
                      union select unnest(a.alternate_names)) n
                    where n.name <> a.name), '{}') as alternate_names,
         coalesce(s.work_count, 0)::int as work_count,
         coalesce(s.popularity, 0)::bigint as popularity
    from authors a
    left join lateral (
      select count(distinct b.work_id) as work_count, sum(b.popularity + coalesce(wp.popularity, 0)) as popularity
        from book_authors ba
        cross join lateral (select work_id, popularity from books where id = ba.book_id and merged_into is null and deleted_at is null offset 0) b
        left join lateral (select popularity from work_popularity where work_id = b.work_id offset 0) wp on true
       where ba.author_id = a.id
    ) s on true
   where a.merged_into is null and a.deleted_at is null and ${filter}`;

interface AuthorRow {
  id: string;
  name: string;
  alternate_names: string[];
  work_count: number;
  popularity: number;
}

function authorDocument(row: AuthorRow, seq: number): BuiltDocument {
  const document: AuthorDocument = {
    id: row.id,
    name: row.name,
    alternate_names: row.alternate_names,
    name_key: authorKey(row.name),
    work_count: row.work_count,
    popularity: row.popularity,
    updated_seq: seq,
  };
  return { id: row.id, json: JSON.stringify(document) };
}

interface BookRow extends BuiltDocument {
  subjects: string[];
}

/** The row's JSON with the subject fields, which need subjectKey(), spliced in before its closing brace. */
function bookDocument(row: BookRow): BuiltDocument {
  const subjects = distinctSubjects(row.subjects);
  const fields: Pick<BookDocument, 'subject_keys' | 'subject_facet'> = {
    subject_keys: subjects.map((subject) => subject.key),
    subject_facet: subjects.map((subject) => `${subject.key}\u001f${subject.spelling}`),
  };
  return { id: row.id, json: `${row.json.slice(0, -1)},${JSON.stringify(fields).slice(1)}` };
}

/** Documents of those of `ids` that are live books, in one statement. Missing ids are not live. */
export async function bookDocuments(db: Queryable, ids: readonly string[], seq: number): Promise<BuiltDocument[]> {
  if (ids.length === 0) return [];
  const { rows } = await db.query<BookRow>(BOOK_SELECT('b.id = any($2::text[])'), [seq, ids]);
  return rows.map(bookDocument);
}

/** Documents of those of `ids` that are live authors, in one statement. */
export async function authorDocuments(db: Queryable, ids: readonly string[], seq: number): Promise<BuiltDocument[]> {
  if (ids.length === 0) return [];
  const { rows } = await db.query<AuthorRow>(AUTHOR_SELECT('a.id = any($1::text[])'), [ids]);
  return rows.map((row) => authorDocument(row, seq));
}

/** Live entities of a kind, as the transaction of `client` sees them. */
export async function countLive(db: Queryable, kind: IndexKind): Promise<number> {
  const { rows } = await db.query<{ n: number }>(
    `select count(*)::bigint as n from ${kind} where merged_into is null and deleted_at is null`,
  );
  return rows[0]?.n ?? 0;
}

/**
 * Every live document of a kind, streamed with pg-cursor in batches of `batchSize`, as the
 * transaction of `client` sees the catalogue (reindex runs it in a REPEATABLE READ snapshot).
 */
export async function* streamDocuments(
  client: PoolClient,
  kind: IndexKind,
  seq: number,
  batchSize: number,
): AsyncGenerator<BuiltDocument[]> {
  const cursor = client.query(
    kind === 'books' ? new Cursor<BookRow>(BOOK_SELECT('true'), [seq]) : new Cursor<AuthorRow>(AUTHOR_SELECT('true')),
  );
  try {
    for (;;) {
      const rows = await cursor.read(batchSize);
      if (rows.length === 0) return;
      yield kind === 'books' ? (rows as BookRow[]).map(bookDocument) : (rows as AuthorRow[]).map((row) => authorDocument(row, seq));
    }
  } finally {
    await cursor.close().catch(() => undefined);
  }
}

/**
 * What other documents take from each book: an author's document its work, its popularity as its
 * document has it, and its credits (see AUTHOR_SELECT); the documents of its work's editions its
 * popularity and rating (work_readers, work_rating). A change to a book that leaves these as they
 * were leaves those documents as they were.
 */
export interface BookFacts {
  work_id: string;
  popularity: number;
  average_rating: number | null;
  author_ids: string[];
}

export const sameAuthorFacts = (a: BookFacts, b: BookFacts): boolean =>
  a.work_id === b.work_id && Number(a.popularity) === Number(b.popularity) && a.author_ids.join(' ') === b.author_ids.join(' ');

export const sameWorkFacts = (a: BookFacts, b: BookFacts): boolean =>
  a.work_id === b.work_id && Number(a.popularity) === Number(b.popularity) && Number(a.average_rating) === Number(b.average_rating);

/** Those facts of the live books among `ids`, as PostgreSQL has them now. */
export async function bookFacts(db: Queryable, ids: readonly string[]): Promise<Map<string, BookFacts>> {
  if (ids.length === 0) return new Map();
  const { rows } = await db.query<BookFacts & { id: string }>(
    `select b.id, b.work_id, b.popularity + coalesce(wp.popularity, 0) as popularity, b.average_rating::float8 as average_rating,
            array(select ba.author_id from book_authors ba where ba.book_id = b.id order by ba.position) as author_ids
       from books b left join work_popularity wp on wp.work_id = b.work_id
      where b.id = any($1::text[]) and b.merged_into is null and b.deleted_at is null`,
    [ids],
  );
  return new Map(rows.map(({ id, ...facts }) => [id, facts]));
}

/** Live books credited to any of `authorIds`. */
export async function booksOfAuthors(db: Queryable, authorIds: readonly string[]): Promise<string[]> {
  if (authorIds.length === 0) return [];
  const { rows } = await db.query<{ id: string }>(
    `select distinct b.id from book_authors ba join books b on b.id = ba.book_id
      where ba.author_id = any($1::text[]) and b.merged_into is null and b.deleted_at is null`,
    [authorIds],
  );
  return rows.map((row) => row.id);
}

/** Live editions of any of `workIds`. */
export async function editionsOfWorks(db: Queryable, workIds: readonly string[]): Promise<string[]> {
  if (workIds.length === 0) return [];
  const { rows } = await db.query<{ id: string }>(
    'select id from books where work_id = any($1::text[]) and merged_into is null and deleted_at is null',
    [workIds],
  );
  return rows.map((row) => row.id);
}

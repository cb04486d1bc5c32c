import { AUTHORS_INDEX } from '../../../src/stores/elasticsearch/authorsIndex.js';
import { BOOKS_INDEX } from '../../../src/stores/elasticsearch/booksIndex.js';
import type { FieldDeclaration, IndexDeclaration } from '../../../src/stores/elasticsearch/indexDeclaration.js';
import type { IndexKind } from '../../../src/stores/elasticsearch/indices.js';
import type { PoolClient, Queryable } from '../../../src/stores/postgres/pool.js';

/**
 * The documents of the search indices, built from PostgreSQL in batches: one SQL statement per batch
 * of ids (sync, and reindex page by page), never one query per row.
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

/** A document ready for a bulk request: its id and its JSON text. */
export interface BuiltDocument {
  id: string;
  json: string;
}

type Fields = Readonly<Record<string, FieldDeclaration>>;

/**
 * The select list of a document statement, from the index's declaration: the document's `id` field,
 * the fields PostgreSQL gives as they are, assembled as JSON text by json_build_object (so a full
 * reindex pipes them into bulk requests without parsing and re-serialising a million objects in
 * Node), and the sources of those that code finishes, one column each (`f0`, `f1`, ...).
 */
function selectList(declaration: IndexDeclaration<Fields>): { sql: string; finish: (row: DocumentRow) => BuiltDocument } {
  const fields = Object.entries(declaration.fields).flatMap(([name, field]) => (field.from ? [{ name, from: field.from }] : []));
  // The id is the row's `id` column too (the bulk request's _id): rendered once, and spliced into the JSON.
  const id = fields.find((field) => field.name === 'id')!;
  const plain = fields.filter((field) => field.from.finish === undefined && field !== id);
  const finished = fields.flatMap(({ name, from: { sql, finish } }) => (finish ? [{ name, sql, finish }] : []));
  const sql = [
    `${id.from.sql} as id`,
    `json_build_object(${plain.map((field) => `'${field.name}', ${field.from.sql}`).join(',\n')})::text as json`,
    ...finished.map((field, at) => `${field.sql} as f${at}`),
  ].join(',\n');
  return {
    sql,
    finish: (row) => {
      const values = Object.fromEntries(finished.map((field, at) => [field.name, field.finish(row[`f${at}`])]));
      // The id first, as declared, then the fields PostgreSQL assembled, then the finished ones.
      const members = [`"id":${JSON.stringify(row.id)}`, row.json.slice(1, -1), JSON.stringify(values).slice(1, -1)];
      return { id: row.id, json: `{${members.filter((member) => member !== '').join(',')}}` };
    },
  };
}

interface DocumentRow extends BuiltDocument {
  [finishedSource: `f${number}`]: unknown;
}

/**
 * Which rows a document statement builds: the live ones of the ids $2, or a page, the first $3 live
 * ones after the id $2 in id order (from the first when $2 is null: keys are positive).
 */
type Rows = 'ids' | 'page';
const liveRows = (table: IndexKind, rows: Rows): string =>
  rows === 'ids'
    ? `select * from ${table} where id = any(entity_keys($2)) and merged_into is null and deleted_at is null`
    : `select * from ${table} where id > coalesce(entity_key($2), 0) and merged_into is null and deleted_at is null order by id limit $3`;

const BOOK_FIELDS = selectList(BOOKS_INDEX);

// $1 is the version (updated_seq). Field sources read the tables named in booksIndex.ts. What a
// book takes from all its work's editions (ws, tl) is read once per work of the batch, not once per
// edition: a work of thousands of editions would cost the square of them. Ids are rendered once
// per row they come from (an author's in `au`, a liked book's in `o`).
const bookSelect = (rows: Rows): string => `
  with batch as materialized (${liveRows('books', rows)}
  ), editions as materialized (
    select e.*
      from (select distinct work_id from batch) bw
      cross join lateral (
        select e.work_id, e.id, lower(e.title) as title, e.popularity, e.average_rating
          from books e where e.work_id = bw.work_id and e.merged_into is null and e.deleted_at is null offset 0
      ) e
  ), work_sums as (
    select work_id, sum(popularity) as popularity, sum(popularity) filter (where average_rating is not null) as ratings,
           sum(popularity * average_rating) as rating_sum
      from editions group by work_id
  ), title_leads as (
    select distinct on (work_id, title) id from editions order by work_id, title, popularity desc, id
  )
  select ${BOOK_FIELDS.sql}
    from batch b
    join work_sums ws on ws.work_id = b.work_id
    left join title_leads tl on tl.id = b.id
    cross join lateral (select kind, title, subjects, original_year from works where id = b.work_id offset 0) w
    left join lateral (select popularity from work_popularity where work_id = b.work_id offset 0) wp on true
    left join lateral (
      select json_agg(json_build_object('id', au.id, 'name', au.name) order by ba.position) as authors,
             json_agg(au.id order by ba.position) as ids,
             json_agg(au.name order by ba.position) as names,
             json_agg(au.id || chr(31) || au.name order by ba.position) as facet
        from book_authors ba
        cross join lateral (select public_id(id) as id, name from authors where id = ba.author_id offset 0) au
       where ba.book_id = b.id
    ) a on true
    left join lateral (
      select json_agg(o.id order by u.ord) as ids
        from book_also_liked al
        cross join lateral unnest(al.liked) with ordinality as u(id, ord)
        cross join lateral (select public_id(id) as id from books where id = u.id and merged_into is null and work_id <> b.work_id offset 0) o
       where al.book_id = b.id
    ) l on true`;

const AUTHOR_FIELDS = selectList(AUTHORS_INDEX);

// $1 is the version (updated_seq). Field sources read the tables named in authorsIndex.ts.
const authorSelect = (rows: Rows): string => `
  select ${AUTHOR_FIELDS.sql}
    from (${liveRows('authors', rows)}) a
    left join lateral (
      select count(distinct b.work_id) as work_count, sum(b.popularity + coalesce(wp.popularity, 0)) as popularity
        from book_authors ba
        cross join lateral (select work_id, popularity from books where id = ba.book_id and merged_into is null and deleted_at is null offset 0) b
        left join lateral (select popularity from work_popularity where work_id = b.work_id offset 0) wp on true
       where ba.author_id = a.id
    ) s on true`;

const STATEMENTS = {
  books: { ids: bookSelect('ids'), page: bookSelect('page'), finish: BOOK_FIELDS.finish },
  authors: { ids: authorSelect('ids'), page: authorSelect('page'), finish: AUTHOR_FIELDS.finish },
} as const;

async function documentsOf(db: Queryable, kind: IndexKind, ids: readonly string[], seq: number): Promise<BuiltDocument[]> {
  if (ids.length === 0) return [];
  const { rows } = await db.query<DocumentRow>(STATEMENTS[kind].ids, [seq, ids]);
  return rows.map(STATEMENTS[kind].finish);
}

/** Documents of those of `ids` that are live books, in one statement. Missing ids are not live. */
export const bookDocuments = (db: Queryable, ids: readonly string[], seq: number): Promise<BuiltDocument[]> =>
  documentsOf(db, 'books', ids, seq);

/** Documents of those of `ids` that are live authors, in one statement. */
export const authorDocuments = (db: Queryable, ids: readonly string[], seq: number): Promise<BuiltDocument[]> =>
  documentsOf(db, 'authors', ids, seq);

/** Live entities of a kind, as the transaction of `client` sees them. */
export async function countLive(db: Queryable, kind: IndexKind): Promise<number> {
  const { rows } = await db.query<{ n: number }>(
    `select count(*)::bigint as n from ${kind} where merged_into is null and deleted_at is null`,
  );
  return rows[0]?.n ?? 0;
}

/**
 * Every live document of a kind in batches of `batchSize`, as the transaction of `client` sees the
 * catalogue (reindex runs it in a REPEATABLE READ snapshot): page by page in id order, each page
 * built by the statement sync uses for its batches, reading the page's rows where sync reads its ids.
 */
export async function* streamDocuments(
  client: PoolClient,
  kind: IndexKind,
  seq: number,
  batchSize: number,
): AsyncGenerator<BuiltDocument[]> {
  for (let after: string | null = null; ;) {
    const { rows }: { rows: DocumentRow[] } = await client.query<DocumentRow>(STATEMENTS[kind].page, [seq, after, batchSize]);
    if (rows.length === 0) return;
    // The page's last id (its rows come in no order): ids of one kind sort as their keys do.
    after = rows.reduce((last, row) => (row.id > last ? row.id : last), rows[0]!.id);
    yield rows.map(STATEMENTS[kind].finish);
  }
}

/**
 * What other documents take from each book: an author's document its work, its popularity as its
 * document has it, and its credits (see AUTHOR_SELECT); the documents of its work's editions its
 * popularity and rating (work_readers, work_rating) and its title (which edition offers a title to
 * type-ahead, title_start). A change to a book that leaves these as they
 * were leaves those documents as they were.
 */
export interface BookFacts {
  work_id: string;
  title: string;
  popularity: number;
  average_rating: number | null;
  author_ids: string[];
}

export const sameAuthorFacts = (a: BookFacts, b: BookFacts): boolean =>
  a.work_id === b.work_id && Number(a.popularity) === Number(b.popularity) && a.author_ids.join(' ') === b.author_ids.join(' ');

export const sameWorkFacts = (a: BookFacts, b: BookFacts): boolean =>
  a.work_id === b.work_id &&
  a.title === b.title &&
  Number(a.popularity) === Number(b.popularity) &&
  Number(a.average_rating) === Number(b.average_rating);

/** Those facts of the live books among `ids`, as PostgreSQL has them now. */
export async function bookFacts(db: Queryable, ids: readonly string[]): Promise<Map<string, BookFacts>> {
  if (ids.length === 0) return new Map();
  const { rows } = await db.query<BookFacts & { id: string }>(
    `select public_id(b.id) as id, public_id(b.work_id) as work_id, b.title, b.popularity + coalesce(wp.popularity, 0) as popularity,
            b.average_rating::float8 as average_rating,
            array(select public_id(ba.author_id) from book_authors ba where ba.book_id = b.id order by ba.position) as author_ids
       from books b left join work_popularity wp on wp.work_id = b.work_id
      where b.id = any(entity_keys($1)) and b.merged_into is null and b.deleted_at is null`,
    [ids],
  );
  return new Map(rows.map(({ id, ...facts }) => [id, facts]));
}

/** Live books credited to any of `authorIds`. */
export async function booksOfAuthors(db: Queryable, authorIds: readonly string[]): Promise<string[]> {
  if (authorIds.length === 0) return [];
  const { rows } = await db.query<{ id: string }>(
    `select public_id(l.id) as id
       from (select distinct b.id from book_authors ba join books b on b.id = ba.book_id
              where ba.author_id = any(entity_keys($1)) and b.merged_into is null and b.deleted_at is null) l`,
    [authorIds],
  );
  return rows.map((row) => row.id);
}

/** Live editions of any of `workIds`. */
export async function editionsOfWorks(db: Queryable, workIds: readonly string[]): Promise<string[]> {
  if (workIds.length === 0) return [];
  const { rows } = await db.query<{ id: string }>(
    'select public_id(id) as id from books where work_id = any(entity_keys($1)) and merged_into is null and deleted_at is null',
    [workIds],
  );
  return rows.map((row) => row.id);
}

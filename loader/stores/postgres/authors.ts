import { kindOfId } from '../../../src/domain/ids.js';
import Cursor from 'pg-cursor';
import type { Pool, PoolClient, Queryable } from '../../../src/stores/postgres/pool.js';

/** The SQL of resolving authors across sources (loader/import/authors.ts): the evidence, the records, the works. */

/**
 * Records that a source names these authors on a book whose credits another source keeps. A claim
 * new to the catalogue is new evidence: its author is noted to be resolved (noteToResolve).
 */
export async function claimCredits(client: PoolClient, claims: readonly { bookId: string; authorIds: readonly string[] }[]): Promise<void> {
  const rows = claims.flatMap(({ bookId, authorIds }) => authorIds.map((authorId) => ({ bookId, authorId })));
  if (rows.length === 0) return;
  await client.query(
    `with added as (
       insert into claimed_credits (book_id, author_id)
       select * from unnest(entity_keys($1), entity_keys($2)) on conflict do nothing
       returning author_id
     )
     insert into authors_to_resolve (kind, entity_id) select distinct 'author'::entity_kind, author_id from added`,
    [rows.map((row) => row.bookId), rows.map((row) => row.authorId)],
  );
}

/**
 * Notes, in the caller's transaction, the authors and works among `ids` (other ids are ignored) as
 * changed by an import: their authors are resolved when it ends (resolveTouchedAuthors).
 */
export async function noteToResolve(client: PoolClient, ids: Iterable<string>): Promise<void> {
  const entities = [...ids].flatMap((id) => {
    const kind = kindOfId(id);
    return kind === 'author' || kind === 'work' ? [{ kind, id }] : [];
  });
  if (entities.length === 0) return;
  await client.query(`insert into authors_to_resolve (kind, entity_id) select * from unnest($1::entity_kind[], entity_keys($2))`, [
    entities.map((entity) => entity.kind),
    entities.map((entity) => entity.id),
  ]);
}

/**
 * Notes, in the caller's transaction, every work whose key starts with `prefix`: an Open Library
 * first load's works of editions that name none ("ol-edition:..."). The rest of what a first load
 * writes set-based needs no resolution: Open Library's authors are never merged into one another,
 * and its keyed works ("ol:...") never grouped together; only a work of an edition that names none
 * may join a same-titled work of its author. (What it hands to the record path notes itself.)
 */
export async function noteWorksKeyed(client: PoolClient, prefix: string): Promise<void> {
  await client.query(
    `insert into authors_to_resolve (kind, entity_id) select 'work', id from works where left(work_key, length($1)) = $1 order by id`,
    [prefix],
  );
}

export interface ToResolve {
  /** Row ids, to delete once resolved. */
  rows: number[];
  authorIds: string[];
  workIds: string[];
}

/**
 * Up to `limit` noted rows, oldest first, locked for the caller's transaction; rows another
 * resolver holds are skipped, so concurrent imports share the work instead of repeating it.
 */
export async function takeToResolve(client: PoolClient, limit: number): Promise<ToResolve> {
  const { rows } = await client.query<{ id: number; kind: 'author' | 'work'; entity_id: string }>(
    'select id, kind, public_id(entity_id) as entity_id from authors_to_resolve order by id limit $1 for update skip locked',
    [limit],
  );
  const of = (kind: 'author' | 'work') => [...new Set(rows.filter((row) => row.kind === kind).map((row) => row.entity_id))];
  return { rows: rows.map((row) => row.id), authorIds: of('author'), workIds: of('work') };
}

/**
 * How many rows are noted now, and about how many authors the catalogue holds (the planner's
 * count, fresh after an import: counting them would read the whole table for a small import).
 */
export async function notedAgainstAuthors(db: Queryable): Promise<{ noted: number; authors: number }> {
  const { rows } = await db.query<{ noted: number; authors: number }>(
    `select (select count(*) from authors_to_resolve)::float8 as noted,
            greatest((select reltuples from pg_class where oid = 'authors'::regclass), 0)::float8 as authors`,
  );
  return rows[0]!;
}

/** The ids of every noted row now (a full pass resolves them all). */
export async function notedRows(db: Queryable): Promise<number[]> {
  const { rows } = await db.query<{ id: number }>('select id from authors_to_resolve');
  return rows.map((row) => row.id);
}

/** Deletes noted rows once what they stand for is resolved. */
export async function forgetResolved(db: Queryable, rows: readonly number[]): Promise<void> {
  if (rows.length > 0) await db.query('delete from authors_to_resolve where id = any($1::bigint[])', [rows]);
}

/**
 * The live authors that `authorIds` stand for now (each its survivor), with those credited or
 * claimed on live books of `workIds` (each its survivor).
 */
export async function liveAuthorsOf(db: Queryable, authorIds: readonly string[], workIds: readonly string[]): Promise<string[]> {
  const { rows } = await db.query<{ id: string }>(
    `with work as (
       select coalesce(w.merged_into, w.id) as id from works w where w.id = any(entity_keys($2))
     ), named as (
       select a.id from authors a where a.id = any(entity_keys($1))
       union
       select ba.author_id from work w join books b on b.work_id = w.id join book_authors ba on ba.book_id = b.id
        where b.merged_into is null and b.deleted_at is null
       union
       select c.author_id from work w join books b on b.work_id = w.id join books cb on cb.id = b.id or cb.merged_into = b.id
         join claimed_credits c on c.book_id = cb.id
        where b.merged_into is null and b.deleted_at is null
     )
     select public_id(l.id) as id
       from (select distinct s.id from named n join authors a on a.id = n.id join authors s on s.id = coalesce(a.merged_into, a.id)
              where s.deleted_at is null) l
      order by l.id`,
    [authorIds, workIds],
  );
  return rows.map((row) => row.id);
}

// Credits (and claims, see claimCredits) of live books, by work, as (work_id, author_id as written).
const CREDITS = `credit as (
  select b.work_id, ba.author_id
    from book_authors ba join books b on b.id = ba.book_id
   where b.merged_into is null and b.deleted_at is null
  union
  select b.work_id, c.author_id
    from claimed_credits c join books cb on cb.id = c.book_id join books b on b.id = coalesce(cb.merged_into, cb.id)
   where b.deleted_at is null
)`;
// The same of the works where the authors $1 (live) are credited or claimed, reached from them.
const CREDITS_OF_SCOPE = `scoped_work as (
  select b.work_id from book_authors ba join books b on b.id = ba.book_id
   where ba.author_id = any(entity_keys($1)) and b.merged_into is null and b.deleted_at is null
  union
  select b.work_id from authors a join claimed_credits c on c.author_id = a.id join books cb on cb.id = c.book_id
    join books b on b.id = coalesce(cb.merged_into, cb.id)
   where (a.id = any(entity_keys($1)) or a.merged_into = any(entity_keys($1))) and b.deleted_at is null
), credit as (
  select b.work_id, ba.author_id
    from scoped_work w join books b on b.work_id = w.work_id join book_authors ba on ba.book_id = b.id
   where b.merged_into is null and b.deleted_at is null
  union
  select b.work_id, c.author_id
    from scoped_work w join books b on b.work_id = w.work_id join books cb on cb.id = b.id or cb.merged_into = b.id
    join claimed_credits c on c.book_id = cb.id
   where b.merged_into is null and b.deleted_at is null
)`;

/**
 * Pairs of live authors credited (or claimed, see claimCredits) on books of one live work, as final
 * survivors, with how many works they share. Authors credited together on one book are co-authors,
 * never one person twice, and are left out. With `scope` (live authors), only the pairs with one of
 * them, found from their works alone.
 */
export async function authorsSharingWorks(
  db: Queryable,
  scope: readonly string[] | null = null,
): Promise<{ a: string; b: string; works: number }[]> {
  const { rows } = await db.query<{ a: string; b: string; works: number }>(
    `with ${scope ? CREDITS_OF_SCOPE : CREDITS}, live as (
       select distinct c.work_id, s.id as author_id
         from credit c join authors a on a.id = c.author_id join authors s on s.id = coalesce(a.merged_into, a.id)
        where s.deleted_at is null
     ), pairs as (
       select x.author_id as a, y.author_id as b, count(*)::int as works
         from live x join live y on y.work_id = x.work_id and y.author_id > x.author_id
        group by 1, 2
     )
     select public_id(p.a) as a, public_id(p.b) as b, p.works from pairs p
      where ${scope ? '(p.a = any(entity_keys($1)) or p.b = any(entity_keys($1))) and' : ''}
            not exists (select 1 from book_authors ba join book_authors bb on bb.book_id = ba.book_id join books b on b.id = ba.book_id
                         where b.merged_into is null and ba.author_id = p.a and bb.author_id = p.b)
      order by p.a, p.b`,
    scope ? [scope] : [],
  );
  return rows;
}

export interface AuthorRecord {
  id: string;
  /** Its display name and every spelling importers resolved to it. */
  names: string[];
  /** Whether Open Library keys it (identity `ol:<key>`). */
  openLibrary: boolean;
  createdAt: Date;
}

export async function authorRecords(db: Queryable, ids: readonly string[]): Promise<Map<string, AuthorRecord>> {
  const { rows } = await db.query<{ id: string; names: string[]; open_library: boolean; created_at: Date }>(
    `select public_id(a.id) as id, array[a.name] || coalesce((select array_agg(n.name order by n.name) from author_names n where n.author_id = a.id), '{}') as names,
            a.name_key like 'ol:%' as open_library, a.created_at
       from authors a where a.id = any(entity_keys($1))`,
    [ids],
  );
  return new Map(rows.map((row) => [row.id, { id: row.id, names: row.names, openLibrary: row.open_library, createdAt: row.created_at }]));
}

// Works with a live book credited to one of the authors $1.
const SCOPED_WORK = `and w.id in (select b.work_id from book_authors ba join books b on b.id = ba.book_id
                                   where ba.author_id = any(entity_keys($1)) and b.merged_into is null and b.deleted_at is null)`;

export interface AuthoredWork {
  id: string;
  /** Its key (see 001_catalogue.sql): what tells apart works of equal popularity, whatever their ids. */
  workKey: string;
  /** Whether Open Library keys it (work key `ol:<key>`): its grouping wins. */
  openLibrary: boolean;
  /** The first author of its most popular live edition, and that edition's title. */
  authorId: string;
  title: string;
  popularity: number;
}

interface AuthoredWorkRow {
  id: string;
  work_key: string;
  open_library: boolean;
  author_id: string;
  title: string;
  popularity: number;
}

/**
 * Live works with the first author and title of their most popular live edition (of editions equally
 * popular, the first by identity, so that the same files make the same choice whatever ids a run
 * mints), by first author: each list yielded is all such works of one author, read `pageSize` rows at
 * a time (pg-cursor, on a client of `db` held until the last), so that memory holds a page and an
 * author's works, not a catalogue's. With `scope` (live authors), only the works whose first author
 * is one of them.
 */
export async function* authoredWorksByAuthor(db: Pool, scope: readonly string[] | null, pageSize: number): AsyncGenerator<AuthoredWork[]> {
  const client = await db.connect();
  const cursor = client.query(
    new Cursor<AuthoredWorkRow>(
      `select public_id(w.id) as id, w.work_key, w.work_key like 'ol:%' as open_library, public_id(e.author_id) as author_id, e.title, coalesce(p.popularity, 0)::float8 as popularity
         from works w
         join lateral (select b.title, ba.author_id from books b join book_authors ba on ba.book_id = b.id
                        where b.work_id = w.id and b.merged_into is null and b.deleted_at is null
                        order by b.popularity desc, coalesce(b.source_key, b.isbn_13), ba.position limit 1 offset 0) e on true
         left join lateral (select sum(popularity) as popularity from books where work_id = w.id and merged_into is null offset 0) p on true
        where w.merged_into is null and w.deleted_at is null
          ${scope ? `${SCOPED_WORK} and e.author_id = any(entity_keys($1))` : ''}
        order by e.author_id`,
      scope ? [scope] : [],
    ),
  );
  try {
    let works: AuthoredWork[] = [];
    for (;;) {
      const rows = await cursor.read(pageSize);
      for (const row of rows) {
        if (works.length > 0 && works[0]!.authorId !== row.author_id) {
          yield works;
          works = [];
        }
        works.push({
          id: row.id,
          workKey: row.work_key,
          openLibrary: row.open_library,
          authorId: row.author_id,
          title: row.title,
          popularity: row.popularity,
        });
      }
      if (rows.length === 0) break;
    }
    if (works.length > 0) yield works;
  } finally {
    await cursor.close().catch(() => undefined);
    client.release();
  }
}

import type { PoolClient, Queryable } from '../../../src/stores/postgres/pool.js';

/** The SQL of resolving authors across sources (loader/import/authors.ts): the evidence, the records, the works. */

/** Records that a source names these authors on a book whose credits another source keeps. */
export async function claimCredits(client: PoolClient, claims: readonly { bookId: string; authorIds: readonly string[] }[]): Promise<void> {
  const rows = claims.flatMap(({ bookId, authorIds }) => authorIds.map((authorId) => ({ bookId, authorId })));
  if (rows.length === 0) return;
  await client.query(
    `insert into claimed_credits (book_id, author_id)
     select * from unnest($1::text[], $2::text[]) on conflict do nothing`,
    [rows.map((row) => row.bookId), rows.map((row) => row.authorId)],
  );
}

/**
 * Pairs of live authors credited (or claimed, see claimCredits) on books of one live work, as final
 * survivors, with how many works they share. Authors credited together on one book are co-authors,
 * never one person twice, and are left out.
 */
export async function authorsSharingWorks(db: Queryable): Promise<{ a: string; b: string; works: number }[]> {
  const { rows } = await db.query<{ a: string; b: string; works: number }>(
    `with credit as (
       select b.work_id, coalesce(a.merged_into, a.id) as author_id
         from book_authors ba join books b on b.id = ba.book_id join authors a on a.id = ba.author_id
        where b.merged_into is null and b.deleted_at is null
       union
       select b.work_id, coalesce(a.merged_into, a.id)
         from claimed_credits c join books cb on cb.id = c.book_id join books b on b.id = coalesce(cb.merged_into, cb.id)
         join authors a on a.id = c.author_id
        where b.deleted_at is null
     ), live as (
       select c.* from credit c join authors a on a.id = c.author_id where a.deleted_at is null
     ), pairs as (
       select x.author_id as a, y.author_id as b, count(*)::int as works
         from live x join live y on y.work_id = x.work_id and y.author_id > x.author_id
        group by 1, 2
     )
     select p.* from pairs p
      where not exists (select 1 from book_authors ba join book_authors bb on bb.book_id = ba.book_id join books b on b.id = ba.book_id
                         where b.merged_into is null and ba.author_id = p.a and bb.author_id = p.b)
      order by p.a, p.b`,
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
    `select a.id, array[a.name] || coalesce((select array_agg(n.name order by n.name) from author_names n where n.author_id = a.id), '{}') as names,
            a.name_key like 'ol:%' as open_library, a.created_at
       from authors a where a.id = any($1::text[])`,
    [ids],
  );
  return new Map(rows.map((row) => [row.id, { id: row.id, names: row.names, openLibrary: row.open_library, createdAt: row.created_at }]));
}

export interface AuthoredWork {
  id: string;
  /** Whether Open Library keys it (work key `ol:<key>`): its grouping wins. */
  openLibrary: boolean;
  /** The first author of its most popular live edition, and that edition's title. */
  authorId: string;
  title: string;
  popularity: number;
}

/** Live works with the first author and title of their most popular live edition. */
export async function authoredWorks(db: Queryable): Promise<AuthoredWork[]> {
  const { rows } = await db.query<{ id: string; open_library: boolean; author_id: string; title: string; popularity: number }>(
    `select w.id, w.work_key like 'ol:%' as open_library, e.author_id, e.title, coalesce(p.popularity, 0)::float8 as popularity
       from works w
       join lateral (select b.title, ba.author_id from books b join book_authors ba on ba.book_id = b.id
                      where b.work_id = w.id and b.merged_into is null and b.deleted_at is null
                      order by b.popularity desc, b.id, ba.position limit 1 offset 0) e on true
       left join lateral (select sum(popularity) as popularity from books where work_id = w.id and merged_into is null offset 0) p on true
      where w.merged_into is null and w.deleted_at is null`,
  );
  return rows.map((row) => ({
    id: row.id,
    openLibrary: row.open_library,
    authorId: row.author_id,
    title: row.title,
    popularity: row.popularity,
  }));
}

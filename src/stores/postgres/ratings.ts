import { recordChanges } from './changes.js';
import { withTransaction, type Pool, type Queryable } from './pool.js';

/**
 * Reader ratings (Book-Crossing BX-Ratings) and what is derived from them: "readers of X also
 * liked Y" (table book_also_liked), which the loader copies into the book documents.
 */

export interface RatingInput {
  userId: number;
  bookId: string;
  rating: number;
}

export interface RatingsOutcome {
  inserted: number;
  updated: number;
  unchanged: number;
  /** The works of the books whose ratings were inserted or updated. */
  works: string[];
}

/**
 * Book ids for ISBN-13s, following merges to the survivor. A rating names an ISBN-10; the caller
 * converts it, and books store the ISBN-13 of every ISBN-10 they have.
 */
export async function booksByIsbn13(db: Queryable, isbn13s: readonly string[]): Promise<Map<string, string>> {
  const found = new Map<string, string>();
  if (isbn13s.length === 0) return found;
  const { rows } = await db.query<{ isbn_13: string; id: string }>(
    'select isbn_13, public_id(coalesce(merged_into, id)) as id from books where isbn_13 = any($1::text[])',
    [isbn13s],
  );
  for (const row of rows) found.set(row.isbn_13, row.id);
  return found;
}

/** Inserts or updates a batch of ratings in one statement (the last one wins for a repeated user and book). */
export async function upsertRatings(pool: Pool, inputs: readonly RatingInput[]): Promise<RatingsOutcome> {
  const unique = [...new Map(inputs.map((input) => [`${input.userId} ${input.bookId}`, input])).values()];
  if (unique.length === 0) return { inserted: 0, updated: 0, unchanged: inputs.length, works: [] };
  // With the works of the books whose ratings changed, in the same statement.
  const { rows } = await pool.query<{ inserted: boolean; work_id: string }>(
    `with changed as (
       insert into ratings (user_id, book_id, rating)
       select * from unnest($1::int[], entity_keys($2), $3::smallint[])
       on conflict (user_id, book_id) do update set rating = excluded.rating
         where ratings.rating <> excluded.rating
       returning (xmax = 0) as inserted, book_id
     )
     select c.inserted, public_id(b.work_id) as work_id from changed c join books b on b.id = c.book_id`,
    [unique.map((input) => input.userId), unique.map((input) => input.bookId), unique.map((input) => input.rating)],
  );
  const inserted = rows.filter((row) => row.inserted).length;
  return {
    inserted,
    updated: rows.length - inserted,
    unchanged: inputs.length - rows.length,
    works: [...new Set(rows.map((row) => row.work_id))],
  };
}

export interface AlsoLikedOptions {
  /** A rating at least this high counts as "liked" (Book-Crossing rates 1 to 10; default 6). */
  minRating?: number;
  /** Two books are related only when at least this many readers liked both (default 2). */
  minCoReaders?: number;
  /** Readers who liked more books than this are left out: bulk raters add noise and quadratic cost (default 500). */
  maxLikesPerReader?: number;
  /** Co-readers from which a pair's score is trusted fully; below, it is scaled by co / this (default 10). */
  fullConfidenceAt?: number;
  /** Related books kept per book (default 20). */
  limit?: number;
}

export interface AlsoLikedOutcome {
  /** Books that have a list now. */
  books: number;
  /** Books whose list was created, changed or removed; an 'update' change was recorded for each. */
  changed: string[];
}

// Any constant works; it only has to be the same for every process that derives.
const DERIVE_LOCK = 7_340_030;

/**
 * Derives "readers of X also liked Y" from all ratings and stores it, in one transaction. Readers
 * like works, not editions (Book-Crossing scatters one book's ratings over its editions), so the
 * counts are of works:
 *
 *   score(X, Y) = co(X, Y) * min(co(X, Y), C) / C / n(Y)^0.1
 *
 * where n(W) is the number of readers who liked work W and co(X, Y) those who liked both: how many
 * of X's readers liked Y, damped while few readers support it (C = fullConfidenceAt), and only a
 * little against Y's own popularity. The cosine (co over the square root of both popularities)
 * ranked obscure books first, while a reader's next book is more often a popular one. Pairs need
 * at least `minCoReaders` readers in common; another edition of the book's own work is never
 * related, a list names one live edition per work (its most liked), and every rated edition of a
 * work gets the work's list; ties go to the larger co-readership, then the id. Every book whose list changed gets an 'update' change in the change
 * sequence, so `bookmeta sync` reindexes it.
 */
export async function deriveAlsoLiked(pool: Pool, options: AlsoLikedOptions = {}): Promise<AlsoLikedOutcome> {
  const minRating = options.minRating ?? 6;
  const minCoReaders = options.minCoReaders ?? 2;
  const maxLikes = options.maxLikesPerReader ?? 500;
  const limit = options.limit ?? 20;
  const fullConfidence = options.fullConfidenceAt ?? 10;
  return withTransaction(pool, async (client) => {
    await client.query('select pg_advisory_xact_lock($1)', [DERIVE_LOCK]);
    // Statistics first: right after an import the tables may be unanalysed (autovacuum off or
    // behind), and the planner, guessing one row for the live books, made the readers' pairs a
    // nested loop that ran for half an hour on the sample.
    await client.query('analyze ratings, books');
    await client.query(
      `create temp table derived_also_liked on commit drop as
       with liked as (
         select r.user_id, b.id as book_id, b.work_id
           from ratings r join books b on b.id = r.book_id and b.merged_into is null and b.deleted_at is null
          where r.rating >= $1
       ),
       readers as (
         select user_id from liked group by user_id having count(distinct work_id) between 2 and $2
       ),
       kept as (
         select liked.* from liked join readers using (user_id)
       ),
       work_readers as (
         select distinct user_id, work_id from kept
       ),
       popularity as (
         select work_id, count(*)::float8 as n from work_readers group by work_id
       ),
       pairs as (
         select x.work_id as x_work, y.work_id as y_work, count(*) as co
           from work_readers x join work_readers y on y.user_id = x.user_id and y.work_id <> x.work_id
          group by x.work_id, y.work_id
         having count(*) >= $3
       ),
       ranked as (
         select p.x_work, p.y_work,
                row_number() over (partition by p.x_work order by p.co * least(p.co, $5)::float8 / $5 / power(py.n, 0.1) desc, p.co desc, p.y_work) as rank
           from pairs p join popularity py on py.work_id = p.y_work
       ),
       editions as (
         select work_id, book_id, count(*) as likes from kept group by work_id, book_id
       ),
       most_liked as (
         select distinct on (work_id) work_id, book_id from editions order by work_id, likes desc, book_id
       )
       select e.book_id, array_agg(m.book_id order by r.rank) as liked
         from editions e
         join ranked r on r.x_work = e.work_id and r.rank <= $4
         join most_liked m on m.work_id = r.y_work
        group by e.book_id`,
      [minRating, maxLikes, minCoReaders, limit, fullConfidence],
    );
    const { rows: upserted } = await client.query<{ book_id: string }>(
      `insert into book_also_liked (book_id, liked)
       select book_id, liked from derived_also_liked
       on conflict (book_id) do update set liked = excluded.liked, computed_at = now()
         where book_also_liked.liked is distinct from excluded.liked
       returning public_id(book_id) as book_id`,
    );
    const { rows: removed } = await client.query<{ book_id: string }>(
      `delete from book_also_liked o
        where not exists (select 1 from derived_also_liked d where d.book_id = o.book_id)
       returning public_id(book_id) as book_id`,
    );
    const { rows: total } = await client.query<{ n: number }>('select count(*)::int as n from derived_also_liked');
    // Only live books have documents; a removed list of a merged book needs no reindex.
    const changedIds = [...new Set([...upserted, ...removed].map((row) => row.book_id))];
    const { rows: live } = await client.query<{ id: string }>(
      'select public_id(id) as id from books where id = any(entity_keys($1)) and merged_into is null and deleted_at is null order by books.id',
      [changedIds],
    );
    const changed = live.map((row) => row.id);
    await recordChanges(
      client,
      changed.map((id) => ({ entity: 'book' as const, id, operation: 'update' as const })),
    );
    return { books: total[0]?.n ?? 0, changed };
  });
}

/**
 * Fresh planner statistics for what a ratings import grew besides the ratings (deriveAlsoLiked
 * analyses those): the lists and the changes naming their books.
 */
export async function analyzeDerivedTables(pool: Pool): Promise<void> {
  await pool.query('analyze book_also_liked, changes');
}

/** The stored "also liked" list of a book (empty when none). */
export async function alsoLikedOf(db: Queryable, bookId: string): Promise<string[]> {
  const { rows } = await db.query<{ liked: string[] }>(
    `select array(select public_id(l.key) from unnest(liked) with ordinality as l(key, n) order by l.n) as liked
       from book_also_liked where book_id = entity_key($1)`,
    [bookId],
  );
  return rows[0]?.liked ?? [];
}

/**
 * What readers of an author's other works also liked: the "also liked" lists of the live books of
 * `authorIds` outside the work `workId` (one list per work), merged, a list's first counting most.
 * A book few readers rated still has, through its author's other books, readers of what that author
 * writes. Best first, at most `limit`.
 */
export async function authorAlsoLikedOf(db: Queryable, authorIds: readonly string[], workId: string, limit = 20): Promise<string[]> {
  if (authorIds.length === 0) return [];
  const { rows } = await db.query<{ id: string }>(
    `with lists as (
       select distinct on (b.work_id) al.liked
         from book_authors ba
         join books b on b.id = ba.book_id and b.work_id <> entity_key($2) and b.merged_into is null and b.deleted_at is null
         join book_also_liked al on al.book_id = b.id
        where ba.author_id = any(entity_keys($1))
        order by b.work_id, b.id
     )
     select public_id(u.id) as id
       from lists cross join lateral unnest(lists.liked) with ordinality as u(id, ord)
      group by u.id
      order by sum(1 - (u.ord - 1) / (2.0 * cardinality(lists.liked))) desc, u.id
      limit $3`,
    [authorIds, workId, limit],
  );
  return rows.map((row) => row.id);
}

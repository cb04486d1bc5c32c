import { recordChanges } from '../../../src/stores/postgres/changes.js';
import { withTransaction, type Pool, type PoolClient } from '../../../src/stores/postgres/pool.js';

/**
 * The SQL of Open Library's readers' signals: counting the reading-log and ratings dumps per work
 * key (openlibrary_reader_counts), and deriving each work's popularity from them and from its
 * editions (work_popularity), which the book documents add to books.popularity.
 */

export type ReaderDumpKind = 'reading-log' | 'ratings';

/** One work key's lines in a batch of a dump. */
export interface ReaderTally {
  wantToRead: number;
  currentlyReading: number;
  alreadyRead: number;
  ratings: number;
  ratingSum: number;
}

export interface CountsOutcome {
  /** Work keys counted for the first time. */
  inserted: number;
  /** Work keys whose counts of this kind changed (absent from the file: set to zero). */
  updated: number;
  /** Work keys of the file whose counts were already the file's. */
  unchanged: number;
}

// The columns a dump kind owns: importing one dump leaves the other's counts alone.
const COLUMNS: Record<ReaderDumpKind, readonly (keyof typeof SQL_NAME)[]> = {
  'reading-log': ['wantToRead', 'currentlyReading', 'alreadyRead'],
  ratings: ['ratings', 'ratingSum'],
};
const SQL_NAME = {
  wantToRead: 'want_to_read',
  currentlyReading: 'currently_reading',
  alreadyRead: 'already_read',
  ratings: 'ratings',
  ratingSum: 'rating_sum',
} as const;

/**
 * The counts of one dump file, gathered batch by batch in a temporary table of one session and
 * written in one transaction at the end: a dump is a whole snapshot, so its counts replace those of
 * the previous one (a work key the file no longer names drops to zero), and a killed import writes
 * nothing. Memory stays constant in Node; PostgreSQL sums the batches.
 */
export class ReaderCounting {
  private constructor(
    private readonly client: PoolClient,
    private readonly kind: ReaderDumpKind,
  ) {}

  static async open(pool: Pool, kind: ReaderDumpKind): Promise<ReaderCounting> {
    const client = await pool.connect();
    try {
      await client.query('drop table if exists reader_batches');
      await client.query(
        `create temp table reader_batches (work_key text not null, want_to_read integer, currently_reading integer, already_read integer, ratings integer, rating_sum bigint)`,
      );
    } catch (error) {
      client.release();
      throw error;
    }
    return new ReaderCounting(client, kind);
  }

  async add(tallies: ReadonlyMap<string, ReaderTally>): Promise<void> {
    if (tallies.size === 0) return;
    const keys = [...tallies.keys()];
    const column = (name: keyof ReaderTally) => keys.map((key) => tallies.get(key)![name]);
    await this.client.query(
      `insert into reader_batches select * from unnest($1::text[], $2::int[], $3::int[], $4::int[], $5::int[], $6::bigint[])`,
      [keys, column('wantToRead'), column('currentlyReading'), column('alreadyRead'), column('ratings'), column('ratingSum')],
    );
  }

  /** Replaces this kind's counts with the file's, in one transaction. */
  async finish(): Promise<CountsOutcome> {
    const columns = COLUMNS[this.kind].map((name) => SQL_NAME[name]);
    const list = columns.join(', ');
    const client = this.client;
    try {
      await client.query('begin');
      await client.query(
        `create temp table reader_file on commit drop as select work_key, ${columns.map((c) => `sum(${c})::bigint as ${c}`).join(', ')} from reader_batches group by work_key`,
      );
      const { rows } = await client.query<{ inserted: boolean }>(
        `insert into openlibrary_reader_counts as c (work_key, ${list})
         select work_key, ${list} from reader_file
         on conflict (work_key) do update set ${columns.map((c) => `${c} = excluded.${c}`).join(', ')}
           where (${columns.map((c) => `c.${c}`).join(', ')}) is distinct from (${columns.map((c) => `excluded.${c}`).join(', ')})
         returning (xmax = 0) as inserted`,
      );
      const { rowCount: dropped } = await client.query(
        `update openlibrary_reader_counts c set ${columns.map((c) => `${c} = 0`).join(', ')}
          where (${columns.map((c) => `c.${c}`).join(', ')}) is distinct from (${columns.map(() => '0').join(', ')})
            and not exists (select 1 from reader_file f where f.work_key = c.work_key)`,
      );
      const { rows: file } = await client.query<{ n: number }>('select count(*)::bigint as n from reader_file');
      await client.query('commit');
      const inserted = rows.filter((row) => row.inserted).length;
      const updated = rows.length - inserted;
      return { inserted, updated: updated + (dropped ?? 0), unchanged: (file[0]?.n ?? 0) - rows.length };
    } catch (error) {
      await client.query('rollback').catch(() => undefined);
      throw error;
    }
  }

  async close(): Promise<void> {
    await this.client.query('drop table if exists reader_batches').catch(() => undefined);
    this.client.release();
  }
}

/**
 * What one reader and one edition are worth, in the unit of books.popularity (goodbooks'
 * ratings_count, readers who rated the book on Goodreads): Goodreads has about a hundred times
 * Open Library's readers, and a work with many editions has been printed because people read it.
 */
export const POPULARITY_PER_READER = 100;
export const POPULARITY_PER_EDITION = 1_000;

export interface PopularityOutcome {
  /** Works with a popularity from readers or editions now. */
  works: number;
  /** Live books whose work's popularity changed; an 'update' change was recorded for each. */
  changed: number;
}

// Any constant works; it only has to be the same for every process that derives.
const DERIVE_LOCK = 7_340_020;

/**
 * Derives each live work's popularity, in one transaction:
 *
 *   popularity(W) = 100 * (readers who shelved W + readers who rated W) + 1,000 * (editions of W - 1)
 *
 * Work keys follow Open Library's redirects and our merges to the surviving work. Every live book
 * of a work whose popularity changed gets an 'update' change, so `bookmeta sync` reindexes it.
 */
export async function deriveWorkPopularity(pool: Pool): Promise<PopularityOutcome> {
  return withTransaction(pool, (client) => deriveWorkPopularityIn(client));
}

/**
 * The same in the caller's transaction. A book this transaction wrote (its row's xmin) has a change
 * of this transaction already, which commits with the popularity: sync reads it with the popularity
 * in place, so it gets no 'update' of its own (a first load's books: one change each, not two).
 */
export async function deriveWorkPopularityIn(client: PoolClient): Promise<PopularityOutcome> {
  await client.query('select pg_advisory_xact_lock($1)', [DERIVE_LOCK]);
  await client.query('analyze openlibrary_reader_counts, work_popularity');
  await client.query(
    `create temp table derived_popularity on commit drop as
     with readers as (
       select coalesce(w.merged_into, w.id) as work_id,
              sum(c.want_to_read + c.currently_reading + c.already_read + c.ratings) as readers
         from openlibrary_reader_counts c
         join openlibrary_records k on k.key = c.work_key
         left join openlibrary_records t on k.state = 'redirect' and t.key = k.redirect_to
         join works w on w.id = coalesce(t.entity_id, k.entity_id)
        group by 1
     ),
     editions as (
       select work_id, count(*) as editions from books where merged_into is null and deleted_at is null group by work_id
     )
     select coalesce(r.work_id, e.work_id) as work_id,
            $1::bigint * coalesce(r.readers, 0) + $2::bigint * greatest(coalesce(e.editions, 1) - 1, 0) as popularity
       from readers r full join editions e on e.work_id = r.work_id`,
    [POPULARITY_PER_READER, POPULARITY_PER_EDITION],
  );
  await client.query('delete from derived_popularity where popularity = 0');
  const { rows: upserted } = await client.query<{ work_id: string }>(
    `insert into work_popularity as p (work_id, popularity)
     select work_id, popularity from derived_popularity
     on conflict (work_id) do update set popularity = excluded.popularity where p.popularity <> excluded.popularity
     returning work_id`,
  );
  const { rows: removed } = await client.query<{ work_id: string }>(
    `delete from work_popularity p where not exists (select 1 from derived_popularity d where d.work_id = p.work_id) returning work_id`,
  );
  const works = [...upserted, ...removed].map((row) => row.work_id);
  const { rows: books } = await client.query<{ id: string }>(
    `select id from books
      where work_id = any($1::text[]) and merged_into is null and deleted_at is null and xmin <> pg_current_xact_id()::xid
      order by id`,
    [works],
  );
  await recordChanges(
    client,
    books.map((book) => ({ entity: 'book' as const, id: book.id, operation: 'update' as const })),
  );
  const { rows: total } = await client.query<{ n: number }>('select count(*)::bigint as n from work_popularity');
  return { works: total[0]?.n ?? 0, changed: books.length };
}

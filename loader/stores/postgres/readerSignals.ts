import { TRENDING_KEPT, TRENDING_PERIOD_DAYS } from '../../../src/domain/trending.js';
import { lockChangeSequence } from '../../../src/stores/postgres/changes.js';
import type { Pool, PoolClient } from '../../../src/stores/postgres/pool.js';
import { copyLines, copyText } from './copy.js';

/**
 * The SQL of Open Library's readers' signals: counting the reading-log and ratings dumps per work
 * key (openlibrary_reader_counts) and the reading log's entries per work key and day
 * (openlibrary_reading_log_days), and deriving from them, per work, its popularity with its editions
 * (work_popularity, which the book documents add to books.popularity), its readers as records show
 * them (work_readers) and the works trending in each period (trending_works).
 */

export type ReaderDumpKind = 'reading-log' | 'ratings';

/** What a line of a readers' dump adds one to: its reading-log shelf, or `ratings`. */
export type ReaderField = 'wantToRead' | 'currentlyReading' | 'alreadyRead' | 'ratings';

/** One reader's entry in a readers' dump. */
export interface ReaderLine {
  /** The work's key as openlibrary_records holds it ("OL45804W"). */
  workKey: string;
  field: ReaderField;
  /** 1 to 5 in the ratings dump, 0 in the reading log. */
  rating: number;
  /** The day of the entry, `YYYY-MM-DD`. */
  day: string;
}

export interface CountsOutcome {
  /** Work keys counted for the first time. */
  inserted: number;
  /** Work keys whose counts of this kind changed (absent from the file: set to zero). */
  updated: number;
  /** Work keys of the file whose counts were already the file's. */
  unchanged: number;
}

// What each count column of openlibrary_reader_counts is, over a file's staged lines (reader_lines).
const COUNTED = {
  want_to_read: "count(*) filter (where counter = 'want_to_read')",
  currently_reading: "count(*) filter (where counter = 'currently_reading')",
  already_read: "count(*) filter (where counter = 'already_read')",
  ratings: "count(*) filter (where counter = 'ratings')",
  rating_sum: 'sum(rating)',
  rated_1: 'count(*) filter (where rating = 1)',
  rated_2: 'count(*) filter (where rating = 2)',
  rated_3: 'count(*) filter (where rating = 3)',
  rated_4: 'count(*) filter (where rating = 4)',
  rated_5: 'count(*) filter (where rating = 5)',
} as const;
// The columns a dump kind owns: importing one dump leaves the other's counts alone.
const COLUMNS: Record<ReaderDumpKind, readonly (keyof typeof COUNTED)[]> = {
  'reading-log': ['want_to_read', 'currently_reading', 'already_read'],
  ratings: ['ratings', 'rating_sum', 'rated_1', 'rated_2', 'rated_3', 'rated_4', 'rated_5'],
};
const COUNTER: Record<ReaderField, keyof typeof COUNTED> = {
  wantToRead: 'want_to_read',
  currentlyReading: 'currently_reading',
  alreadyRead: 'already_read',
  ratings: 'ratings',
};
const STAGED = ['work_key', 'counter', 'rating', 'day'] as const;

/**
 * The counts of one dump file: its lines are copied, as they are read, into a temporary table of
 * one session, and summed by PostgreSQL in one transaction at the end. A dump is a whole snapshot,
 * so its counts replace those of the previous one (a work key the file no longer names drops to
 * zero; a reading log's entries by day are the file's), and a killed import writes nothing. Node
 * holds a chunk of lines at a time, whatever the size of the file or of the catalogue.
 */
export class ReaderCounting {
  private constructor(
    private readonly client: PoolClient,
    private readonly kind: ReaderDumpKind,
  ) {}

  static async open(pool: Pool, kind: ReaderDumpKind): Promise<ReaderCounting> {
    const client = await pool.connect();
    try {
      await client.query('drop table if exists reader_lines');
      await client.query(
        'create temp table reader_lines (work_key text not null, counter text not null, rating smallint not null, day date not null)',
      );
    } catch (error) {
      client.release();
      throw error;
    }
    return new ReaderCounting(client, kind);
  }

  /** Copies the file's lines, chunk by chunk as they come, in one COPY. */
  async stage(chunks: AsyncIterable<readonly ReaderLine[]>): Promise<void> {
    async function* text(): AsyncGenerator<string> {
      for await (const chunk of chunks) {
        yield copyLines(
          STAGED,
          chunk.map((line) => ({ work_key: line.workKey, counter: COUNTER[line.field], rating: line.rating, day: line.day })),
        );
      }
    }
    await copyText(this.client, 'reader_lines', STAGED, text());
  }

  /** Replaces this kind's counts with the file's, in one transaction. */
  async finish(): Promise<CountsOutcome> {
    const columns = COLUMNS[this.kind];
    const list = columns.join(', ');
    const client = this.client;
    try {
      await client.query('begin');
      const { rowCount: fileKeys } = await client.query(
        `create temp table reader_file on commit drop as
         select work_key, ${columns.map((c) => `${COUNTED[c]}::bigint as ${c}`).join(', ')} from reader_lines group by work_key`,
      );
      // Counted here, not returned: a dump names millions of work keys.
      const { rows: written } = await client.query<{ inserted: number; updated: number }>(
        `with written as (
           insert into openlibrary_reader_counts as c (work_key, ${list})
           select work_key, ${list} from reader_file
           on conflict (work_key) do update set ${columns.map((c) => `${c} = excluded.${c}`).join(', ')}
             where (${columns.map((c) => `c.${c}`).join(', ')}) is distinct from (${columns.map((c) => `excluded.${c}`).join(', ')})
           returning (xmax = 0) as inserted
         )
         select count(*) filter (where inserted)::bigint as inserted, count(*) filter (where not inserted)::bigint as updated from written`,
      );
      const { rowCount: dropped } = await client.query(
        `update openlibrary_reader_counts c set ${columns.map((c) => `${c} = 0`).join(', ')}
          where (${columns.map((c) => `c.${c}`).join(', ')}) is distinct from (${columns.map(() => '0').join(', ')})
            and not exists (select 1 from reader_file f where f.work_key = c.work_key)`,
      );
      if (this.kind === 'reading-log') await replaceReadingLogDays(client);
      await client.query('commit');
      const { inserted, updated } = written[0]!;
      return { inserted, updated: updated + (dropped ?? 0), unchanged: (fileKeys ?? 0) - inserted - updated };
    } catch (error) {
      await client.query('rollback').catch(() => undefined);
      throw error;
    }
  }

  async close(): Promise<void> {
    await this.client.query('drop table if exists reader_lines').catch(() => undefined);
    this.client.release();
  }
}

/**
 * The reading log's entries per work key and day become the file's, for as many days as trending
 * looks back (a year) up to its newest day; older entries only count in the totals.
 */
async function replaceReadingLogDays(client: PoolClient): Promise<void> {
  await client.query('delete from openlibrary_reading_log_days');
  await client.query(
    `insert into openlibrary_reading_log_days (work_key, day, added)
     select work_key, day, count(*)::int from reader_lines
      where day > (select max(day) from reader_lines) - $1::int
      group by work_key, day`,
    [TRENDING_PERIOD_DAYS.year],
  );
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
  /** Live books whose work's popularity or readers changed; an 'update' change was recorded for each. */
  changed: number;
  /** How many works' readers (shelves or stars) changed: their records, and their books', show them. */
  readersChanged: number;
}

// Any constant works; it only has to be the same for every process that derives.
const DERIVE_LOCK = 7_340_020;
// Works whose readers changed, handed on at a time: a dump can change millions.
const CHANGED_WORKS_PAGE = 10_000;

/**
 * Derives, for each live work, in one transaction:
 *
 *   popularity(W) = 100 * (readers who shelved W + readers who rated W) + 1,000 * (editions of W - 1)
 *
 * its readers as records show them (work_readers), and the works trending in each period
 * (trending_works). Work keys follow Open Library's redirects and our merges to the surviving work.
 * Every live book of a work whose popularity or readers changed gets an 'update' change, so
 * `bookmeta sync` reindexes it. Once committed, the works whose readers changed are handed to
 * `readersChanged`, `pageSize` at a time.
 */
export async function deriveWorkPopularity(
  pool: Pool,
  {
    readersChanged,
    pageSize = CHANGED_WORKS_PAGE,
  }: { readersChanged?: (workIds: readonly string[]) => Promise<void>; pageSize?: number } = {},
): Promise<PopularityOutcome> {
  if (!Number.isInteger(pageSize) || pageSize <= 0) throw new RangeError(`pageSize must be a positive integer, got ${pageSize}`);
  const client = await pool.connect();
  try {
    await client.query('begin');
    const outcome = await deriveWorkPopularityIn(client);
    // A cursor held past the commit keeps the committed works in PostgreSQL, to hand on a page at a time.
    if (readersChanged)
      await client.query('declare readers_changed_works cursor with hold for select public_id(work_id) as work_id from readers_changed');
    await client.query('commit');
    if (readersChanged) {
      try {
        for (;;) {
          // FETCH takes no parameters; the count is an integer checked above.
          const { rows } = await client.query<{ work_id: string }>(`fetch forward ${pageSize} from readers_changed_works`);
          if (rows.length === 0) break;
          await readersChanged(rows.map((row) => row.work_id));
        }
      } finally {
        // The connection goes back to the pool: the next derivation there declares the cursor again.
        await client.query('close readers_changed_works').catch(() => undefined);
      }
    }
    return outcome;
  } catch (error) {
    await client.query('rollback').catch(() => undefined);
    throw error;
  } finally {
    client.release();
  }
}

/**
 * The same in the caller's transaction, which then holds the works whose readers changed in the
 * temporary table readers_changed (work_id) until it ends. A book this transaction wrote (its row's
 * xmin) has a change of this transaction already, which commits with the popularity: sync reads it
 * with the popularity in place, so it gets no 'update' of its own (a first load's books: one change
 * each, not two). The changed works stay in PostgreSQL: a dump can change millions.
 */
export async function deriveWorkPopularityIn(client: PoolClient): Promise<PopularityOutcome> {
  await client.query('select pg_advisory_xact_lock($1)', [DERIVE_LOCK]);
  await client.query('analyze openlibrary_reader_counts, openlibrary_reading_log_days, work_popularity, work_readers');
  await client.query(
    `create temp table work_of_key on commit drop as
     select c.work_key, coalesce(w.merged_into, w.id) as work_id
       from openlibrary_reader_counts c
       join openlibrary_records k on k.key = c.work_key
       left join openlibrary_records t on k.state = 'redirect' and t.key = k.redirect_to
       join works w on w.id = coalesce(t.entity_id, k.entity_id)`,
  );
  await client.query(
    `create temp table derived_popularity on commit drop as
     with readers as (
       select r.work_id, sum(c.want_to_read + c.currently_reading + c.already_read + c.ratings) as readers
         from openlibrary_reader_counts c join work_of_key r using (work_key)
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
  // Works whose popularity or readers changed; a work can be here twice.
  await client.query('create temp table changed_works (work_id bigint not null) on commit drop');
  await client.query(
    `with upserted as (
       insert into work_popularity as p (work_id, popularity)
       select work_id, popularity from derived_popularity
       on conflict (work_id) do update set popularity = excluded.popularity where p.popularity <> excluded.popularity
       returning work_id
     ),
     removed as (
       delete from work_popularity p where not exists (select 1 from derived_popularity d where d.work_id = p.work_id) returning work_id
     )
     insert into changed_works select work_id from upserted union all select work_id from removed`,
  );
  const readersChanged = await deriveWorkReaders(client);
  await client.query('insert into changed_works select work_id from readers_changed');
  await deriveTrending(client);
  const { rowCount: changed } = await client.query(
    `create temp table changed_books on commit drop as
     select id from books
      where work_id in (select work_id from changed_works) and merged_into is null and deleted_at is null
        and xmin <> pg_current_xact_id()::xid`,
  );
  if ((changed ?? 0) > 0) {
    await lockChangeSequence(client);
    await client.query(`insert into changes (entity, entity_id, operation) select 'book', id, 'update' from changed_books order by id`);
  }
  const { rows: total } = await client.query<{ n: number }>('select count(*)::bigint as n from work_popularity');
  return { works: total[0]?.n ?? 0, changed: changed ?? 0, readersChanged };
}

/**
 * Each work's shelves and stars from its keys' counts (work_of_key); the works whose readers changed
 * go to the temporary table readers_changed, and answers how many they are.
 */
async function deriveWorkReaders(client: PoolClient): Promise<number> {
  await client.query(
    `create temp table derived_readers on commit drop as
     select r.work_id, sum(c.want_to_read)::int as want_to_read, sum(c.currently_reading)::int as currently_reading,
            sum(c.already_read)::int as already_read,
            array[sum(c.rated_1), sum(c.rated_2), sum(c.rated_3), sum(c.rated_4), sum(c.rated_5)]::int[] as rated
       from openlibrary_reader_counts c join work_of_key r using (work_key)
      group by r.work_id
     having sum(c.want_to_read + c.currently_reading + c.already_read + c.ratings) > 0`,
  );
  const { rowCount } = await client.query(
    `create temp table readers_changed on commit drop as
     with upserted as (
       insert into work_readers as o (work_id, want_to_read, currently_reading, already_read, rated)
       select work_id, want_to_read, currently_reading, already_read, rated from derived_readers
       on conflict (work_id) do update
         set want_to_read = excluded.want_to_read, currently_reading = excluded.currently_reading,
             already_read = excluded.already_read, rated = excluded.rated
         where (o.want_to_read, o.currently_reading, o.already_read, o.rated)
               is distinct from (excluded.want_to_read, excluded.currently_reading, excluded.already_read, excluded.rated)
       returning work_id
     ),
     removed as (
       delete from work_readers o where not exists (select 1 from derived_readers d where d.work_id = o.work_id) returning work_id
     )
     select work_id from upserted union all select work_id from removed`,
  );
  return rowCount ?? 0;
}

/**
 * Each period's ranking of the works most added to reading logs, up to the reading log's newest day:
 * every entry counts once for its work, whatever the shelf. Only the first TRENDING_KEPT of each are
 * kept, with how many works the period has in all.
 */
async function deriveTrending(client: PoolClient): Promise<void> {
  await client.query('delete from trending_works');
  await client.query('delete from trending_periods');
  // Read once: the table holds a year of entries per work and day, and has no index by day alone.
  const { rows: newest } = await client.query<{ day: string | null }>(
    "select to_char(max(day), 'YYYY-MM-DD') as day from openlibrary_reading_log_days",
  );
  const day = newest[0]?.day ?? null;
  if (day === null) return;
  const periods = Object.entries(TRENDING_PERIOD_DAYS);
  const values = [periods.map(([period]) => period), periods.map(([, days]) => days), day];
  await client.query(
    `create temp table derived_trending on commit drop as
     select p.period, r.work_id, sum(d.added)::int as added
       from unnest($1::text[], $2::int[]) as p(period, days)
       join openlibrary_reading_log_days d on d.day > $3::date - p.days
       join work_of_key r on r.work_key = d.work_key
       join works w on w.id = r.work_id and w.deleted_at is null
      group by p.period, r.work_id`,
    values,
  );
  await client.query(
    `insert into trending_periods (period, from_day, to_day, works)
     select p.period, $3::date - p.days + 1, $3::date, (select count(*) from derived_trending t where t.period = p.period)
       from unnest($1::text[], $2::int[]) as p(period, days)`,
    values,
  );
  await client.query(
    `insert into trending_works (period, work_id, added)
     select period, work_id, added from (
       select period, work_id, added, row_number() over (partition by period order by added desc, work_id) as rank from derived_trending
     ) ranked where rank <= $1`,
    [TRENDING_KEPT],
  );
}

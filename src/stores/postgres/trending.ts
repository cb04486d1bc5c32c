import type { WorkListing } from '../../domain/records.js';
import { WORK_LISTING_COLUMNS } from './catalogue.js';
import type { Queryable } from './pool.js';

/**
 * The works most added to reading logs in a period, as the loader derived them from Open Library's
 * reading log (trending_works, trending_periods; loader/stores/postgres/readerSignals.ts): a page
 * of a ranking is an index range of one table, read with its works in the same query.
 */

export interface TrendingRanking {
  /** The period's first and last day (`YYYY-MM-DD`); null before any reading log was imported. */
  from: string | null;
  to: string | null;
  /** Works with an entry in the period. */
  works: number;
  /** This page of the ranking: each live work and its entries in the period. */
  entries: { added: number; work: WorkListing }[];
}

export async function trendingWorks(db: Queryable, period: string, offset: number, limit: number): Promise<TrendingRanking> {
  const [{ rows: periods }, { rows }] = await Promise.all([
    db.query<{ from_day: string; to_day: string; works: number }>({
      name: 'trending-period',
      text: `select to_char(from_day, 'YYYY-MM-DD') as from_day, to_char(to_day, 'YYYY-MM-DD') as to_day, works::int from trending_periods where period = $1`,
      values: [period],
    }),
    // The page is a range of the ranking as derived; a work merged or deleted since is left out of it.
    db.query<{ added: number } & WorkListing>({
      name: 'trending-works',
      text: `select t.added, ${WORK_LISTING_COLUMNS}
               from (select work_id, added from trending_works where period = $1 order by added desc, work_id offset $2 limit $3) t
               join works w on w.id = t.work_id and w.merged_into is null and w.deleted_at is null
              order by t.added desc, t.work_id`,
      values: [period, offset, limit],
    }),
  ]);
  const found = periods[0];
  return {
    from: found?.from_day ?? null,
    to: found?.to_day ?? null,
    works: found?.works ?? 0,
    entries: rows.map(({ added, ...work }) => ({ added, work })),
  };
}

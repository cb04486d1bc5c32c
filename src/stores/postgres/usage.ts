import type { UsageBatch } from '../../domain/usage.js';
import type { Queryable } from './pool.js';

/**
 * Writes one batch as one row (see migrations 004 and 005): its calls grouped by what they repeat,
 * as one JSON value.
 */
export async function insertUsage(db: Queryable, batch: UsageBatch): Promise<void> {
  if (batch.size === 0) return;
  const { first, last } = batch.bounds();
  await db.query({
    name: 'insert-usage',
    text: 'insert into usage_batches (first_at, last_at, records) values (to_timestamp($1 / 1000.0), to_timestamp($2 / 1000.0), $3::json)',
    values: [first, last, JSON.stringify(batch.groups())],
  });
}

export interface UsageFilter {
  kid?: string;
  since?: Date;
  until?: Date;
}

export interface UsageLine {
  day: string;
  kid: string;
  route: string;
  calls: number;
  errors: number;
}

/** Calls per key, per UTC day and per route, in that order. `until` is exclusive. */
export async function usageReport(db: Queryable, filter: UsageFilter): Promise<UsageLine[]> {
  const { rows } = await db.query<UsageLine>(
    `select to_char(date_trunc('day', at at time zone 'UTC'), 'YYYY-MM-DD') as day, kid,
            method || ' ' || route as route, count(*)::int as calls,
            count(*) filter (where status >= 400)::int as errors
       from usage
      where ($1::text is null or kid = $1)
        and ($2::timestamptz is null or (batch_last_at >= $2 and at >= $2))
        and ($3::timestamptz is null or (batch_first_at < $3 and at < $3))
      group by 1, 2, 3
      order by 2, 1, 3`,
    [filter.kid ?? null, filter.since ?? null, filter.until ?? null],
  );
  return rows;
}

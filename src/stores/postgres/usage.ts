import type { Queryable } from './pool.js';

export interface UsageRecord {
  kid: string;
  method: string;
  route: string;
  status: number;
  /** Milliseconds since the epoch, to the microsecond: cheap to take, and orders one process' calls. */
  at: number;
  latencyMs: number;
}

/**
 * Writes one batch as one row (see migration 004): the calls as a single JSON array, which costs
 * about a microsecond a call to serialise here and about as much for PostgreSQL to take in.
 */
export async function insertUsage(db: Queryable, records: readonly UsageRecord[]): Promise<void> {
  if (records.length === 0) return;
  let first = Infinity;
  let last = -Infinity;
  for (const { at } of records) {
    first = Math.min(first, at);
    last = Math.max(last, at);
  }
  await db.query({
    name: 'insert-usage',
    text: 'insert into usage_batches (first_at, last_at, records) values (to_timestamp($1 / 1000.0), to_timestamp($2 / 1000.0), $3::json)',
    values: [first, last, JSON.stringify(records)],
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

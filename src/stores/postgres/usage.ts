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

/** The calls of one batch that share kid, method, route and status (see migration 005). */
interface UsageGroup {
  kid: string;
  method: string;
  route: string;
  status: number;
  at: number[];
  latencyMs: number[];
}

/**
 * Writes one batch as one row (see migrations 004 and 005): its calls grouped by what they repeat,
 * as one JSON value. About a third of a microsecond a call to serialise here, as much for PostgreSQL
 * to take in.
 */
export async function insertUsage(db: Queryable, records: readonly UsageRecord[]): Promise<void> {
  if (records.length === 0) return;
  let first = Infinity;
  let last = -Infinity;
  const groups = new Map<string, UsageGroup>();
  for (const { kid, method, route, status, at, latencyMs } of records) {
    first = Math.min(first, at);
    last = Math.max(last, at);
    const key = `${status} ${method} ${kid} ${route}`;
    let group = groups.get(key);
    if (!group) groups.set(key, (group = { kid, method, route, status, at: [], latencyMs: [] }));
    group.at.push(at);
    group.latencyMs.push(latencyMs);
  }
  await db.query({
    name: 'insert-usage',
    text: 'insert into usage_batches (first_at, last_at, records) values (to_timestamp($1 / 1000.0), to_timestamp($2 / 1000.0), $3::json)',
    values: [first, last, JSON.stringify([...groups.values()])],
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

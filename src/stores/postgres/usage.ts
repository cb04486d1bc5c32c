import type { Queryable } from './pool.js';

export interface UsageRecord {
  kid: string;
  method: string;
  route: string;
  status: number;
  at: Date;
  latencyMs: number;
}

export async function insertUsage(db: Queryable, records: readonly UsageRecord[]): Promise<void> {
  if (records.length === 0) return;
  await db.query(
    `insert into usage (kid, method, route, status, at, latency_ms)
     select * from unnest($1::text[], $2::text[], $3::text[], $4::smallint[], $5::timestamptz[], $6::real[])`,
    [
      records.map((record) => record.kid),
      records.map((record) => record.method),
      records.map((record) => record.route),
      records.map((record) => record.status),
      records.map((record) => record.at),
      records.map((record) => record.latencyMs),
    ],
  );
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
        and ($2::timestamptz is null or at >= $2)
        and ($3::timestamptz is null or at < $3)
      group by 1, 2, 3
      order by 2, 1, 3`,
    [filter.kid ?? null, filter.since ?? null, filter.until ?? null],
  );
  return rows;
}

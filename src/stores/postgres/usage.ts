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
 * One statement per batch, its rows sent as a single JSON array: serialising that costs about a
 * microsecond a row, where node-postgres' array parameters or a COPY stream cost several, and
 * metering writes a row for every request.
 */
export async function insertUsage(db: Queryable, records: readonly UsageRecord[]): Promise<void> {
  if (records.length === 0) return;
  await db.query({
    name: 'insert-usage',
    text: `insert into usage (kid, method, route, status, at, latency_ms)
           select kid, method, route, status, to_timestamp(at / 1000.0), "latencyMs"
             from json_to_recordset($1::json) as r(kid text, method text, route text, status smallint, at float8, "latencyMs" real)`,
    values: [JSON.stringify(records)],
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
        and ($2::timestamptz is null or at >= $2)
        and ($3::timestamptz is null or at < $3)
      group by 1, 2, 3
      order by 2, 1, 3`,
    [filter.kid ?? null, filter.since ?? null, filter.until ?? null],
  );
  return rows;
}

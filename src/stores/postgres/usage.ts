import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { from as copyFrom } from 'pg-copy-streams';
import type { Pool, Queryable } from './pool.js';

export interface UsageRecord {
  kid: string;
  method: string;
  route: string;
  status: number;
  /** Milliseconds since the epoch: a number costs nothing to take on the request path. */
  at: number;
  latencyMs: number;
}

// COPY's text format: a backslash, tab or line break inside a value must be escaped.
const COPY_ESCAPES: Record<string, string> = { '\\': '\\\\', '\t': '\\t', '\n': '\\n', '\r': '\\r' };
const copyText = (value: string): string => value.replace(/[\\\t\n\r]/g, (c) => COPY_ESCAPES[c]!);

/**
 * Writes a batch with COPY, one statement for the whole batch: the cheapest insert PostgreSQL has,
 * which matters because metering writes a row for every request.
 */
export async function insertUsage(pool: Pool, records: readonly UsageRecord[]): Promise<void> {
  if (records.length === 0) return;
  let rows = '';
  for (const record of records) {
    rows += `${copyText(record.kid)}\t${copyText(record.method)}\t${copyText(record.route)}\t${record.status}\t${new Date(record.at).toISOString()}\t${record.latencyMs}\n`;
  }
  const client = await pool.connect();
  try {
    const copy = client.query(copyFrom('copy usage (kid, method, route, status, at, latency_ms) from stdin'));
    await pipeline(Readable.from([rows]), copy);
  } finally {
    client.release();
  }
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

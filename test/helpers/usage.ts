import type { Queryable } from '../../src/stores/postgres/pool.js';

/** A call as usage records it, without its time and latency. */
export interface MeteredCall {
  method: string;
  route: string;
  status: number;
}

/** The calls metered for `kid`, oldest first (flush the server's meter before asking). */
export async function meteredCalls(db: Queryable, kid: string): Promise<MeteredCall[]> {
  return (await db.query<MeteredCall>('select method, route, status from usage where kid = $1 order by at', [kid])).rows;
}

/** How many calls are metered for `kid`. */
export async function meteredCount(db: Queryable, kid: string): Promise<number> {
  return (await db.query<{ n: number }>('select count(*)::int as n from usage where kid = $1', [kid])).rows[0]!.n;
}

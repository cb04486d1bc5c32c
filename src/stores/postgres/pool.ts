import pg from 'pg';
import type { Logger } from '../../log.js';
import { StoreGuard, type Guard } from '../guard.js';

export type Pool = pg.Pool;
export type PoolClient = pg.PoolClient;
/** Anything that runs a query: the pool, a client inside a transaction, or the request path's guarded pool. */
export interface Queryable {
  query<R extends pg.QueryResultRow = pg.QueryResultRow>(
    textOrConfig: string | pg.QueryConfig,
    values?: unknown[],
  ): Promise<pg.QueryResult<R>>;
}

// What the request path gave up on is abandoned after these too: a connection not made, a statement.
const CONNECT_TIMEOUT_MS = 3_000;
const STATEMENT_TIMEOUT_MS = 5_000;

// BIGINT and NUMERIC arrive as strings by default; ours fit comfortably in a JS number. Set on our
// pools' clients only, not on the driver's global parsers that every other user of pg shares.
const AS_NUMBER: ReadonlySet<number> = new Set([pg.types.builtins.INT8, pg.types.builtins.NUMERIC]);
const types: pg.CustomTypesConfig = {
  getTypeParser: ((oid: number, format?: 'text' | 'binary'): unknown =>
    AS_NUMBER.has(oid) && format !== 'binary' ? Number : pg.types.getTypeParser(oid, format)) as pg.CustomTypesConfig['getTypeParser'],
};

export function createPool(connectionString: string, max = 10, options: pg.PoolConfig = {}): Pool {
  const pool = new pg.Pool({ connectionString, max, idleTimeoutMillis: 30_000, types, ...options });
  // An idle client losing its server must not crash the process; the next query reconnects.
  pool.on('error', () => undefined);
  return pool;
}

/** The request path's guard of PostgreSQL (see StoreGuard): each query waits at most `waitMs`. */
export const postgresGuard = (log: Logger, waitMs: number): StoreGuard => new StoreGuard('PostgreSQL', log, waitMs, isPostgresOutage);

/**
 * How the API's connections plan: its named statements (point lookups, the change feed, trending)
 * have one best plan whatever the values, so each is planned once per connection (a generic plan)
 * instead of at every call, where planning was most of a lookup's time.
 */
export const REQUEST_PATH_PLANS: pg.PoolConfig = { options: '-c plan_cache_mode=force_generic_plan' };

/**
 * The API's pool, and its queries as the request path makes them: each waits at most the guard's
 * wait (a connection, a free pooled client, the query), and PostgreSQL being away is a 503 naming it.
 */
export function createRequestPathPool(connectionString: string, max: number, guard: Guard): { pool: Pool; queries: Queryable } {
  const pool = createPool(connectionString, max, {
    connectionTimeoutMillis: CONNECT_TIMEOUT_MS,
    statement_timeout: STATEMENT_TIMEOUT_MS,
    ...REQUEST_PATH_PLANS,
  });
  return { pool, queries: { query: (textOrConfig, values) => guard.run(() => pool.query(textOrConfig, values)) } };
}

// SQLSTATE classes of a server that cannot take the query now: connection exception (08),
// insufficient resources (53), operator intervention (57: shutting down, starting up, cancelled).
const UNAVAILABLE_SQLSTATE = /^(08|53|57)/;

/** A server that is away or refusing, not a query that is wrong. The driver's own errors (refused, reset, timed out) carry no SQLSTATE. */
export function isPostgresOutage(error: unknown): boolean {
  const code = error instanceof Error ? (error as { code?: unknown }).code : undefined;
  if (typeof code === 'string' && /^[0-9A-Z]{5}$/.test(code)) return UNAVAILABLE_SQLSTATE.test(code);
  return error instanceof Error && (typeof code === 'string' || /connect|terminated|timeout|closed/i.test(error.message));
}

/** Runs `work` in one transaction: committed if it resolves, rolled back if it throws. */
export async function withTransaction<T>(pool: Pool, work: (client: PoolClient) => Promise<T>): Promise<T> {
  const client = await pool.connect();
  try {
    await client.query('begin');
    const result = await work(client);
    await client.query('commit');
    return result;
  } catch (error) {
    await client.query('rollback').catch(() => undefined);
    throw error;
  } finally {
    client.release();
  }
}

import type { Config } from '../config.js';
import type { Logger } from '../log.js';
import type { ApiMetrics } from '../metrics/api.js';
import type { StoreGuard } from '../stores/guard.js';
import type { Pool, Queryable } from '../stores/postgres/pool.js';
import type { PointReads } from '../stores/postgres/pointReads.js';
import type { Elastic, IndexAliases } from '../stores/elasticsearch/client.js';
import type { Redis } from '../stores/redis/client.js';
import type { RateLimiter } from '../stores/redis/rateLimiter.js';
import type { Authenticator } from './authenticator.js';
import type { HealthCheck } from './health.js';
import type { Meter } from './meter.js';
import type { PointCache } from './pointCache.js';
import type { ShortCache } from './shortCache.js';
import type { SummaryCache } from './summaryCache.js';

/** Set once the process drains: a load balancer asking GET /ready stops sending it requests. */
export interface Readiness {
  draining: boolean;
}

/** Everything a request may use, built once per process (see server.ts) and handed to the app. */
export interface Services {
  config: Config;
  log: Logger;
  /** PostgreSQL as requests use it: bounded waits, a 503 while it is away (createRequestPathPool). */
  db: Queryable;
  /** The pool itself, for migrations, usage writes and shutdown. */
  pool: Pool;
  /** The point lookups of the catalogue, batched per turn of the event loop. */
  reads: PointReads;
  redis: Redis;
  elastic: Elastic;
  indices: IndexAliases;
  authenticator: Authenticator;
  rateLimiter: RateLimiter;
  /** CORS preflights per client address (middleware/browserKeys.ts). */
  preflightLimiter: RateLimiter;
  pointCache: PointCache;
  shortCache: ShortCache;
  /** A subject's page and trending: kept and refreshed in the background (SUMMARY_REFRESH_S). */
  summaryCache: SummaryCache;
  /** Null when metering is switched off (METERING=off, for benchmarks). */
  meter: Meter | null;
  /** What GET /health answers, asked of the stores at most once a second. */
  health: HealthCheck;
  /** Whether this process still takes new traffic (GET /ready): no longer once it has been told to stop. */
  readiness: Readiness;
  /** The request path's guard of each store (PostgreSQL, Redis, Elasticsearch): their state and timeouts. */
  guards: readonly StoreGuard[];
  /** Null when metrics are off (METRICS_PORT unset). */
  metrics: ApiMetrics | null;
}

import { collectDefaultMetrics, Registry } from 'prom-client';
import type { Meter } from '../services/meter.js';
import type { PointCache } from '../services/pointCache.js';
import type { SummaryCache } from '../services/summaryCache.js';
import type { StoreGuard } from '../stores/guard.js';
import type { Pool } from '../stores/postgres/pool.js';
import type { RateLimiter } from '../stores/redis/rateLimiter.js';
import { readAtScrape } from './readAtScrape.js';
import { RequestMetrics } from './requests.js';

/** The API process's metrics: its own registry (several servers can run in one process, as in the tests), and the request counters the app feeds. */
export interface ApiMetrics {
  registry: Registry;
  requests: RequestMetrics;
}

/** The parts of the services the metrics read when scraped. */
export interface MeasuredServices {
  guards: readonly StoreGuard[];
  pool: Pool;
  meter: Meter | null;
  pointCache: PointCache;
  summaryCache: SummaryCache;
  rateLimiter: RateLimiter;
}

/**
 * Node's process metrics (CPU, memory, event loop lag, GC), the requests, and what the services
 * already keep, read at scrape time: each store's state and timeouts, PostgreSQL's pool, the point
 * cache's hits and misses, the summaries computed, the rate limit's refusals, usage records waiting to be written.
 */
export function apiMetrics(services: MeasuredServices): ApiMetrics {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });
  const requests = new RequestMetrics(registry);
  const { guards, pool, meter, pointCache, summaryCache, rateLimiter } = services;
  const byStore = (read: (guard: StoreGuard) => number) => () =>
    guards.map((guard) => ({ labels: { store: guard.store }, value: read(guard) }));

  readAtScrape(
    registry,
    'gauge',
    'bookmeta_store_up',
    'Whether the API counts the store as available (1) or away (0): while away, requests needing it answer 503.',
    byStore((guard) => (guard.available ? 1 : 0)),
    ['store'],
  );
  readAtScrape(
    registry,
    'counter',
    'bookmeta_store_timeouts_total',
    'Calls to the store whose wait (STORE_WAIT_MS) ran out.',
    byStore((guard) => guard.timeouts),
    ['store'],
  );
  readAtScrape(
    registry,
    'counter',
    'bookmeta_store_refusals_total',
    'Calls answered 503 because the store was away or past its wait.',
    byStore((guard) => guard.refusals),
    ['store'],
  );

  readAtScrape(registry, 'gauge', 'bookmeta_pg_pool_max', 'Connections the PostgreSQL pool may open.', () => [
    { value: pool.options.max ?? 10 },
  ]);
  readAtScrape(
    registry,
    'gauge',
    'bookmeta_pg_pool_connections',
    'Connections the PostgreSQL pool holds, all of them and the idle ones.',
    () => [
      { labels: { state: 'total' }, value: pool.totalCount },
      { labels: { state: 'idle' }, value: pool.idleCount },
    ],
    ['state'],
  );
  readAtScrape(registry, 'gauge', 'bookmeta_pg_pool_waiting', 'Queries waiting for a free PostgreSQL connection.', () => [
    { value: pool.waitingCount },
  ]);

  readAtScrape(
    registry,
    'counter',
    'bookmeta_point_cache_lookups_total',
    'Point lookups (ISBN, book, work, author) answered from the 24-hour cache (hit) or read from the catalogue (miss).',
    () => [
      { labels: { result: 'hit' }, value: pointCache.counts.hits },
      { labels: { result: 'miss' }, value: pointCache.counts.misses },
    ],
    ['result'],
  );
  readAtScrape(
    registry,
    'counter',
    'bookmeta_summary_computations_total',
    'Summaries (a subject page, trending) computed: in a request, none being kept or Redis away (cold), or in the background once old (refresh).',
    () =>
      [...summaryCache.computations].flatMap(([summary, counts]) => [
        { labels: { summary, when: 'cold' }, value: counts.cold },
        { labels: { summary, when: 'refresh' }, value: counts.refreshed },
      ]),
    ['summary', 'when'],
  );
  readAtScrape(
    registry,
    'counter',
    'bookmeta_summary_refresh_failures_total',
    'Background refreshes of a summary that failed; the kept one is served meanwhile and retried once its refresh lock expires.',
    () => [...summaryCache.computations].map(([summary, counts]) => ({ labels: { summary }, value: counts.failedRefreshes })),
    ['summary'],
  );
  readAtScrape(
    registry,
    'counter',
    'bookmeta_rate_limited_requests_total',
    'Requests refused (429) by the per-key rate limit; a refused batch counts once.',
    () => [{ value: rateLimiter.refused }],
  );

  // Without metering (METERING=off) there is nothing waiting and nothing dropped.
  readAtScrape(registry, 'gauge', 'bookmeta_usage_records_pending', 'Usage records waiting to be written to PostgreSQL.', () => [
    { value: meter?.health().pending ?? 0 },
  ]);
  readAtScrape(
    registry,
    'counter',
    'bookmeta_usage_records_dropped_total',
    'Usage records lost to a full buffer (METERING_BUFFER_MAX) while PostgreSQL was away.',
    () => [{ value: meter?.health().dropped ?? 0 }],
  );
  return { registry, requests };
}

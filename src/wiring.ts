import type { Config } from './config.js';
import type { Logger } from './log.js';
import { apiMetrics } from './metrics/api.js';
import { createRequestPathElastic, elasticGuard, indexAliases } from './stores/elasticsearch/client.js';
import { PointReads } from './stores/postgres/pointReads.js';
import { createRequestPathPool, postgresGuard } from './stores/postgres/pool.js';
import { connectRedis, redisGuard } from './stores/redis/client.js';
import { RateLimiter } from './stores/redis/rateLimiter.js';
import { ResponseCache } from './stores/redis/responseCache.js';
import { SummaryStore } from './stores/redis/summaries.js';
import { Authenticator } from './services/authenticator.js';
import type { Services } from './services/context.js';
import { HealthCheck } from './services/health.js';
import { Meter } from './services/meter.js';
import { PointCache } from './services/pointCache.js';
import { ShortCache } from './services/shortCache.js';
import { SummaryCache } from './services/summaryCache.js';

/** Connects every store and builds the services of one API process. */
export async function buildServices(config: Config, log: Logger): Promise<Services> {
  const guards = {
    postgres: postgresGuard(log, config.storeWaitMs),
    redis: redisGuard(log, config.storeWaitMs),
    elastic: elasticGuard(log, config.storeWaitMs),
  };
  const { pool, queries: db } = createRequestPathPool(config.databaseUrl, 20, guards.postgres);
  const redis = await connectRedis(config.redisUrl);
  const cache = new ResponseCache(redis, config.redisPrefix, guards.redis);
  const elastic = createRequestPathElastic(config.elasticsearchUrl, guards.elastic);
  // Usage writes wait as long as they need: a write given up on might still commit, and be written twice.
  const meter = config.meteringEnabled ? new Meter(pool, log, config.meteringBufferMax) : null;
  const services: Omit<Services, 'metrics'> = {
    config,
    log,
    pool,
    db,
    reads: new PointReads(db),
    redis,
    elastic,
    indices: indexAliases(config.indexPrefix),
    authenticator: new Authenticator(db, config.keyOutageGraceS * 1_000),
    rateLimiter: new RateLimiter(redis, config.redisPrefix, config.rateLimitMax, config.rateLimitWindowS, log, guards.redis),
    preflightLimiter: new RateLimiter(
      redis,
      `${config.redisPrefix}preflight:`,
      config.preflightRateLimitMax,
      config.rateLimitWindowS,
      log,
      guards.redis,
    ),
    pointCache: new PointCache(cache, config.pointCacheTtlS, log),
    shortCache: new ShortCache(cache, config.shortCacheTtlS, log),
    summaryCache: new SummaryCache(new SummaryStore(redis, config.redisPrefix, guards.redis), config.summaryRefreshS, log),
    meter,
    health: new HealthCheck({ db, redis, elastic }, meter, log),
    readiness: { draining: false },
    guards: Object.values(guards),
  };
  return { ...services, metrics: config.metricsPort === null ? null : apiMetrics(services) };
}

/** Releases what buildServices took, writing buffered usage and ending summary refreshes first. */
export async function closeServices(services: Services): Promise<void> {
  await services.summaryCache.idle();
  await services.meter?.close();
  await services.redis.quit().catch(() => undefined);
  await services.elastic.close();
  await services.pool.end();
}

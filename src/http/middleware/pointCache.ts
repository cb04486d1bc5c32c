import type { Logger } from '../../log.js';
import type { CacheLookup, ResponseCache } from '../../stores/redis/responseCache.js';
import type { Middleware } from '../state.js';

/**
 * The 24-hour cache of point lookups, keyed by the URL only. Runs after authentication and rate
 * limiting; answers `X-Cache: HIT` from Redis or `MISS` after the route, storing successful answers
 * under the entities they show (see ResponseCache). Redis trouble degrades to a miss.
 */
export const pointCache = (cache: ResponseCache, ttlS: number, log: Logger): Middleware => async (ctx, next) => {
  const key = ctx.url;
  const found: CacheLookup | null = await cache.lookup(key).catch((error: unknown) => {
    log.warn({ err: error, requestId: ctx.state.requestId }, 'cache read failed');
    return null;
  });
  if (found && 'hit' in found) {
    ctx.set('X-Cache', 'HIT');
    ctx.type = 'application/json';
    ctx.body = found.hit;
    return;
  }
  ctx.set('X-Cache', 'MISS');
  await next();
  if (found && ctx.status === 200 && typeof ctx.body === 'string' && ctx.state.shows) {
    cache.store(key, ctx.body, ttlS, ctx.state.shows, found.missAt).catch((error: unknown) => {
      log.warn({ err: error, requestId: ctx.state.requestId }, 'cache write failed');
    });
  }
};

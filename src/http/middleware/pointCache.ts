import type { Logger } from '../../log.js';
import type { ResponseCache } from '../../stores/redis/responseCache.js';
import type { Middleware } from '../state.js';

/**
 * The 24-hour cache of point lookups, keyed by the URL only. Runs after authentication and rate
 * limiting; answers `X-Cache: HIT` from Redis or `MISS` after the route, storing successful answers
 * under the entities they show (see ResponseCache). Redis trouble degrades to a miss.
 */
export const pointCache = (cache: ResponseCache, ttlS: number, log: Logger): Middleware => async (ctx, next) => {
  const key = ctx.url;
  const cached = await cache.get(key).catch((error: unknown) => {
    log.warn({ err: error, requestId: ctx.state.requestId }, 'cache read failed');
    return null;
  });
  if (cached !== null) {
    ctx.set('X-Cache', 'HIT');
    ctx.type = 'application/json';
    ctx.body = cached;
    return;
  }
  ctx.set('X-Cache', 'MISS');
  await next();
  if (ctx.status === 200 && typeof ctx.body === 'string' && ctx.state.shows) {
    cache.set(key, ctx.body, ttlS, ctx.state.shows).catch((error: unknown) => {
      log.warn({ err: error, requestId: ctx.state.requestId }, 'cache write failed');
    });
  }
};

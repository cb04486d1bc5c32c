import type { PointCache } from '../../services/pointCache.js';
import type { Middleware } from '../state.js';

/**
 * The 24-hour cache of point lookups (see PointCache), keyed by the URL's path: these routes define
 * no query parameters and ignore any, so a client cannot multiply entries by adding some. Consulted
 * after authentication and rate limiting; answers `X-Cache: HIT` from Redis or `MISS` after the
 * route, storing successful answers under the entities they show.
 */
export const pointCache = (points: PointCache): Middleware => async (ctx, next) => {
  const key = ctx.path;
  const found = await (ctx.state.cacheLookup ?? points.lookup(key, ctx.state.requestId));
  if (found && 'hit' in found) {
    ctx.set('X-Cache', 'HIT');
    ctx.type = 'application/json';
    ctx.body = found.hit;
    return;
  }
  ctx.set('X-Cache', 'MISS');
  await next();
  if (found && ctx.status === 200 && typeof ctx.body === 'string' && ctx.state.shows) {
    points.store(key, ctx.body, ctx.state.shows, found.missAt, ctx.state.requestId);
  }
};

const POINT_LOOKUP = /^\/v1\/(?:isbn|books|works|authors)\/(?!search$)[^/]+$/;

/**
 * Starts the cache read of a point lookup before the rate limiter's round trip, so the two travel
 * to Redis together instead of one after the other. Only the read is early: its answer is used by
 * `pointCache`, once the rate limit has let the request through.
 */
export const prefetchPointCache = (points: PointCache): Middleware => async (ctx, next) => {
  if (ctx.method === 'GET' && POINT_LOOKUP.test(ctx.path)) ctx.state.cacheLookup = points.lookup(ctx.path, ctx.state.requestId);
  await next();
};

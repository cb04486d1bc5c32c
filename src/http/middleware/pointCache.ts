import type { PointCache } from '../../services/pointCache.js';
import type { AppContext, Middleware } from '../state.js';

/**
 * Starts the cache read of a point lookup (GET /v1/isbn/..., /v1/books/... and the like) before
 * the rate limiter's round trip, so the two travel to Redis together instead of one after the
 * other. Only the read is early: the route (routes/lookups.ts) uses its answer once the rate limit
 * has let the request through.
 */
export const prefetchPointCache = (points: PointCache, isPointLookup: (ctx: AppContext) => boolean): Middleware => async (ctx, next) => {
  if (isPointLookup(ctx)) ctx.state.cacheLookup = points.lookup(ctx.path, ctx.state.requestId);
  await next();
};

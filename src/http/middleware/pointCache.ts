import type { PointCache } from '../../services/pointCache.js';
import type { Middleware } from '../state.js';

const POINT_LOOKUP = /^\/v1\/(?:isbn|books|works|authors)\/(?!search$)[^/]+$/;

/**
 * Starts the cache read of a point lookup (GET /v1/isbn/..., /v1/books/... and the like) before
 * the rate limiter's round trip, so the two travel to Redis together instead of one after the
 * other. Only the read is early: the route (routes/lookups.ts) uses its answer once the rate limit
 * has let the request through.
 */
export const prefetchPointCache = (points: PointCache): Middleware => async (ctx, next) => {
  if (ctx.method === 'GET' && POINT_LOOKUP.test(ctx.path)) ctx.state.cacheLookup = points.lookup(ctx.path, ctx.state.requestId);
  await next();
};

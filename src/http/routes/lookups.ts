import type Router from '@koa/router';
import type { RouterMiddleware } from '@koa/router';
import type { Services } from '../../services/context.js';
import { isMerged, type Merged, type Resolved } from '../../services/lookups.js';
import { pointAnswer, type PointFamily } from '../../services/pointLookups.js';
import { sendJson, sendJsonText, type AppContext, type RequestState } from '../state.js';

/** A merged id answers 301 to its survivor under the same path family. */
function redirect(ctx: AppContext, { mergedInto, location }: Merged): void {
  ctx.set('Location', location);
  sendJson(ctx, { merged_into: mergedInto, location }, 301);
}

/** A record answers 200; a merged id answers 301 (see redirect). */
export function respond<T>(ctx: AppContext, resolved: Resolved<T>): void {
  if (isMerged(resolved)) redirect(ctx, resolved);
  else sendJson(ctx, resolved.record);
}

/**
 * A point lookup: through the 24-hour cache keyed by the URL's path (these routes define no query
 * parameters and ignore any, so a client cannot multiply entries by adding some), consulted after
 * authentication and rate limiting, with the read that prefetchPointCache started. `X-Cache` says
 * HIT for an answer from Redis, MISS for anything else (errors and redirects are never cached).
 */
const pointRoute = (services: Services, family: PointFamily, param: string): RouterMiddleware<RequestState> => async (ctx) => {
  ctx.set('X-Cache', 'MISS');
  const answer = await pointAnswer(services, ctx.state.requestId, family, ctx.params[param]!, ctx.path, ctx.state.cacheLookup);
  if (isMerged(answer)) return redirect(ctx, answer);
  if (answer.cached) ctx.set('X-Cache', 'HIT');
  sendJsonText(ctx, answer.text);
};

export function lookupRoutes(router: Router<RequestState>, services: Services): void {
  router.get('/v1/isbn/:isbn', pointRoute(services, 'isbn', 'isbn'));
  router.get('/v1/books/:id', pointRoute(services, 'books', 'id'));
  router.get('/v1/works/:id', pointRoute(services, 'works', 'id'));
  router.get('/v1/authors/:id', pointRoute(services, 'authors', 'id'));
}

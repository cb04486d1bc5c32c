import type Router from '@koa/router';
import type { RouterMiddleware } from '@koa/router';
import type { Services } from '../../services/context.js';
import { isMerged, type Merged, type Resolved } from '../../services/lookups.js';
import { resolveOpenLibraryKey } from '../../services/openlibrary.js';
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

const POINT_ROUTES: Record<PointFamily, string> = { isbn: '/v1/isbn/:isbn', books: '/v1/books/:id', works: '/v1/works/:id', authors: '/v1/authors/:id' };
// The point routes' paths as one pattern, a parameter being one path segment. It is asked for every
// GET before routing: router.match there made cached lookups about a fifth slower (README, Performance).
const POINT_PATH = new RegExp(`^(?:${Object.values(POINT_ROUTES).map((route) => route.replace(/:\w+/g, '[^/]+')).join('|')})$`);

/**
 * Whether the router would answer a request with a point lookup: asked before routing, by the cache
 * prefetch. A GET route of no parameters (`/v1/books/search`) wins over a point route of its shape,
 * as the router ranks them.
 */
export function pointLookupRequests(router: Router<RequestState>): (ctx: AppContext) => boolean {
  const staticGets = new Set(router.stack.flatMap((layer) => (layer.paramNames.length === 0 && layer.methods.includes('GET') ? [String(layer.path)] : [])));
  return (ctx) => ctx.method === 'GET' && POINT_PATH.test(ctx.path) && !staticGets.has(ctx.path);
}

export function lookupRoutes(router: Router<RequestState>, services: Services): void {
  for (const [family, path] of Object.entries(POINT_ROUTES) as [PointFamily, string][]) {
    router.get(path, pointRoute(services, family, path.slice(path.lastIndexOf(':') + 1)));
  }
  // An Open Library key answers 301 to our record of it (one primary-key read, not cached).
  router.get('/v1/openlibrary/:key', async (ctx) => {
    const { id, location } = await resolveOpenLibraryKey(services.db, ctx.params.key!);
    ctx.set('Location', location);
    sendJson(ctx, { id, location }, 301);
  });
}

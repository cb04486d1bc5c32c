import type Router from '@koa/router';
import { authorById, bookById, bookByIsbn, workById, type Resolved } from '../../services/lookups.js';
import type { Services } from '../../services/context.js';
import { pointCache } from '../middleware/pointCache.js';
import { sendJson, type AppContext, type RequestState } from '../state.js';

/** A record answers 200; a merged id answers 301 to its survivor under the same path family. */
export function respond<T>(ctx: AppContext, resolved: Resolved<T>): void {
  if ('mergedInto' in resolved) {
    ctx.set('Location', resolved.location);
    sendJson(ctx, { merged_into: resolved.mergedInto, location: resolved.location }, 301);
    return;
  }
  ctx.state.shows = resolved.shows;
  sendJson(ctx, resolved.record);
}

export function lookupRoutes(router: Router<RequestState>, { reads, pointCache: points }: Services): void {
  const cached = pointCache(points);
  router.get('/v1/isbn/:isbn', cached, async (ctx) => respond(ctx, await bookByIsbn(reads, ctx.params.isbn!)));
  router.get('/v1/books/:id', cached, async (ctx) => respond(ctx, await bookById(reads, ctx.params.id!)));
  router.get('/v1/works/:id', cached, async (ctx) => respond(ctx, await workById(reads, ctx.params.id!)));
  router.get('/v1/authors/:id', cached, async (ctx) => respond(ctx, await authorById(reads, ctx.params.id!)));
}

import type Router from '@koa/router';
import type { Services } from '../../services/context.js';
import { matchBook } from '../../services/match.js';
import { recommendFor } from '../../services/recommend.js';
import { searchAuthors, searchBooks } from '../../services/search.js';
import { jsonBody } from '../middleware/jsonBody.js';
import { queryParam, sendJson, type AppContext, type RequestState } from '../state.js';
import { respond } from './lookups.js';

/** The named query parameters of a request; others are ignored. */
function queryParams<Name extends string>(ctx: AppContext, names: readonly Name[]): Partial<Record<Name, string>> {
  return Object.fromEntries(names.map((name) => [name, queryParam(ctx, name)])) as Partial<Record<Name, string>>;
}

/** Book and author search, match and recommendations. */
export function searchRoutes(router: Router<RequestState>, services: Services): void {
  router.get('/v1/books/search', async (ctx) => {
    sendJson(ctx, await searchBooks(services, queryParams(ctx, ['q', 'limit', 'offset', 'author_id', 'language', 'year_from', 'year_to', 'editions'])));
  });
  router.get('/v1/authors/search', async (ctx) => {
    sendJson(ctx, await searchAuthors(services, queryParams(ctx, ['q', 'limit', 'offset'])));
  });
  router.post('/v1/match', jsonBody(), async (ctx) => {
    sendJson(ctx, await matchBook(services, ctx.request.json));
  });
  router.get('/v1/books/:id/recommendations', async (ctx) => {
    respond(ctx, await recommendFor(services, ctx.params.id!, queryParam(ctx, 'limit')));
  });
}

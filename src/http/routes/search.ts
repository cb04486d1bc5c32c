import type Router from '@koa/router';
import type { Services } from '../../services/context.js';
import { matchBook } from '../../services/match.js';
import { recommendFor } from '../../services/recommend.js';
import type { QueryText } from '../../services/queryParams.js';
import { authorSearchQuery, bookSearchQuery, searchAuthors, searchBooks } from '../../services/search.js';
import { jsonBody } from '../middleware/jsonBody.js';
import { queryParam, sendJson, type AppContext, type RequestState } from '../state.js';
import { respond } from './lookups.js';

/** The query parameters a route's query schema names, as text; others are ignored. */
function queryParams<Query extends { shape: object }>(ctx: AppContext, schema: Query): QueryText<Query> {
  return Object.fromEntries(Object.keys(schema.shape).map((name) => [name, queryParam(ctx, name)])) as QueryText<Query>;
}

/** Book and author search, match and recommendations. */
export function searchRoutes(router: Router<RequestState>, services: Services): void {
  router.get('/v1/books/search', async (ctx) => {
    sendJson(ctx, await searchBooks(services, queryParams(ctx, bookSearchQuery)));
  });
  router.get('/v1/authors/search', async (ctx) => {
    sendJson(ctx, await searchAuthors(services, queryParams(ctx, authorSearchQuery)));
  });
  router.post('/v1/match', jsonBody(), async (ctx) => {
    sendJson(ctx, await matchBook(services, ctx.request.json));
  });
  router.get('/v1/books/:id/recommendations', async (ctx) => {
    respond(ctx, await recommendFor(services, ctx.params.id!, queryParam(ctx, 'limit')));
  });
}

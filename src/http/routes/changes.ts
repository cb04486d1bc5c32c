import type Router from '@koa/router';
import type { Services } from '../../services/context.js';
import { changesSince } from '../../services/changeFeed.js';
import { queryParam, sendJson, type RequestState } from '../state.js';

export function changeRoutes(router: Router<RequestState>, { db, shortCache }: Services): void {
  router.get('/v1/changes', async (ctx) => {
    sendJson(ctx, await changesSince(db, shortCache, queryParam(ctx, 'since'), queryParam(ctx, 'limit')));
  });
}

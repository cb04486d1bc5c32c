import Router from '@koa/router';
import Koa from 'koa';
import compose from 'koa-compose';
import type { Services } from '../services/context.js';
import { authenticate } from './middleware/authenticate.js';
import { renderErrors } from './middleware/errors.js';
import { prefetchPointCache } from './middleware/pointCache.js';
import { protocolRules } from './middleware/protocol.js';
import { rateLimit } from './middleware/rateLimit.js';
import { recordRequests } from './middleware/requestRecords.js';
import { requestId } from './middleware/requestId.js';
import { batchRoutes, isBatchRequest } from './routes/batch.js';
import { changeRoutes } from './routes/changes.js';
import { lookupRoutes, pointLookupRequests } from './routes/lookups.js';
import { isMcpPost, mcpRoutes } from './routes/mcp.js';
import { isPublicRequest, publicRoutes } from './routes/public.js';
import { reconcileCrossOrigin, reconcileRoutes } from './routes/reconcile.js';
import { searchRoutes } from './routes/search.js';
import type { AppContext, Middleware, RequestState } from './state.js';

/**
 * The one rule of access: the public paths, spelled exactly, and the reconciliation manifest need
 * no key; every other request (any other spelling, any unknown path) is authenticated, rate limited
 * and metered before the router sees it.
 */
function guard(services: Services, router: Router<RequestState>): Middleware {
  const spendsItself = (ctx: AppContext): boolean => isBatchRequest(ctx) || isMcpPost(ctx);
  const guarded = compose([authenticate(services.authenticator), prefetchPointCache(services.pointCache, pointLookupRequests(router)), rateLimit(services.rateLimiter, services.log, spendsItself)]);
  return (ctx, next) => (isPublicRequest(ctx) ? next() : guarded(ctx, next));
}

/**
 * All routes the server answers; also used by the OpenAPI test to compare against the document.
 * Paths match exactly (case and trailing slash count), and the most specific route wins whatever
 * the order of registration (`/v1/books/search` over `/v1/books/:id`).
 */
export function createRouter(services: Services): Router<RequestState> {
  const router = new Router<RequestState>({ sensitive: true, strict: true, exclusive: 'specificity' });
  publicRoutes(router, services);
  lookupRoutes(router, services);
  searchRoutes(router, services);
  changeRoutes(router, services);
  mcpRoutes(router, services);
  batchRoutes(router, services);
  reconcileRoutes(router, services);
  return router;
}

export function createApp(services: Services): Koa<RequestState> {
  const app = new Koa<RequestState>();
  const router = createRouter(services);
  app.use(requestId());
  app.use(recordRequests(services.log, services.meter, router));
  app.use(renderErrors(services.log));
  app.use(protocolRules());
  app.use(reconcileCrossOrigin());
  app.use(guard(services, router));
  app.use(router.routes());
  app.use(router.allowedMethods());
  return app;
}

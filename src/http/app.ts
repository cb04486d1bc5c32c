import Router from '@koa/router';
import Koa from 'koa';
import compose from 'koa-compose';
import type { Services } from '../services/context.js';
import { authenticate } from './middleware/authenticate.js';
import { renderErrors } from './middleware/errors.js';
import { prefetchPointCache } from './middleware/pointCache.js';
import { rateLimit } from './middleware/rateLimit.js';
import { recordRequests } from './middleware/requestRecords.js';
import { requestId } from './middleware/requestId.js';
import { changeRoutes } from './routes/changes.js';
import { lookupRoutes } from './routes/lookups.js';
import { mcpRoutes } from './routes/mcp.js';
import { publicRoutes } from './routes/public.js';
import { searchRoutes } from './routes/search.js';
import type { Middleware, RequestState } from './state.js';

/** Paths that need a key, are metered and draw on the rate budget. */
const isProtected = (path: string): boolean => path === '/v1' || path.startsWith('/v1/') || path === '/mcp';

/** Authentication, then the rate limit, for protected paths only. */
function guard(services: Services): Middleware {
  const guarded = compose([authenticate(services.authenticator), prefetchPointCache(services.pointCache), rateLimit(services.rateLimiter, services.log)]);
  return (ctx, next) => (isProtected(ctx.path) ? guarded(ctx, next) : next());
}

/** All routes the server answers; also used by the OpenAPI test to compare against the document. */
export function createRouter(services: Services): Router<RequestState> {
  const router = new Router<RequestState>();
  publicRoutes(router, services);
  searchRoutes(router, services);
  lookupRoutes(router, services);
  changeRoutes(router, services);
  mcpRoutes(router, services);
  return router;
}

export function createApp(services: Services): Koa<RequestState> {
  const app = new Koa<RequestState>();
  const router = createRouter(services);
  app.use(requestId());
  app.use(recordRequests(services.log, services.meter));
  app.use(renderErrors(services.log));
  app.use(guard(services));
  app.use(router.routes());
  app.use(router.allowedMethods());
  return app;
}

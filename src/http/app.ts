import Koa from 'koa';
import compose from 'koa-compose';
import type { Services } from '../services/context.js';
import { identifyClient, trustedSet } from './clientAddress.js';
import { authenticate } from './middleware/authenticate.js';
import { browserPreflights, keyOrigins } from './middleware/browserKeys.js';
import { conditionalGets } from './middleware/conditional.js';
import { renderErrors } from './middleware/errors.js';
import { partialResponses } from './middleware/partialResponses.js';
import { protocolRules } from './middleware/protocol.js';
import { rateLimit } from './middleware/rateLimit.js';
import { recordRequests } from './middleware/requestRecords.js';
import { requestMetrics } from './middleware/requestMetrics.js';
import { requestId } from './middleware/requestId.js';
import { answerRequest } from './messages.js';
import { allowedMethods, matchRoute, requestAccess, requestTemplate } from './routeTable.js';
import { reconcileCrossOrigin } from './routes/reconcile.js';
import type { AppContext, Middleware, RequestState } from './route.js';

/** Finds the route of the request (routeTable.ts) and leaves it on ctx.state for the middlewares after it. */
const routeRequests = (): Middleware => async (ctx, next) => {
  const served = matchRoute(ctx.method, ctx.path);
  ctx.state.route = served?.route;
  ctx.state.params = served?.params ?? {};
  await next();
};

/**
 * Routes that spend the key's budget themselves: batches and MCP once their body says how much
 * (see Cost), a point lookup beside its cache read (routes/lookups.ts).
 */
const spendsItself = ({ state: { route } }: AppContext): boolean =>
  route !== undefined && (route.cost === 'items' || route.cost === 'mcp' || route.cache === 'point');

/**
 * The one rule of access: a public route needs no key and is neither metered nor rate limited;
 * every other request (any other spelling, any unknown path, any method) is authenticated, rate
 * limited and metered before it is answered.
 */
function guard(services: Services): Middleware {
  const guarded = compose([authenticate(services.authenticator), keyOrigins(), rateLimit(services.rateLimiter, spendsItself)]);
  return async (ctx, next) => {
    if (requestAccess(ctx, ctx.state.route) === 'public') await next();
    else await guarded(ctx, next);
  };
}

/**
 * Runs the request's route. A path no route has is a 404; a method its path does not serve a 405
 * with `Allow` (OPTIONS: the `Allow` alone), rendered in the contract's shape by renderErrors.
 */
const dispatch =
  (services: Services): Middleware =>
  async (ctx) => {
    const { route, params } = ctx.state;
    if (route) return route.handle ? route.handle(ctx, services, params) : answerRequest(ctx, services, route, params);
    const allowed = allowedMethods(ctx.path);
    if (allowed.length === 0) return;
    ctx.set('Allow', allowed.join(', '));
    ctx.status = ctx.method === 'OPTIONS' ? 204 : 405;
  };

export function createApp(services: Services): Koa<RequestState> {
  const app = new Koa<RequestState>();
  app.use(identifyClient(trustedSet(services.config.trustedProxies)));
  app.use(requestId());
  if (services.metrics) app.use(requestMetrics(services.metrics.requests, requestTemplate));
  app.use(recordRequests(services.log, services.meter));
  app.use(renderErrors(services.log));
  app.use(protocolRules());
  app.use(reconcileCrossOrigin());
  app.use(browserPreflights(services.preflightLimiter));
  app.use(routeRequests());
  app.use(guard(services));
  app.use(conditionalGets(services.config));
  app.use(partialResponses(services, spendsItself));
  app.use(dispatch(services));
  return app;
}

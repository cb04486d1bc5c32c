import type Router from '@koa/router';
import type { RouterContext } from '@koa/router';
import type { Logger } from '../../log.js';
import type { Meter } from '../../services/meter.js';
import type { Middleware, RequestState } from '../state.js';

/** The usage route of a request no route matched. */
export const UNMATCHED_ROUTE = '(unmatched)';

/**
 * The template of the route that answered; for a request answered before routing (401, 429) or
 * refused by method (405), the template its path would take, the most specific as the router picks.
 */
function routeTemplate(router: Router<RequestState>, ctx: RouterContext): string {
  if (ctx.routerPath) return ctx.routerPath;
  const { path, pathAndMethod } = router.match(ctx.path, ctx.method);
  const layers = pathAndMethod.length > 0 ? pathAndMethod : path;
  const template = layers.reduce<(typeof layers)[number] | undefined>((best, layer) => (!best || layer.paramNames.length < best.paramNames.length ? layer : best), undefined)?.path;
  return typeof template === 'string' ? template : UNMATCHED_ROUTE;
}

/**
 * The two records of a finished request, taken at one moment from one timer: a structured log line
 * for every request, and a usage record (when metering is on) for every call made with a valid key.
 * Sitting outside `renderErrors`, it sees the status the client got.
 */
export function recordRequests(log: Logger, meter: Meter | null, router: Router<RequestState>): Middleware {
  return async (ctx, next) => {
    const started = performance.now();
    try {
      await next();
    } finally {
      const finished = performance.now();
      const { requestId, kid } = ctx.state;
      // The URL is logged without its query: search text is the user's business.
      log.info({ requestId, method: ctx.method, path: ctx.path, status: ctx.status, ms: Math.round((finished - started) * 10) / 10, kid }, 'request');
      if (meter && kid) {
        meter.record({
          kid,
          method: ctx.method,
          // The route's template, never the URL: ids, search text and made-up paths would make the
          // usage table useless and unbounded, so every path no route matched is one bucket.
          route: ctx.state.meteredRoute ?? routeTemplate(router, ctx as RouterContext),
          status: ctx.status,
          at: performance.timeOrigin + finished,
          latencyMs: finished - started,
        });
      }
    }
  };
}

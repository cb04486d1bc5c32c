import type { RequestMetrics } from '../../metrics/requests.js';
import type { AppContext, Middleware } from '../route.js';

/**
 * Counts and times every request under its route template (`routeOf`), with the status the client
 * got: it sits outside `renderErrors`, like `recordRequests`.
 */
export const requestMetrics =
  (metrics: RequestMetrics, routeOf: (ctx: AppContext) => string): Middleware =>
  async (ctx, next) => {
    const started = performance.now();
    try {
      await next();
    } finally {
      metrics.observe(routeOf(ctx), ctx.method, ctx.status, (performance.now() - started) / 1000);
    }
  };

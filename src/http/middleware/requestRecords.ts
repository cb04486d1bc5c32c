import type { Logger } from '../../log.js';
import type { Meter } from '../../services/meter.js';
import { requestTemplate } from '../routeTable.js';
import type { Middleware } from '../route.js';

/**
 * The two records of a finished request, taken at one moment from one timer: a structured log line
 * for every request, and a usage record (when metering is on) for every call made with a valid key.
 * Sitting outside `renderErrors`, it sees the status the client got.
 */
export function recordRequests(log: Logger, meter: Meter | null): Middleware {
  return async (ctx, next) => {
    const started = performance.now();
    try {
      await next();
    } finally {
      const finished = performance.now();
      const { requestId, kid, client } = ctx.state;
      // The URL is logged without its query: search text is the user's business.
      log.info(
        { requestId, client, method: ctx.method, path: ctx.path, status: ctx.status, ms: Math.round((finished - started) * 10) / 10, kid },
        'request',
      );
      if (meter && kid) {
        // The route's template, never the URL: ids, search text and made-up paths would make the
        // usage table useless and unbounded, so every path no route matched is one bucket. A method
        // its path does not serve (405) counts under the path's route.
        for (const route of ctx.state.meteredRoutes ?? [requestTemplate(ctx)])
          meter.record({
            kid,
            method: ctx.method,
            route,
            status: ctx.status,
            at: performance.timeOrigin + finished,
            latencyMs: finished - started,
          });
      }
    }
  };
}

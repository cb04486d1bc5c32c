import { requestLogger, type Logger } from '../../log.js';
import type { Meter } from '../../services/meter.js';
import type { Middleware } from '../state.js';

/**
 * The two records of a finished request, taken at one moment from one timer: a structured log line
 * for every request, and a usage record (when metering is on) for every call made with a valid key.
 * Sitting outside `renderErrors`, it sees the status the client got.
 */
export function recordRequests(log: Logger, meter: Meter | null): Middleware {
  const logRequest = requestLogger(log);
  return async (ctx, next) => {
    const started = performance.now();
    try {
      await next();
    } finally {
      const finished = performance.now();
      const { requestId, kid } = ctx.state;
      // The URL is logged without its query: search text is the user's business.
      logRequest({ requestId, method: ctx.method, path: ctx.path, status: ctx.status, ms: Math.round((finished - started) * 10) / 10, kid });
      if (meter && kid) {
        meter.record({
          kid,
          method: ctx.method,
          // The route pattern, not the URL: ids and search text would make the usage table useless.
          route: ctx.state.meteredRoute ?? (ctx as { _matchedRoute?: string })._matchedRoute ?? ctx.path,
          status: ctx.status,
          at: performance.timeOrigin + finished,
          latencyMs: finished - started,
        });
      }
    }
  };
}

import { asApiError } from '../../errors.js';
import type { Meter } from '../../services/meter.js';
import type { Middleware } from '../state.js';

/** Records one usage line per authenticated call, after it is answered; nothing here waits for a write. */
export const meter = (usage: Meter): Middleware => async (ctx, next) => {
  const started = performance.now();
  let status = 200;
  try {
    await next();
    status = ctx.status;
  } catch (error) {
    status = asApiError(error).status;
    throw error;
  } finally {
    const finished = performance.now();
    usage.record({
      kid: ctx.state.kid!,
      method: ctx.method,
      // The route pattern, not the URL: ids and search text would make the usage table useless.
      route: ctx.state.meteredRoute ?? (ctx as { _matchedRoute?: string })._matchedRoute ?? ctx.path,
      status,
      at: performance.timeOrigin + finished,
      latencyMs: finished - started,
    });
  }
};

import type { Logger } from '../../log.js';
import type { Middleware } from '../state.js';

/** One structured line per request. The URL is logged without its query (search text is the user's business). */
export const accessLog = (log: Logger): Middleware => async (ctx, next) => {
  const started = performance.now();
  try {
    await next();
  } finally {
    log.info(
      {
        requestId: ctx.state.requestId,
        method: ctx.method,
        path: ctx.path,
        status: ctx.status,
        ms: Math.round((performance.now() - started) * 10) / 10,
        kid: ctx.state.kid,
      },
      'request',
    );
  }
};

import { ApiError, asApiError } from '../../errors.js';
import type { Logger } from '../../log.js';
import type { AppContext, Middleware } from '../route.js';

/**
 * Turns every failure into the contract's error body, including the bare statuses Koa and the
 * dispatch leave behind (no route, wrong method), so no response ever leaves without
 * `{"error": {"code", "message"}}`. A fault (500) is logged with its request; a store that is
 * away (503) is said by the store's client once per interval, not once per request it fails.
 */
export const renderErrors =
  (log: Logger): Middleware =>
  async (ctx, next) => {
    try {
      await next();
      if (ctx.status >= 400 && ctx.body == null) throw bareStatusError(ctx);
    } catch (error) {
      const apiError = error instanceof ApiError ? error : (exposedHttpError(error) ?? asApiError(error));
      if (apiError.status === 500) log.error({ err: error, requestId: ctx.state.requestId }, 'request failed');
      ctx.status = apiError.status;
      ctx.set(apiError.headers);
      ctx.type = 'application/json';
      ctx.body = JSON.stringify(apiError.toJSON());
    }
  };

function bareStatusError(ctx: AppContext): ApiError {
  if (ctx.status === 405) {
    return new ApiError(
      405,
      'method_not_allowed',
      `method ${ctx.method} is not allowed on ${ctx.path}; allowed: ${ctx.response.get('Allow')}`,
    );
  }
  if (ctx.status === 404) return new ApiError(404, 'not_found', `no route ${ctx.method} ${ctx.path}`);
  return new ApiError(ctx.status, 'bad_request', ctx.message);
}

/** Errors thrown by Koa itself (a bad request line, a body too large) carry an exposed status. */
function exposedHttpError(error: unknown): ApiError | null {
  if (typeof error !== 'object' || error === null) return null;
  const { status, expose, message } = error as { status?: unknown; expose?: unknown; message?: unknown };
  if (typeof status !== 'number' || status >= 500 || expose !== true) return null;
  return new ApiError(status, status === 413 ? 'payload_too_large' : 'bad_request', typeof message === 'string' ? message : 'bad request');
}

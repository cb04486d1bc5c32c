/** An error the client caused or should know about, in the contract's shape: status, code, message. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
    this.name = 'ApiError';
  }

  toJSON(): { error: { code: string; message: string } } {
    return { error: { code: this.code, message: this.message } };
  }
}

export const badRequest = (message: string): ApiError => new ApiError(400, 'bad_request', message);
export const notFound = (message: string): ApiError => new ApiError(404, 'not_found', message);
/** A record that existed and was deleted by its source: never shown as if live. */
export const gone = (message: string): ApiError => new ApiError(410, 'gone', message);
export const unauthorized = (message: string): ApiError =>
  new ApiError(401, 'unauthorized', message, { 'WWW-Authenticate': 'Bearer' });

/** The 429 of a key whose budget is spent: what was exceeded, and the wait (Retry-After) until `decision` frees enough. */
export function refused(exceeded: string, decision: { resetMs: number }): ApiError {
  const resetS = Math.ceil(decision.resetMs / 1000);
  return new ApiError(429, 'rate_limited', `rate limit exceeded: ${exceeded}; retry in ${resetS} s`, { 'Retry-After': String(Math.max(1, resetS)) });
}

/** The 503 of a request that needs a store that is away: which one, and when to try again (Retry-After). */
export const unavailable = (store: string, retryAfterS: number): ApiError =>
  new ApiError(503, 'unavailable', `${store} is unavailable; retry in ${retryAfterS} s`, { 'Retry-After': String(retryAfterS) });

/** Whether `error` is such a 503: the request needed a store that is away. */
export const isUnavailable = (error: unknown): boolean => error instanceof ApiError && error.code === 'unavailable';

/** What the client sees of any fault that is not an ApiError; the details go to the log only. */
export const internalError = (): ApiError => new ApiError(500, 'internal', 'internal server error; retry with backoff');

export const asApiError = (error: unknown): ApiError => (error instanceof ApiError ? error : internalError());

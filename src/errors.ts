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
export const unauthorized = (message: string): ApiError =>
  new ApiError(401, 'unauthorized', message, { 'WWW-Authenticate': 'Bearer' });

/** What the client sees of any fault that is not an ApiError; the details go to the log only. */
export const internalError = (): ApiError => new ApiError(500, 'internal', 'internal server error; retry with backoff');

export const asApiError = (error: unknown): ApiError => (error instanceof ApiError ? error : internalError());

import { z } from 'zod/v4';

/** The contract's error object: a machine-readable code and a message for people. */
export const errorObject = z.object({
  code: z.string().meta({
    description:
      'Machine-readable: bad_request, unauthorized, not_found, method_not_allowed, not_acceptable, request_timeout, payload_too_large, unsupported_media_type, ' +
      'expectation_failed, headers_too_large, rate_limited, too_many_connections, internal, unavailable.',
  }),
  message: z.string().meta({ description: 'Human-readable; safe to log; do not parse.' }),
});

/** Every error body: `{"error": {"code", "message"}}`. */
export const errorBody = z.object({ error: errorObject }).meta({ id: 'Error' });

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

  toJSON(): z.output<typeof errorBody> {
    return { error: { code: this.code, message: this.message } };
  }
}

export const badRequest = (message: string): ApiError => new ApiError(400, 'bad_request', message);
export const notFound = (message: string): ApiError => new ApiError(404, 'not_found', message);
/** A record that existed and was deleted by its source: never shown as if live. */
export const gone = (message: string): ApiError => new ApiError(410, 'gone', message);
export const unauthorized = (message: string): ApiError => new ApiError(401, 'unauthorized', message, { 'WWW-Authenticate': 'Bearer' });

/** The 429 of a key whose budget is spent: what was exceeded, and the wait (Retry-After) until `decision` frees enough. */
export function refused(exceeded: string, decision: { resetMs: number }): ApiError {
  const resetS = Math.ceil(decision.resetMs / 1000);
  return new ApiError(429, 'rate_limited', `rate limit exceeded: ${exceeded}; retry in ${resetS} s`, {
    'Retry-After': String(Math.max(1, resetS)),
  });
}

/** The 503 of a request that needs a store that is away: which one, perhaps why, and when to try again (Retry-After). */
export const unavailable = (store: string, retryAfterS: number, why?: string): ApiError =>
  new ApiError(503, 'unavailable', `${store} is unavailable${why === undefined ? '' : ` (${why})`}; retry in ${retryAfterS} s`, {
    'Retry-After': String(retryAfterS),
  });

/** Whether `error` is such a 503: the request needed a store that is away. */
export const isUnavailable = (error: unknown): boolean => error instanceof ApiError && error.code === 'unavailable';

/** What the client sees of any fault that is not an ApiError; the details go to the log only. */
export const internalError = (): ApiError => new ApiError(500, 'internal', 'internal server error; retry with backoff');

/** Where an issue is, as a client writes it: `isbns[3]`, `since`. */
const issuePath = (path: readonly PropertyKey[]): string =>
  path.map((key, index) => (typeof key === 'number' ? `[${key}]` : `${index > 0 ? '.' : ''}${String(key)}`)).join('');

/**
 * `input` as `schema` reads it, or the 400 of its first problem. Schemas word their messages as
 * the API says them, naming the field; a problem inside one (an item of a list: "must be a
 * string") gets its place prefixed, `isbns[3] must be a string`.
 */
export function parseInput<S extends z.ZodType>(schema: S, input: unknown): z.output<S> {
  const parsed = schema.safeParse(input);
  if (parsed.success) return parsed.data;
  const { issues } = parsed.error;
  // An unknown field usually explains the missing one beside it (a misspelt name): it is said first.
  const { path, message } = issues.find((issue) => issue.code === 'unrecognized_keys') ?? issues[0]!;
  throw badRequest(path.length > 1 ? `${issuePath(path)} ${message}` : message);
}

export const asApiError = (error: unknown): ApiError => (error instanceof ApiError ? error : internalError());

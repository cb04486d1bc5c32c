import { ApiError, refused } from '../../errors.js';
import type { RateLimiter } from '../../stores/redis/rateLimiter.js';
import type { Middleware, RequestShape } from '../route.js';

/**
 * Keys for browsers: a key that names web origins (bookmeta keys create --origin) may be used by
 * pages of those origins, on every /v1 route and /mcp, with CORS; from a page of any other origin
 * it is refused. A key without origins is server-side only and answers no CORS, as before.
 */

/** The paths a browser key opens; /reconcile answers CORS to every origin on its own (reconcileCrossOrigin). */
const opensToBrowsers = (path: string): boolean => path.startsWith('/v1/') || path === '/mcp';

/** What a page may read of an answer besides the CORS-safelisted headers. */
const EXPOSED =
  'ETag, X-Cache, X-Request-Id, Location, Retry-After, RateLimit-Limit, RateLimit-Remaining, RateLimit-Reset, RateLimit-Policy';

/** What a page may send: the key, a JSON body, a revalidation, MCP's own headers. */
const ALLOWED_HEADERS = 'Authorization, Content-Type, If-None-Match, Mcp-Protocol-Version, Mcp-Session-Id';

/** A browser's preflight of a path a browser key opens (it carries no key, by design). */
export const isBrowserPreflight = (request: RequestShape & { get(field: string): string }): boolean =>
  request.method === 'OPTIONS' &&
  opensToBrowsers(request.path) &&
  request.get('Origin') !== '' &&
  request.get('Access-Control-Request-Method') !== '';

/**
 * Answers preflights before any key is asked for, spending no key's budget. The answer is the same
 * for every path and origin (the origin echoed): which keys, origins or records exist is the real
 * request's to say, once it carries a key. Preflights are limited per client address instead.
 */
export const browserPreflights =
  (limiter: RateLimiter): Middleware =>
  async (ctx, next) => {
    if (!isBrowserPreflight(ctx)) return next();
    // When Redis fails, the limiter counts in memory (RateLimiter): a decision always comes.
    const decision = await limiter.take(ctx.state.client);
    if (!decision.allowed) throw refused(`${decision.limit} preflights per ${limiter.windowS} seconds from one address`, decision);
    ctx.set({
      'Access-Control-Allow-Origin': ctx.get('Origin'),
      'Access-Control-Allow-Methods': 'GET, HEAD, POST',
      'Access-Control-Allow-Headers': ALLOWED_HEADERS,
      'Access-Control-Max-Age': '600',
    });
    ctx.vary('Origin');
    ctx.status = 204;
  };

/**
 * After the key is known: a key with origins answers its pages with CORS headers (set before the
 * rate limit, so a 429 is readable too) and refuses any other page's `Origin` with a 403. A request
 * without `Origin` is no page's, and is answered as any server's.
 */
export const keyOrigins = (): Middleware => async (ctx, next) => {
  const origins = ctx.state.keyOrigins ?? [];
  if (origins.length === 0 || !opensToBrowsers(ctx.path)) return next();
  ctx.vary('Origin');
  const origin = ctx.get('Origin');
  if (origin !== '') {
    if (!origins.includes(origin))
      throw new ApiError(403, 'forbidden', `this key may not be used from pages of ${origin}: its owner names the origins that may use it`);
    ctx.set({ 'Access-Control-Allow-Origin': origin, 'Access-Control-Expose-Headers': EXPOSED });
    ctx.state.fromKeyOrigin = true;
  }
  await next();
};

import { ApiError } from '../../errors.js';
import type { Logger } from '../../log.js';
import type { RateLimiter } from '../../stores/redis/rateLimiter.js';
import type { Middleware } from '../state.js';

/**
 * Spends one request of the key's budget and says so in RateLimit-* headers. If Redis cannot be
 * reached the request goes through (logged): an outage of the limiter should not become an outage
 * of the API.
 */
export const rateLimit = (limiter: RateLimiter, log: Logger): Middleware => async (ctx, next) => {
  let decision;
  try {
    decision = await limiter.take(ctx.state.kid!);
  } catch (error) {
    log.warn({ err: error, requestId: ctx.state.requestId }, 'rate limiter unavailable; request allowed');
    return next();
  }
  const resetS = Math.ceil(decision.resetMs / 1000);
  ctx.set({
    'RateLimit-Limit': String(decision.limit),
    'RateLimit-Remaining': String(decision.remaining),
    'RateLimit-Reset': String(resetS),
    'RateLimit-Policy': `${decision.limit};w=${limiter.windowS}`,
  });
  if (!decision.allowed) {
    throw new ApiError(429, 'rate_limited', `rate limit exceeded: ${decision.limit} requests per ${limiter.windowS} seconds; retry in ${resetS} s`, {
      'Retry-After': String(Math.max(1, resetS)),
    });
  }
  await next();
};

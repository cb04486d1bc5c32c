import { refused } from '../../errors.js';
import type { Logger } from '../../log.js';
import { batchRefused } from '../../services/batch.js';
import type { RateDecision, RateLimiter } from '../../stores/redis/rateLimiter.js';
import type { AppContext, Middleware } from '../state.js';

/**
 * Spends one request of the key's budget and says so in RateLimit-* headers. If Redis cannot be
 * reached the request goes through (logged): an outage of the limiter should not become an outage
 * of the API. A request for which `spendsItself` holds (a batch: its items draw on the budget, and
 * only its body says how many) is left to its route, which calls `spendItems`.
 */
export const rateLimit = (limiter: RateLimiter, log: Logger, spendsItself: (ctx: AppContext) => boolean = () => false): Middleware => async (ctx, next) => {
  if (spendsItself(ctx)) return next();
  let decision;
  try {
    decision = await limiter.take(ctx.state.kid!);
  } catch (error) {
    log.warn({ err: error, requestId: ctx.state.requestId }, 'rate limiter unavailable; request allowed');
    return next();
  }
  sayBudget(ctx, decision, limiter.windowS);
  if (!decision.allowed) throw refused(`${decision.limit} requests per ${limiter.windowS} seconds`, decision);
  await next();
};

/**
 * Spends `count` units of the key's budget for the items of one batch request, all or none: a
 * batch the remaining budget cannot cover is refused whole (429, with the wait until it fits), so
 * no batch is ever half done. Redis trouble lets it through, as for a single request.
 */
export async function spendItems(ctx: AppContext, limiter: RateLimiter, log: Logger, count: number): Promise<void> {
  let decision;
  try {
    decision = await limiter.takeWhole(ctx.state.kid!, count);
  } catch (error) {
    log.warn({ err: error, requestId: ctx.state.requestId }, 'rate limiter unavailable; request allowed');
    return;
  }
  sayBudget(ctx, decision, limiter.windowS);
  if (!decision.allowed) throw batchRefused(count, decision, limiter.windowS);
}

/** The decision in RateLimit-* headers. */
function sayBudget(ctx: AppContext, decision: RateDecision, windowS: number): void {
  ctx.set({
    'RateLimit-Limit': String(decision.limit),
    'RateLimit-Remaining': String(decision.remaining),
    'RateLimit-Reset': String(Math.ceil(decision.resetMs / 1000)),
    'RateLimit-Policy': `${decision.limit};w=${windowS}`,
  });
}

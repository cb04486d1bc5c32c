import { refused, type ApiError } from '../../errors.js';
import { batchRefused } from '../../services/batch.js';
import type { RateDecision, RateLimiter } from '../../stores/redis/rateLimiter.js';
import type { AppContext, Middleware } from '../route.js';

/**
 * Spends one request of the key's budget and says so in RateLimit-* headers. A request for which
 * `spendsItself` holds (a batch: its items draw on the budget, and only its body says how many) is
 * left to its route, which calls `spendItems` (or `spendRequest`).
 */
export const rateLimit =
  (limiter: RateLimiter, spendsItself: (ctx: AppContext) => boolean = () => false): Middleware =>
  async (ctx, next) => {
    if (!spendsItself(ctx)) await spendRequest(ctx, limiter);
    await next();
  };

/** Spends one request of the key's budget (requests of one turn share a round trip to Redis). */
export const spendRequest = (ctx: AppContext, limiter: RateLimiter): Promise<void> =>
  spend(
    ctx,
    limiter,
    () => limiter.take(ctx.state.kid!),
    (decision) => refused(`${decision.limit} requests per ${limiter.windowS} seconds`, decision),
  );

/**
 * Spends `count` units of the key's budget for the items of one batch request, all or none: a
 * batch the remaining budget cannot cover is refused whole (429, with the wait until it fits), so
 * no batch is ever half done.
 */
export const spendItems = (ctx: AppContext, limiter: RateLimiter, count: number): Promise<void> =>
  spend(
    ctx,
    limiter,
    () => limiter.takeWhole(ctx.state.kid!, count),
    (decision) => batchRefused(count, decision, limiter.windowS),
  );

/** Takes a decision and says it in RateLimit-* headers, or refuses (RateLimiter counts in memory when Redis cannot). */
async function spend(
  ctx: AppContext,
  limiter: RateLimiter,
  take: () => Promise<RateDecision>,
  refusal: (decision: RateDecision) => ApiError,
): Promise<void> {
  const decision = await take();
  sayBudget(ctx, decision, limiter.windowS);
  if (!decision.allowed) throw refusal(decision);
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

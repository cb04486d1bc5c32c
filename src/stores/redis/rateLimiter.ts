import { randomBytes } from 'node:crypto';
import { luaScript, runScript, type Redis } from './client.js';
import { perTurn, type Group } from '../perTurn.js';

export interface RateDecision {
  allowed: boolean;
  limit: number;
  remaining: number;
  /** Milliseconds until the oldest counted request leaves the window (one more slot opens). */
  resetMs: number;
}

// A sliding-window log: one sorted-set member per request, scored by Redis' own clock so that
// every API instance shares one budget and one notion of time. Check and add happen in one script,
// so concurrent requests can never both take the last slot. ARGV[4] requests arrive together: as
// many as the window still holds are admitted, in order.
const SLIDING_WINDOW = luaScript(`
local key, limit, window, member, wanted = KEYS[1], tonumber(ARGV[1]), tonumber(ARGV[2]), ARGV[3], tonumber(ARGV[4])
local time = redis.call('TIME')
local now = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
redis.call('ZREMRANGEBYSCORE', key, '-inf', now - window)
local before = redis.call('ZCARD', key)
local admitted = math.max(0, math.min(wanted, limit - before))
for i = 1, admitted do
  redis.call('ZADD', key, now, member .. ':' .. i)
end
if admitted > 0 then redis.call('PEXPIRE', key, window) end
local oldest = redis.call('ZRANGE', key, 0, 0, 'WITHSCORES')
local reset = window
if oldest[2] then reset = tonumber(oldest[2]) + window - now end
return {before, admitted, reset}
`);

/**
 * The per-key request budget. Requests of one key that arrive in the same turn of the event loop
 * share one round trip to Redis: a client that sends many requests at once costs one script call
 * per turn, not one per request, and each request still gets its own exact decision.
 */
export class RateLimiter {
  private sequence = 0;
  private readonly instance = randomBytes(6).toString('hex');
  readonly take: (kid: string) => Promise<RateDecision>;

  constructor(
    private readonly redis: Redis,
    private readonly prefix: string,
    readonly limit: number,
    readonly windowS: number,
  ) {
    this.take = perTurn((groups: Group<string>[]) => Promise.all(groups.map((group) => this.decide(group.key, group.count))));
  }

  /** Decisions for `count` requests of one key, in arrival order. */
  private async decide(kid: string, count: number): Promise<RateDecision[]> {
    const [before, admitted, resetMs] = (await runScript(this.redis, SLIDING_WINDOW, [`${this.prefix}rate:${kid}`], [
      String(this.limit),
      String(this.windowS * 1000),
      `${this.instance}:${++this.sequence}`,
      String(count),
    ])) as [number, number, number];
    return Array.from({ length: count }, (_, index) => {
      const allowed = index < admitted;
      return {
        allowed,
        limit: this.limit,
        remaining: Math.max(0, this.limit - before - (allowed ? index + 1 : admitted)),
        resetMs: Math.max(0, resetMs),
      };
    });
  }
}

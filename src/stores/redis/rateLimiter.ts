import { randomBytes } from 'node:crypto';
import { luaScript, runScript, type Redis } from './client.js';

export interface RateDecision {
  allowed: boolean;
  limit: number;
  remaining: number;
  /** Milliseconds until the oldest counted request leaves the window (one more slot opens). */
  resetMs: number;
}

// A sliding-window log: one sorted-set member per request, scored by Redis' own clock so that
// every API instance shares one budget and one notion of time. Check and add happen in one script,
// so concurrent requests can never both take the last slot.
const SLIDING_WINDOW = luaScript(`
local key, limit, window, member = KEYS[1], tonumber(ARGV[1]), tonumber(ARGV[2]), ARGV[3]
local time = redis.call('TIME')
local now = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
redis.call('ZREMRANGEBYSCORE', key, '-inf', now - window)
local count = redis.call('ZCARD', key)
local allowed = 0
if count < limit then
  redis.call('ZADD', key, now, member)
  redis.call('PEXPIRE', key, window)
  count = count + 1
  allowed = 1
end
local oldest = redis.call('ZRANGE', key, 0, 0, 'WITHSCORES')
local reset = window
if oldest[2] then reset = tonumber(oldest[2]) + window - now end
return {allowed, limit - count, reset}
`);

export class RateLimiter {
  private sequence = 0;
  private readonly instance = randomBytes(6).toString('hex');

  constructor(
    private readonly redis: Redis,
    private readonly prefix: string,
    readonly limit: number,
    readonly windowS: number,
  ) {}

  async take(kid: string): Promise<RateDecision> {
    const member = `${this.instance}:${++this.sequence}`;
    const reply = (await runScript(this.redis, SLIDING_WINDOW, [`${this.prefix}rate:${kid}`], [
      String(this.limit),
      String(this.windowS * 1000),
      member,
    ])) as [number, number, number];
    const [allowed, remaining, resetMs] = reply;
    return { allowed: allowed === 1, limit: this.limit, remaining: Math.max(0, remaining), resetMs: Math.max(0, resetMs) };
  }
}

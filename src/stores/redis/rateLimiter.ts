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

// A sliding-window log: one sorted-set member per admitted batch, `<instance>:<sequence>:<size>`,
// scored by Redis' own clock so that every API instance shares one budget and one notion of time,
// and a counter of the requests the log holds. A batch's requests are admitted at one moment, so
// one member for all of them is exact, and Redis' work per call does not grow with the batch or
// with the key's limit. Check and add happen in one script, so concurrent requests can never both
// take the last slot. ARGV[4] requests arrive together: as many as the window still holds are
// admitted, in order; or, when ARGV[5] is 'whole' (the items of one batch request), all or none,
// and a refused batch is told when enough of the log will have left the window for all of it.
const SLIDING_WINDOW = luaScript(`
local log, counted = KEYS[1], KEYS[2]
local limit, window, batch, wanted = tonumber(ARGV[1]), tonumber(ARGV[2]), ARGV[3], tonumber(ARGV[4])
local time = redis.call('TIME')
local now = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
local expired = redis.call('ZRANGE', log, '-inf', now - window, 'BYSCORE')
local before = tonumber(redis.call('GET', counted) or '0')
if #expired > 0 then
  for i = 1, #expired do before = before - tonumber(string.match(expired[i], '(%d+)$')) end
  redis.call('ZREMRANGEBYSCORE', log, '-inf', now - window)
end
before = math.max(0, before)
local admitted = math.max(0, math.min(wanted, limit - before))
local whole = ARGV[5] == 'whole'
if whole and admitted < wanted then admitted = 0 end
-- The log and its counter always expire together: set together on admission, else kept as they are.
if admitted > 0 then
  redis.call('ZADD', log, now, batch .. ':' .. admitted)
  redis.call('PEXPIRE', log, window)
  redis.call('SET', counted, before + admitted, 'PX', window)
elseif #expired > 0 then
  redis.call('SET', counted, before, 'KEEPTTL')
end
local reset = window
if whole and admitted == 0 then
  -- Oldest first: the moment the entries that leave free room for the whole batch are gone.
  local short = wanted - (limit - before)
  local entries = redis.call('ZRANGE', log, 0, -1, 'WITHSCORES')
  for i = 1, #entries, 2 do
    short = short - tonumber(string.match(entries[i], '(%d+)$'))
    if short <= 0 then reset = tonumber(entries[i + 1]) + window - now break end
  end
else
  local oldest = redis.call('ZRANGE', log, 0, 0, 'WITHSCORES')
  if oldest[2] then reset = tonumber(oldest[2]) + window - now end
end
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

  /**
   * One decision for the `count` items of one batch request: all are admitted or none is. A batch
   * larger than what the window holds waits for enough room (its resetMs), never for one slot; a
   * batch larger than the limit itself is never admitted.
   */
  async takeWhole(kid: string, count: number): Promise<RateDecision> {
    const [before, admitted, resetMs] = await this.run(kid, count, 'whole');
    return { allowed: admitted === count, limit: this.limit, remaining: Math.max(0, this.limit - before - admitted), resetMs: Math.max(0, resetMs) };
  }

  private async run(kid: string, count: number, mode: 'each' | 'whole'): Promise<[number, number, number]> {
    // Both keys carry the kid as a hash tag, so a Redis Cluster keeps them on one node for the script.
    return (await runScript(this.redis, SLIDING_WINDOW, [`${this.prefix}rate:{${kid}}:log`, `${this.prefix}rate:{${kid}}:count`], [
      String(this.limit),
      String(this.windowS * 1000),
      `${this.instance}:${++this.sequence}`,
      String(count),
      mode,
    ])) as [number, number, number];
  }

  /** Decisions for `count` requests of one key, in arrival order. */
  private async decide(kid: string, count: number): Promise<RateDecision[]> {
    const [before, admitted, resetMs] = await this.run(kid, count, 'each');
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

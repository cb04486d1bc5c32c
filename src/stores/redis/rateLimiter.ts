import { randomBytes } from 'node:crypto';
import { isUnavailable } from '../../errors.js';
import type { Logger } from '../../log.js';
import { UNGUARDED, type Guard } from '../guard.js';
import { perTurn, type Group } from '../../perTurn.js';
import { luaScript, runScript, type Redis } from './client.js';

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

type Mode = 'each' | 'whole';
/** What the window held before, how many of the requests it admitted, and the ms until the wait is over. */
type Admission = [before: number, admitted: number, resetMs: number];

/**
 * The per-key request budget. Requests of one key that arrive in the same turn of the event loop
 * share one round trip to Redis: a client that sends many requests at once costs one script call
 * per turn, not one per request, and each request still gets its own exact decision.
 *
 * While Redis is away or fails the script (the guard's bounded wait, an error), each instance counts on its own
 * with the same sliding window in memory: a key gets its budget from every instance, not an
 * unlimited one. Counting returns to Redis when Redis does, which has not seen the calls counted
 * meanwhile.
 */
export class RateLimiter {
  private sequence = 0;
  private refusedCount = 0;
  private readonly instance = randomBytes(6).toString('hex');
  private readonly local: LocalWindows;
  readonly take: (kid: string) => Promise<RateDecision>;

  constructor(
    private readonly redis: Redis,
    private readonly prefix: string,
    readonly limit: number,
    readonly windowS: number,
    private readonly log: Logger,
    private readonly guard: Guard = UNGUARDED,
  ) {
    this.local = new LocalWindows(limit, windowS * 1000);
    this.take = perTurn((groups: Group<string>[]) => Promise.all(groups.map((group) => this.decide(group.key, group.count))));
  }

  /** Requests this instance refused, since the process started (a refused batch is one). */
  get refused(): number {
    return this.refusedCount;
  }

  /**
   * One decision for the `count` items of one batch request: all are admitted or none is. A batch
   * larger than what the window holds waits for enough room (its resetMs), never for one slot; a
   * batch larger than the limit itself is never admitted.
   */
  async takeWhole(kid: string, count: number): Promise<RateDecision> {
    const [before, admitted, resetMs] = await this.run(kid, count, 'whole');
    if (admitted !== count) this.refusedCount += 1;
    return {
      allowed: admitted === count,
      limit: this.limit,
      remaining: Math.max(0, this.limit - before - admitted),
      resetMs: Math.max(0, resetMs),
    };
  }

  private async run(kid: string, count: number, mode: Mode): Promise<Admission> {
    // Both keys carry the kid as a hash tag, so a Redis Cluster keeps them on one node for the script.
    const keys = [`${this.prefix}rate:{${kid}}:log`, `${this.prefix}rate:{${kid}}:count`];
    const args = [String(this.limit), String(this.windowS * 1000), `${this.instance}:${++this.sequence}`, String(count), mode];
    try {
      return (await this.guard.run(() => runScript(this.redis, SLIDING_WINDOW, keys, args))) as Admission;
    } catch (error) {
      // Any error, not only an outage: a Redis that refuses writes (out of memory, read-only) must not
      // make every request free. An outage is the guard's to log; anything else is worth a line.
      if (!isUnavailable(error)) this.log.warn({ err: error, kid }, 'rate limiter failed; counting in memory');
      return this.local.admit(kid, count, mode);
    }
  }

  /** Decisions for `count` requests of one key, in arrival order. */
  private async decide(kid: string, count: number): Promise<RateDecision[]> {
    const [before, admitted, resetMs] = await this.run(kid, count, 'each');
    this.refusedCount += count - admitted;
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

/**
 * The Lua script's sliding-window log, kept in this process for the time Redis is away: per key,
 * the admitted batches (time and size) of the last window, and their total.
 */
class LocalWindows {
  private readonly logs = new Map<string, { entries: { at: number; size: number }[]; total: number }>();

  constructor(
    private readonly limit: number,
    private readonly windowMs: number,
  ) {}

  admit(kid: string, wanted: number, mode: Mode): Admission {
    const now = Date.now();
    if (this.logs.size > 10_000) this.forgetIdle(now);
    let log = this.logs.get(kid);
    if (!log) this.logs.set(kid, (log = { entries: [], total: 0 }));
    while (log.entries.length > 0 && log.entries[0]!.at <= now - this.windowMs) log.total -= log.entries.shift()!.size;
    const before = log.total;
    let admitted = Math.max(0, Math.min(wanted, this.limit - before));
    if (mode === 'whole' && admitted < wanted) admitted = 0;
    if (admitted > 0) {
      log.entries.push({ at: now, size: admitted });
      log.total += admitted;
    }
    let reset = this.windowMs;
    if (mode === 'whole' && admitted === 0) {
      // Oldest first: the moment the entries that leave room for the whole batch are gone.
      let short = wanted - (this.limit - before);
      for (const entry of log.entries) {
        short -= entry.size;
        if (short <= 0) {
          reset = entry.at + this.windowMs - now;
          break;
        }
      }
    } else if (log.entries.length > 0) {
      reset = log.entries[0]!.at + this.windowMs - now;
    }
    return [before, admitted, reset];
  }

  /** Drops the keys with nothing left in their window, so a long outage does not keep every key ever seen. */
  private forgetIdle(now: number): void {
    for (const [kid, log] of this.logs) if (log.entries.every((entry) => entry.at <= now - this.windowMs)) this.logs.delete(kid);
  }
}

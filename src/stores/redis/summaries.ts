import { randomUUID } from 'node:crypto';
import { luaScript, runScript, type Redis } from './client.js';
import { UNGUARDED, type Guard } from '../guard.js';

/**
 * Kept summaries: answers costly to compute whose freshness matters little (a subject's page,
 * trending), each stored as `<computed at>\n<body>`, the moment on Redis' clock in milliseconds, so
 * every instance measures a summary's age on the same clock. Beside each, a short lock names the
 * one caller that recomputes it once it is old.
 */

// Claims the refresh of a summary: only if no one holds it and the summary is still the one the
// caller found old, so a caller that read it just before another's refresh landed does not compute
// it again. KEYS: the lock, the summary. ARGV: token, hold in seconds, the computed-at the caller saw.
const CLAIM = luaScript(`
local seen = ARGV[3] .. '\\n'
local entry = redis.call('GET', KEYS[2])
if entry and string.sub(entry, 1, #seen) ~= seen then return 0 end
if redis.call('SET', KEYS[1], ARGV[1], 'NX', 'EX', tonumber(ARGV[2])) then return 1 end
return 0
`);

// Lets go of a lock only if it is still the caller's: one held past its expiry may be another's now.
const RELEASE = luaScript(`
if redis.call('GET', KEYS[1]) == ARGV[1] then redis.call('DEL', KEYS[1]) end
return 0
`);

export interface KeptSummary {
  body: string;
  /** When it was computed, on Redis' clock (ms). */
  computedAt: number;
}

/** What Redis keeps of a summary, if anything, and its clock now (ms): the age of what it keeps, the stamp of what is computed next. */
export interface SummaryLookup {
  kept: KeptSummary | null;
  now: number;
}

export class SummaryStore {
  /** `guard` bounds the wait of every call. */
  constructor(
    private readonly redis: Redis,
    private readonly prefix: string,
    private readonly guard: Guard = UNGUARDED,
  ) {}

  private key(name: string): string {
    return `${this.prefix}summary:${name}`;
  }

  private lockKey(name: string): string {
    return `${this.prefix}summary-refresh:${name}`;
  }

  async lookup(name: string): Promise<SummaryLookup> {
    const [entry, [seconds, microseconds]] = await this.guard.run(() => Promise.all([this.redis.get(this.key(name)), this.redis.time()]));
    const now = Number(seconds) * 1_000 + Math.floor(Number(microseconds) / 1_000);
    const cut = entry?.indexOf('\n') ?? -1;
    if (!entry || cut < 0) return { kept: null, now };
    return { kept: { body: entry.slice(cut + 1), computedAt: Number(entry.slice(0, cut)) }, now };
  }

  /** Keeps `body`, computed from what the stores held at `computedAt`, for `keepS` seconds, in place of what was kept. */
  async keep(name: string, body: string, computedAt: number, keepS: number): Promise<void> {
    await this.guard.run(() => this.redis.set(this.key(name), `${computedAt}\n${body}`, { expiration: { type: 'EX', value: keepS } }));
  }

  /**
   * Claims the refresh of the summary kept with `computedAt`, for `holdS` seconds at most: a token
   * to release it with, or null when another caller has it or has already refreshed the summary.
   */
  async claimRefresh(name: string, computedAt: number, holdS: number): Promise<string | null> {
    const token = randomUUID();
    const claimed = await this.guard.run(() =>
      runScript(this.redis, CLAIM, [this.lockKey(name), this.key(name)], [token, String(holdS), String(computedAt)]),
    );
    return claimed === 1 ? token : null;
  }

  async releaseRefresh(name: string, token: string): Promise<void> {
    await this.guard.run(() => runScript(this.redis, RELEASE, [this.lockKey(name)], [token]));
  }
}

import { luaScript, runScript, type Redis } from './client.js';
import { perTurn, type Group } from './perTurn.js';

/**
 * Cached response bodies. A point-lookup answer is remembered under the ids of the entities it
 * shows, so a change to any of them drops every cached answer that showed it (a book's page, its
 * ISBN pages in any spelling, its work's page).
 *
 * One race needs care: a request reads the old row, the change commits and invalidates, then the
 * request stores the old row for 24 hours. So a miss returns Redis' clock, every invalidation stamps
 * its entities with Redis' clock, and an answer is stored only if none of its entities was
 * invalidated after its read began.
 */

// An invalidation stamp only has to outlive any request that read before it.
const STAMP_TTL_S = 300;

const NOW_US = `local t = redis.call('TIME') local now = tonumber(t[1]) * 1000000 + tonumber(t[2])`;

// KEYS: the cache key, then pairs (entity's dependency set, entity's invalidation stamp).
const STORE = luaScript(`
local body, ttl, read_at = ARGV[1], tonumber(ARGV[2]), tonumber(ARGV[3])
for i = 3, #KEYS, 2 do
  local stamp = redis.call('GET', KEYS[i])
  if stamp and tonumber(stamp) >= read_at then return 0 end
end
redis.call('SET', KEYS[1], body, 'EX', ttl)
for i = 2, #KEYS, 2 do
  redis.call('SADD', KEYS[i], KEYS[1])
  redis.call('EXPIRE', KEYS[i], ttl)
end
return 1
`);

// KEYS: pairs (entity's dependency set, entity's invalidation stamp).
const INVALIDATE = luaScript(`
${NOW_US}
for i = 1, #KEYS, 2 do
  local members = redis.call('SMEMBERS', KEYS[i])
  for j = 1, #members, 500 do
    redis.call('DEL', unpack(members, j, math.min(j + 499, #members)))
  end
  redis.call('DEL', KEYS[i])
  redis.call('SET', KEYS[i + 1], now, 'EX', ${STAMP_TTL_S})
end
return #KEYS / 2
`);

export type CacheLookup = { hit: string } | { missAt: number };

export class ResponseCache {
  /** Point-cache reads; those of one turn travel as one MGET, with Redis' clock for the misses. */
  private readonly read: (key: string) => Promise<CacheLookup>;

  constructor(
    private readonly redis: Redis,
    private readonly prefix: string,
  ) {
    this.read = perTurn(async (groups: Group<string>[]) => {
      const [bodies, [seconds, microseconds]] = await Promise.all([this.redis.mGet(groups.map((group) => group.key)), this.redis.time()]);
      const missAt = Number(seconds) * 1_000_000 + Number(microseconds);
      return groups.map((group, index) => {
        const body = bodies[index];
        return new Array<CacheLookup>(group.count).fill(typeof body === 'string' ? { hit: body } : { missAt });
      });
    });
  }

  private key(name: string): string {
    return `${this.prefix}cache:${name}`;
  }

  private entityKeys(entityId: string): [string, string] {
    return [`${this.prefix}shows:${entityId}`, `${this.prefix}changed:${entityId}`];
  }

  /**
   * The cached body, or the moment (Redis clock) of the miss, to hand back to `store`. The clock is
   * read with the cache, before the caller reads PostgreSQL, which is all the race check needs.
   */
  lookup(name: string): Promise<CacheLookup> {
    return this.read(this.key(name));
  }

  /** Stores an answer read after `missAt` that shows `shows`, unless one of them changed since. */
  async store(name: string, body: string, ttlS: number, shows: readonly string[], missAt: number): Promise<boolean> {
    const keys = [this.key(name), ...[...new Set(shows)].flatMap((id) => this.entityKeys(id))];
    return (await runScript(this.redis, STORE, keys, [body, String(ttlS), String(missAt)])) === 1;
  }

  /** Drops every cached answer that shows any of these entities. */
  async invalidate(entityIds: Iterable<string>): Promise<void> {
    const keys = [...new Set(entityIds)].flatMap((id) => this.entityKeys(id));
    for (let start = 0; start < keys.length; start += 2_000) {
      await runScript(this.redis, INVALIDATE, keys.slice(start, start + 2_000), []);
    }
  }

  /** Short-lived answers (search, match, changes) that no invalidation tracks: they simply expire. */
  get(name: string): Promise<string | null> {
    return this.redis.get(this.key(name));
  }

  async set(name: string, body: string, ttlS: number): Promise<void> {
    await this.redis.set(this.key(name), body, { expiration: { type: 'EX', value: ttlS } });
  }
}

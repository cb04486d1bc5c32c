import { luaScript, runScript, type Redis } from './client.js';

/**
 * Cached response bodies, each remembered under the ids of the entities it shows, so that a change
 * to any of them drops every cached response that showed it (a book page, its ISBN pages in any
 * spelling, its work's page).
 */

// How long after an invalidation the entity's responses are not cached again. It closes the race in
// which a request read the old row just before the change and would store it just after.
const SETTLE_S = 10;

const STORE = luaScript(`
local key, body, ttl, settling = KEYS[1], ARGV[1], tonumber(ARGV[2]), ARGV[3]
for i = 2, #KEYS do
  if redis.call('EXISTS', settling .. KEYS[i]) == 1 then return 0 end
end
redis.call('SET', key, body, 'EX', ttl)
for i = 2, #KEYS do
  redis.call('SADD', KEYS[i], key)
  redis.call('EXPIRE', KEYS[i], ttl)
end
return 1
`);

const INVALIDATE = luaScript(`
local settling, settle = ARGV[1], tonumber(ARGV[2])
for i = 1, #KEYS do
  local members = redis.call('SMEMBERS', KEYS[i])
  for j = 1, #members, 500 do
    redis.call('DEL', unpack(members, j, math.min(j + 499, #members)))
  end
  redis.call('DEL', KEYS[i])
  redis.call('SET', settling .. KEYS[i], '1', 'EX', settle)
end
return #KEYS
`);

export class ResponseCache {
  constructor(
    private readonly redis: Redis,
    private readonly prefix: string,
  ) {}

  private key(name: string): string {
    return `${this.prefix}cache:${name}`;
  }

  private dependencyKey(entityId: string): string {
    return `${this.prefix}shows:${entityId}`;
  }

  get(name: string): Promise<string | null> {
    return this.redis.get(this.key(name));
  }

  /** Stores a body for `ttlS` seconds; with `shows`, it is dropped when any of those entities changes. */
  async set(name: string, body: string, ttlS: number, shows: readonly string[] = []): Promise<void> {
    if (shows.length === 0) {
      await this.redis.set(this.key(name), body, { expiration: { type: 'EX', value: ttlS } });
      return;
    }
    await runScript(
      this.redis,
      STORE,
      [this.key(name), ...shows.map((id) => this.dependencyKey(id))],
      [body, String(ttlS), `${this.prefix}settling:`],
    );
  }

  /** Drops every cached response that shows any of these entities. */
  async invalidate(entityIds: Iterable<string>): Promise<void> {
    const keys = [...new Set(entityIds)].map((id) => this.dependencyKey(id));
    for (let start = 0; start < keys.length; start += 1_000) {
      await runScript(this.redis, INVALIDATE, keys.slice(start, start + 1_000), [`${this.prefix}settling:`, String(SETTLE_S)]);
    }
  }
}

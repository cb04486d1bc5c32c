import { luaScript, runScript, type Redis } from './client.js';
import { UNGUARDED, type Guard } from '../guard.js';
import { perTurn, type Group } from '../../perTurn.js';

/**
 * Cached response bodies. A point-lookup answer is remembered under the ids of the entities it
 * shows, so a change to any of them drops every cached answer that showed it (a book's page, its
 * ISBN's page, its work's page).
 *
 * One race needs care: a request reads the old row, the change commits and invalidates, then the
 * request stores the old row for 24 hours. So a miss returns Redis' clock, every invalidation stamps
 * its entities with Redis' clock, and an answer is stored only if none of its entities was
 * invalidated after its read began.
 *
 * Short-lived answers (search, match, recommendations, suggestions) show many entities, found by the
 * index: no set tracks them. Each is stored with the catalogue's generation, a counter every writer
 * bumps once what those answers read has changed (a committed write, as `invalidate` does; sync's
 * pages once searchable; a reindex's alias swap), and served only while the generation is the same.
 * A request reads the generation with the answer, before it asks the stores, so an answer computed
 * from the old state is stored under the old generation and never served after the bump.
 */

// An invalidation stamp only has to outlive any request that read before it.
const STAMP_TTL_S = 300;

const NOW_US = `local t = redis.call('TIME') local now = tonumber(t[1]) * 1000000 + tonumber(t[2])`;

// Stores the answers of one turn. For each answer, ARGV holds body, ttl, read_at and its number of
// entities n; KEYS holds the cache key, then n pairs (entity's dependency set, invalidation stamp).
// Answers one 1 (stored) or 0 (an entity changed after the read) per answer.
const STORE = luaScript(`
local stored, k = {}, 1
for a = 1, #ARGV, 4 do
  local body, ttl, read_at, n = ARGV[a], tonumber(ARGV[a + 1]), tonumber(ARGV[a + 2]), tonumber(ARGV[a + 3])
  local fresh = 1
  for i = k + 2, k + 2 * n, 2 do
    local stamp = redis.call('GET', KEYS[i])
    if stamp and tonumber(stamp) >= read_at then fresh = 0 break end
  end
  if fresh == 1 then
    redis.call('SET', KEYS[k], body, 'EX', ttl)
    for i = k + 1, k + 2 * n, 2 do
      redis.call('SADD', KEYS[i], KEYS[k])
      redis.call('EXPIRE', KEYS[i], ttl)
    end
  end
  stored[#stored + 1] = fresh
  k = k + 1 + 2 * n
end
return stored
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

/** A short-lived answer, or the catalogue's generation to store the answer computed now under. */
export type ShortLookup = { hit: string } | { generation: string };

interface Answer {
  key: string;
  body: string;
  ttlS: number;
  entityIds: string[];
  missAt: number;
}

export class ResponseCache {
  /** Point-cache reads; those of one turn travel as one MGET, with Redis' clock for the misses. */
  private readonly read: (key: string) => Promise<CacheLookup>;
  /** Point-cache writes; those of one turn travel as one script call. */
  private readonly write: (answer: Answer) => Promise<boolean>;

  /** `guard` bounds the wait of every call but `invalidate` (the loader's, which waits as long as it takes). */
  constructor(
    private readonly redis: Redis,
    private readonly prefix: string,
    private readonly guard: Guard = UNGUARDED,
  ) {
    this.read = perTurn(async (groups: Group<string>[]) => {
      const [bodies, [seconds, microseconds]] = await guard.run(() =>
        Promise.all([this.redis.mGet(groups.map((group) => group.key)), this.redis.time()]),
      );
      const missAt = Number(seconds) * 1_000_000 + Number(microseconds);
      return groups.map((group, index) => {
        const body = bodies[index];
        return new Array<CacheLookup>(group.count).fill(typeof body === 'string' ? { hit: body } : { missAt });
      });
    });
    this.write = perTurn(async (groups: Group<Answer>[]) => {
      const keys: string[] = [];
      const args: string[] = [];
      for (const { key: answer } of groups) {
        keys.push(answer.key, ...answer.entityIds.flatMap((id) => this.entityKeys(id)));
        args.push(answer.body, String(answer.ttlS), String(answer.missAt), String(answer.entityIds.length));
      }
      const stored = (await guard.run(() => runScript(this.redis, STORE, keys, args))) as number[];
      return groups.map((group, index) => new Array<boolean>(group.count).fill(stored[index] === 1));
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
  store(name: string, body: string, ttlS: number, shows: readonly string[], missAt: number): Promise<boolean> {
    return this.write({ key: this.key(name), body, ttlS, entityIds: [...new Set(shows)], missAt });
  }

  /**
   * Drops every cached answer that shows any of these entities, and the short-lived answers of the
   * catalogue as it was. None given (a batch that changed nothing): nothing changed, nothing is dropped.
   */
  async invalidate(entityIds: Iterable<string>): Promise<void> {
    const keys = [...new Set(entityIds)].flatMap((id) => this.entityKeys(id));
    if (keys.length === 0) return;
    for (let start = 0; start < keys.length; start += 2_000) {
      await runScript(this.redis, INVALIDATE, keys.slice(start, start + 2_000), []);
    }
    await this.catalogueChanged();
  }

  /** What search, match, recommendations or suggestions answer may have changed: their short-lived answers are no longer served. */
  async catalogueChanged(): Promise<void> {
    await this.redis.incr(this.generationKey);
  }

  private get generationKey(): string {
    return `${this.prefix}catalogue-generation`;
  }

  /** A short-lived answer stored in the catalogue's current generation, or that generation. */
  async shortLookup(name: string): Promise<ShortLookup> {
    const [entry, current] = await this.guard.run(() => this.redis.mGet([this.key(name), this.generationKey]));
    const generation = current ?? '0';
    const cut = entry?.indexOf('\n') ?? -1;
    if (entry && entry.slice(0, cut) === generation) return { hit: entry.slice(cut + 1) };
    return { generation };
  }

  /** Stores a short-lived answer computed in `generation`; it simply expires. */
  async shortStore(name: string, body: string, ttlS: number, generation: string): Promise<void> {
    await this.guard.run(() => this.redis.set(this.key(name), `${generation}\n${body}`, { expiration: { type: 'EX', value: ttlS } }));
  }
}

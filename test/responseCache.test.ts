import { randomBytes } from 'node:crypto';
import test from 'ava';
import { loadConfig } from '../src/config.js';
import { connectRedis, deleteKeysUnder, type Redis } from '../src/stores/redis/client.js';
import { ResponseCache } from '../src/stores/redis/responseCache.js';

const prefix = `test:cache${randomBytes(4).toString('hex')}:`;
let redis: Redis;
let cache: ResponseCache;

test.before(async () => {
  redis = await connectRedis(loadConfig().redisUrl);
  cache = new ResponseCache(redis, prefix);
});

test.after.always(async () => {
  await deleteKeysUnder(redis, prefix);
  await redis.quit();
});

const missAt = async (name: string): Promise<number> => {
  const lookup = await cache.lookup(name);
  if (!('missAt' in lookup)) throw new Error(`${name} is cached already`);
  return lookup.missAt;
};

test('answers stored in one turn are each kept, and each is dropped with any entity it shows', async (t) => {
  const [a, b] = await Promise.all([missAt('/v1/books/bk_a'), missAt('/v1/books/bk_b')]);
  t.deepEqual(
    await Promise.all([cache.store('/v1/books/bk_a', 'A', 60, ['bk_a', 'au_x'], a), cache.store('/v1/books/bk_b', 'B', 60, ['bk_b'], b)]),
    [true, true],
  );
  t.deepEqual(await cache.lookup('/v1/books/bk_a'), { hit: 'A' });
  t.deepEqual(await cache.lookup('/v1/books/bk_b'), { hit: 'B' });
  await cache.invalidate(['au_x']);
  t.true('missAt' in (await cache.lookup('/v1/books/bk_a')));
  t.deepEqual(await cache.lookup('/v1/books/bk_b'), { hit: 'B' });
});

test('an answer read before one of its entities changed is not stored, while the rest of its turn is', async (t) => {
  const [stale, fresh] = await Promise.all([missAt('/v1/books/bk_c'), missAt('/v1/books/bk_d')]);
  // The change commits between the read of bk_c and the store of its (now old) answer.
  await cache.invalidate(['bk_c']);
  t.deepEqual(
    await Promise.all([
      cache.store('/v1/books/bk_c', 'old C', 60, ['bk_c'], stale),
      cache.store('/v1/books/bk_d', 'D', 60, ['bk_d'], fresh),
    ]),
    [false, true],
  );
  t.true('missAt' in (await cache.lookup('/v1/books/bk_c')));
  t.deepEqual(await cache.lookup('/v1/books/bk_d'), { hit: 'D' });
  // Read after the change, the answer is stored.
  t.true(await cache.store('/v1/books/bk_c', 'new C', 60, ['bk_c'], await missAt('/v1/books/bk_c')));
  t.deepEqual(await cache.lookup('/v1/books/bk_c'), { hit: 'new C' });
});

test('a short-lived answer is served until an entity changes, and kept when a writer changed none', async (t) => {
  // A catalogue of its own: the other tests' invalidations move the generation of theirs.
  const catalogue = new ResponseCache(redis, `${prefix}short:`);
  const miss = await catalogue.shortLookup('search:books:q');
  if (!('generation' in miss)) throw new Error('search:books:q is cached already');
  await catalogue.shortStore('search:books:q', 'S', 60, miss.generation);
  // An import batch of rows that were all unchanged.
  await catalogue.invalidate([]);
  t.deepEqual(await catalogue.shortLookup('search:books:q'), { hit: 'S' });
  await catalogue.invalidate(['bk_e']);
  t.true('generation' in (await catalogue.shortLookup('search:books:q')));
});

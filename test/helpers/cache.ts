import { parseIsbn } from '../../src/domain/isbn.js';
import type { TestWorld } from './env.js';
import { eventually } from './eventually.js';

/** The Redis key of a cached answer: point lookups under their canonical path, the short cache under its own names. */
export const cacheKey = (world: TestWorld, name: string): string => `${world.config.redisPrefix}cache:${canonicalPath(name)}`;

/** A point lookup's path as the cache keys it: an ISBN in any spelling as its ISBN-13. */
function canonicalPath(name: string): string {
  const spelled = /^\/v1\/isbn\/(.+)$/.exec(name)?.[1];
  const isbn = spelled === undefined ? null : parseIsbn(decodeURIComponent(spelled));
  return isbn ? `/v1/isbn/${isbn.isbn13}` : name;
}

/**
 * Waits until the cache holds the answer of `path`: a request does not wait for its cache write, so
 * a test that wants a HIT waits for the write itself. False if it never came.
 */
export function pointCached(world: TestWorld, path: string): Promise<boolean> {
  return eventually(async () => (await world.redis.exists(cacheKey(world, path))) === 1);
}

/** The Redis keys of the short cache's entries whose names match `pattern` (a glob over the names the services give them). */
export async function shortCacheKeys(world: TestWorld, pattern: string): Promise<string[]> {
  const keys: string[] = [];
  for await (const batch of world.redis.scanIterator({ MATCH: cacheKey(world, pattern), COUNT: 1000 })) keys.push(...batch);
  return keys;
}

/**
 * Waits until the short cache would serve an answer named like `pattern`: one stored in the
 * catalogue's current generation (a request does not wait for its cache write). False if none came.
 */
export function shortCached(world: TestWorld, pattern: string): Promise<boolean> {
  const names = cacheKey(world, '');
  return eventually(async () => {
    for (const key of await shortCacheKeys(world, pattern)) {
      if ('hit' in (await world.cache.shortLookup(key.slice(names.length)))) return true;
    }
    return false;
  });
}

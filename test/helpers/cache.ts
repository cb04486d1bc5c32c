import type { TestWorld } from './env.js';
import { eventually } from './eventually.js';

/** The Redis key of a cached answer: point lookups under their path, the short cache under its own names. */
export const cacheKey = (world: TestWorld, name: string): string => `${world.config.redisPrefix}cache:${name}`;

/**
 * Waits until the cache holds the answer of `path`: a request does not wait for its cache write, so
 * a test that wants a HIT waits for the write itself. False if it never came.
 */
export function pointCached(world: TestWorld, path: string): Promise<boolean> {
  return eventually(async () => (await world.redis.exists(cacheKey(world, path))) === 1);
}

import { isUnavailable } from '../errors.js';
import type { Logger } from '../log.js';
import type { ResponseCache } from '../stores/redis/responseCache.js';

/**
 * The short-lived cache of search, match, recommend, suggest and changes: an answer computed from the
 * primary stores is kept for a few seconds under a key made of its inputs, and served only until the
 * catalogue changes (see ResponseCache). Redis trouble only means computing again.
 */
export class ShortCache {
  constructor(
    private readonly cache: ResponseCache,
    private readonly ttlS: number,
    private readonly log: Logger,
  ) {}

  async through<T>(key: string, compute: () => Promise<{ value: T; cacheable: boolean }>): Promise<T> {
    const cached = await this.cache.shortLookup(key).catch((error: unknown) => {
      if (!isUnavailable(error)) this.log.warn({ err: error }, 'short cache read failed');
      return null;
    });
    if (cached && 'hit' in cached) return JSON.parse(cached.hit) as T;
    const { value, cacheable } = await compute();
    if (cached && cacheable && this.ttlS > 0) {
      this.cache.shortStore(key, JSON.stringify(value), this.ttlS, cached.generation).catch((error: unknown) => {
        if (!isUnavailable(error)) this.log.warn({ err: error }, 'short cache write failed');
      });
    }
    return value;
  }
}

import { isUnavailable } from '../errors.js';
import type { Logger } from '../log.js';
import type { ResponseCache } from '../stores/redis/responseCache.js';

/**
 * The short-lived cache of search, match, recommend and changes: an answer computed from the
 * primary stores is kept for a few seconds under a key made of its inputs. Redis trouble only
 * means computing again.
 */
export class ShortCache {
  constructor(
    private readonly cache: ResponseCache,
    private readonly ttlS: number,
    private readonly log: Logger,
  ) {}

  async through<T>(key: string, compute: () => Promise<{ value: T; cacheable: boolean }>): Promise<T> {
    const cached = await this.cache.get(key).catch((error: unknown) => {
      if (!isUnavailable(error)) this.log.warn({ err: error }, 'short cache read failed');
      return null;
    });
    if (cached !== null) return JSON.parse(cached) as T;
    const { value, cacheable } = await compute();
    if (cacheable && this.ttlS > 0) {
      this.cache.set(key, JSON.stringify(value), this.ttlS).catch((error: unknown) => {
        if (!isUnavailable(error)) this.log.warn({ err: error }, 'short cache write failed');
      });
    }
    return value;
  }
}

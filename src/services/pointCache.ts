import type { Logger } from '../log.js';
import type { CacheLookup, ResponseCache } from '../stores/redis/responseCache.js';

/**
 * The 24-hour cache of point lookups, keyed by the lookup's URL (`/v1/isbn/...`, `/v1/books/...`).
 * One per process (Services.pointCache): the HTTP routes (http/middleware/pointCache.ts) and the MCP
 * lookup tools both go through it, so both answer the same bytes from the same entries. Redis
 * trouble degrades to a miss.
 */
export class PointCache {
  constructor(
    private readonly cache: ResponseCache,
    private readonly ttlS: number,
    private readonly log: Logger,
  ) {}

  /** The cached body, or the moment of the miss to hand to `store`; null when Redis could not answer. */
  lookup(key: string, requestId: string): Promise<CacheLookup | null> {
    return this.cache.lookup(key).catch((error: unknown) => {
      this.log.warn({ err: error, requestId }, 'cache read failed');
      return null;
    });
  }

  /** Stores a found record's body under the entities it shows; never waited for, never fails the request. */
  store(key: string, body: string, shows: readonly string[], missAt: number, requestId: string): void {
    this.cache.store(key, body, this.ttlS, shows, missAt).catch((error: unknown) => {
      this.log.warn({ err: error, requestId }, 'cache write failed');
    });
  }
}

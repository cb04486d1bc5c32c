import { isUnavailable } from '../errors.js';
import type { Logger } from '../log.js';
import type { CacheLookup, ResponseCache } from '../stores/redis/responseCache.js';
import { isMerged, type Merged, type Resolved } from './lookups.js';

/** What a point lookup's GET answers: a record's JSON text (from the cache or just read), or where a merged id went (its 301). */
export type PointAnswer = { text: string; cached: boolean } | Merged;

/**
 * The 24-hour cache of point lookups, keyed by the lookup's canonical path (`/v1/isbn/<ISBN-13>`, `/v1/books/<id>`).
 * One per process (Services.pointCache): the GET routes, the bulk lookups and the MCP lookup tools
 * all answer through `answer`, so all of them read and fill the same entries with the same bytes.
 * Redis trouble degrades to a miss.
 */
export class PointCache {
  /** Answers given from the cache, and those read from the catalogue (Redis away counts as a miss), since the process started. */
  readonly counts = { hits: 0, misses: 0 };

  constructor(
    private readonly cache: ResponseCache,
    private readonly ttlS: number,
    private readonly log: Logger,
  ) {}

  /** The cached body, or the moment of the miss to hand to `store`; null when Redis could not answer. */
  private lookup(key: string, requestId: string): Promise<CacheLookup | null> {
    return this.cache.lookup(key).catch((error: unknown) => {
      // An outage is the guard's to log, once per interval; anything else is worth a line.
      if (!isUnavailable(error)) this.log.warn({ err: error, requestId }, 'cache read failed');
      return null;
    });
  }

  /**
   * What GET `key` answers: the cached bytes, or `read`'s answer, a found record being stored under
   * the entities it shows. `read`'s errors (400, 404) are thrown and, like merges, never cached.
   * `admission` (the request's rate-limit decision) settles before anything is answered or read
   * from the stores; the cache read travels to Redis beside it.
   */
  async answer(
    key: string,
    requestId: string,
    read: () => Promise<Resolved<unknown>>,
    admission: Promise<void> = Promise.resolve(),
  ): Promise<PointAnswer> {
    const [found] = await Promise.all([this.lookup(key, requestId), admission]);
    if (found && 'hit' in found) {
      this.counts.hits += 1;
      return { text: found.hit, cached: true };
    }
    this.counts.misses += 1;
    const resolved = await read();
    if (isMerged(resolved)) return resolved;
    const text = JSON.stringify(resolved.record);
    if (found) this.store(key, text, resolved.shows, found.missAt, requestId);
    return { text, cached: false };
  }

  /** Stores a found record's body under the entities it shows; never waited for, never fails the request. */
  private store(key: string, body: string, shows: readonly string[], missAt: number, requestId: string): void {
    this.cache.store(key, body, this.ttlS, shows, missAt).catch((error: unknown) => {
      if (!isUnavailable(error)) this.log.warn({ err: error, requestId }, 'cache write failed');
    });
  }
}

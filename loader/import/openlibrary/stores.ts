import type { Logger } from '../../../src/log.js';
import type { Pool } from '../../../src/stores/postgres/pool.js';
import type { ResponseCache } from '../../../src/stores/redis/responseCache.js';

export interface OlStores {
  db: Pool;
  cache: ResponseCache | null;
  log: Logger;
}

/** The writes are committed; cached answers that showed these entities are now stale. */
export async function forgetCached(stores: OlStores, touched: Set<string>): Promise<void> {
  await stores.cache?.invalidate(touched).catch((error: unknown) => {
    stores.log.warn({ err: error }, 'could not drop cached answers; they expire within 24 hours');
  });
}

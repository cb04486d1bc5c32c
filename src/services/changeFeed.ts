import { badRequest } from '../errors.js';
import { lastSeq, readChanges } from '../stores/postgres/changes.js';
import type { Queryable } from '../stores/postgres/pool.js';
import type { ShortCache } from './shortCache.js';

export const CHANGES_DEFAULT_LIMIT = 100;
export const CHANGES_MAX_LIMIT = 1_000;

export interface ChangeEntry {
  seq: number;
  entity: string;
  id: string;
  operation: string;
  survivor_id: string | null;
  changed_at: string;
}

export interface ChangePage {
  changes: ChangeEntry[];
  /** The cursor to pass as `since` next time. */
  next: string;
  /** True when more changes are waiting after `next`. */
  has_more: boolean;
}

/** The `limit` query parameter of a paged route: absent means the default. */
export function parseLimit(text: string | undefined, fallback: number, max: number): number {
  if (text === undefined) return fallback;
  const limit = Number(text);
  if (!/^\d+$/.test(text) || limit < 1 || limit > max) throw badRequest(`limit must be an integer from 1 to ${max}`);
  return limit;
}

/**
 * Changes after the cursor `since`, in sequence order. The cursor is the sequence number of the last
 * change seen ("0" before the first). Sequence order is commit order (see recordChanges), so a page
 * never skips a change that commits later. A full page can never change again and is cached; the
 * page at the head of the feed is always read fresh.
 */
export async function changesSince(db: Queryable, shortCache: ShortCache, since: string | undefined, limitText: string | undefined): Promise<ChangePage> {
  if (since === undefined || since === '') throw badRequest('since cursor is required');
  if (!/^\d{1,18}$/.test(since)) throw badRequest(`malformed since cursor "${since}": expected a cursor returned as "next", or 0`);
  const limit = parseLimit(limitText, CHANGES_DEFAULT_LIMIT, CHANGES_MAX_LIMIT);
  const cursor = Number(since);
  if (cursor > (await lastSeq(db))) throw badRequest(`unknown since cursor "${since}": it is ahead of the feed`);

  return shortCache.through(`changes:${cursor}:${limit}`, async () => {
    const rows = await readChanges(db, cursor, limit + 1);
    const page = rows.slice(0, limit);
    const value: ChangePage = {
      changes: page.map((change) => ({
        seq: change.seq,
        entity: change.entity,
        id: change.id,
        operation: change.operation,
        survivor_id: change.survivorId,
        changed_at: change.changedAt.toISOString(),
      })),
      next: String(page.at(-1)?.seq ?? cursor),
      has_more: rows.length > limit,
    };
    return { value, cacheable: value.has_more };
  });
}

import { z } from 'zod/v4';
import { ENTITY_KINDS } from '../domain/ids.js';
import { badRequest, parseInput } from '../errors.js';
import { lastSeq, readChanges } from '../stores/postgres/changes.js';
import type { Queryable } from '../stores/postgres/pool.js';
import { limitParam } from './queryParams.js';
import type { ShortCache } from './shortCache.js';

export const CHANGES_DEFAULT_LIMIT = 100;
export const CHANGES_MAX_LIMIT = 1_000;

export const changeEntry = z
  .object({
    seq: z.int(),
    entity: z.enum(ENTITY_KINDS),
    id: z.string(),
    operation: z.enum(['insert', 'update', 'delete', 'merge']),
    survivor_id: z.string().nullable().meta({ description: 'For merges: the entity that absorbed this one.' }),
    changed_at: z.string().meta({ format: 'date-time' }),
  })
  .meta({ id: 'Change' });

export const changePage = z
  .object({
    changes: z.array(changeEntry),
    next: z.string().meta({ description: 'Pass as `since` to continue.' }),
    has_more: z.boolean().meta({ description: 'More changes are waiting after `next`: call again at once.' }),
  })
  .meta({ id: 'ChangePage' });

export type ChangePage = z.output<typeof changePage>;

const SINCE_REQUIRED = 'since cursor is required';

/** The query of GET /v1/changes (and the arguments of list_changes). */
export const changesQuery = z.object({
  since: z
    .string({ error: SINCE_REQUIRED })
    .min(1, SINCE_REQUIRED)
    .regex(/^\d{1,18}$/, {
      error: (issue) => `malformed since cursor "${String(issue.input)}": expected a cursor returned as "next", or 0`,
    })
    .meta({ description: 'A `next` cursor from an earlier page, or `0` for the beginning.', example: '0' }),
  limit: limitParam(CHANGES_DEFAULT_LIMIT, CHANGES_MAX_LIMIT).meta({ description: 'Changes per page.' }),
});

/**
 * Changes after the cursor `since`, in sequence order. The cursor is the sequence number of the last
 * change seen ("0" before the first). Sequence order is commit order (see recordChanges), so a page
 * never skips a change that commits later. A full page can never change again and is cached; the
 * page at the head of the feed is always read fresh.
 */
export async function changesSince(
  db: Queryable,
  shortCache: ShortCache,
  since: string | undefined,
  limitText: string | undefined,
): Promise<ChangePage> {
  const { limit } = parseInput(changesQuery, { since, limit: limitText });
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

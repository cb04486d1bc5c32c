import { kindOfId, type EntityKind } from '../domain/ids.js';
import { mergeEntities, type MergeOutcome } from '../stores/postgres/merges.js';
import type { Pool } from '../stores/postgres/pool.js';
import type { ResponseCache } from '../stores/redis/responseCache.js';

/** Merges FROM into INTO and drops every cached answer that showed either or anything that moved. */
export async function merge(
  db: Pool,
  cache: ResponseCache | null,
  kind: EntityKind,
  fromId: string,
  intoId: string,
): Promise<MergeOutcome> {
  for (const id of [fromId, intoId]) {
    if (kindOfId(id) !== kind) return { merged: false, refused: `${id} is not a ${kind} id` };
  }
  const outcome = await mergeEntities(db, kind, fromId, intoId);
  if (outcome.merged) await cache?.invalidate(outcome.touched);
  return outcome;
}

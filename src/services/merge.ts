import { kindOfId, type EntityKind } from '../domain/ids.js';
import { mergeEntities, mergeWorksInTransaction, type MergeOutcome, type WorkMerge } from '../stores/postgres/merges.js';
import { withTransaction, type Pool } from '../stores/postgres/pool.js';
import type { ResponseCache } from '../stores/redis/responseCache.js';

const wrongKind = (kind: EntityKind, ids: readonly string[]): MergeOutcome | null => {
  const id = ids.find((candidate) => kindOfId(candidate) !== kind);
  return id === undefined ? null : { merged: false, refused: `${id} is not a ${kind} id` };
};

/** Merges FROM into INTO and drops every cached answer that showed either or anything that moved. */
export async function merge(
  db: Pool,
  cache: ResponseCache | null,
  kind: EntityKind,
  fromId: string,
  intoId: string,
): Promise<MergeOutcome> {
  const refused = wrongKind(kind, [fromId, intoId]);
  if (refused) return refused;
  const outcome = await mergeEntities(db, kind, fromId, intoId);
  if (outcome.merged) await cache?.invalidate(outcome.touched);
  return outcome;
}

/**
 * Many work merges, in order, as `merge` would do them one after another, but in one transaction (a
 * resolution merges thousands: a transaction, and a dozen statements, each was most of their cost),
 * then one drop of every cached answer they touched. Killed meanwhile, none of them is done.
 * Outcomes in the same order.
 */
export async function mergeWorks(db: Pool, cache: ResponseCache | null, merges: readonly WorkMerge[]): Promise<MergeOutcome[]> {
  const refused = merges.map(({ fromId, intoId }) => wrongKind('work', [fromId, intoId]));
  const valid = merges.filter((_, index) => refused[index] === null);
  const done = valid.length > 0 ? await withTransaction(db, (client) => mergeWorksInTransaction(client, valid)) : [];
  const outcomes = refused.map((outcome) => outcome ?? done.shift()!);
  const touched = new Set(outcomes.flatMap((outcome) => (outcome.merged ? [...outcome.touched] : [])));
  if (touched.size > 0) await cache?.invalidate(touched);
  return outcomes;
}

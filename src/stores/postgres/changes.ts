import type { EntityKind } from '../../domain/ids.js';
import type { Queryable } from './pool.js';

export type ChangeOperation = 'insert' | 'update' | 'delete' | 'merge';

export interface Change {
  entity: EntityKind;
  id: string;
  operation: ChangeOperation;
  /** The entity that absorbed this one; only for merges. */
  survivorId?: string;
}

export interface RecordedChange {
  seq: number;
  entity: EntityKind;
  id: string;
  operation: ChangeOperation;
  survivorId: string | null;
  changedAt: Date;
}

// Any constant works; it only has to be the same for every writer.
const CHANGE_APPEND_LOCK = 7_340_002;

/**
 * Appends changes to the sequence inside the caller's transaction. Call it last, just before commit.
 *
 * The advisory lock is held until that transaction ends, so sequence numbers are handed out in
 * commit order: a reader that sees seq N has already been able to see every seq below N. Without
 * it, a transaction holding a low number could commit after a higher one was read, and a consumer
 * following the feed would skip it.
 */
export async function recordChanges(client: Queryable, changes: readonly Change[]): Promise<void> {
  if (changes.length === 0) return;
  await lockChangeSequence(client);
  await client.query(
    `insert into changes (entity, entity_id, operation, survivor_id)
     select * from unnest($1::entity_kind[], entity_keys($2), $3::change_operation[], entity_keys($4))`,
    [
      changes.map((change) => change.entity),
      changes.map((change) => change.id),
      changes.map((change) => change.operation),
      changes.map((change) => change.survivorId ?? null),
    ],
  );
}

/** Takes the append lock of the change sequence until the caller's transaction ends (see recordChanges). */
export async function lockChangeSequence(client: Queryable): Promise<void> {
  await client.query('select pg_advisory_xact_lock($1)', [CHANGE_APPEND_LOCK]);
}

interface ChangeRow {
  seq: number;
  entity: EntityKind;
  entity_id: string;
  operation: ChangeOperation;
  survivor_id: string | null;
  changed_at: Date;
}

/** Up to `limit` changes after `since`, in sequence order. */
export async function readChanges(db: Queryable, since: number, limit: number): Promise<RecordedChange[]> {
  const { rows } = await db.query<ChangeRow>({
    name: 'changes-after',
    text: `select seq, entity, public_id(entity_id) as entity_id, operation, public_id(survivor_id) as survivor_id, changed_at
             from changes where seq > $1 order by seq limit $2`,
    values: [since, limit],
  });
  return rows.map((row) => ({
    seq: row.seq,
    entity: row.entity,
    id: row.entity_id,
    operation: row.operation,
    survivorId: row.survivor_id,
    changedAt: row.changed_at,
  }));
}

/** The newest sequence number handed out so far (0 for an empty feed). */
export async function lastSeq(db: Queryable): Promise<number> {
  const { rows } = await db.query<{ seq: number }>('select coalesce(max(seq), 0)::bigint as seq from changes');
  return rows[0]?.seq ?? 0;
}

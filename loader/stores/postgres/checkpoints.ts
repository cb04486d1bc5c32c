import type { Queryable } from '../../../src/stores/postgres/pool.js';

/**
 * Where each loader stands in the change sequence (table loader_checkpoints). A checkpoint only
 * ever moves forward, and is advanced only after Elasticsearch acknowledged everything up to it.
 */

export interface Checkpoint {
  name: string;
  seq: number;
  updatedAt: Date;
}

export async function readCheckpoint(db: Queryable, name: string): Promise<Checkpoint | null> {
  const { rows } = await db.query<{ name: string; seq: number; updated_at: Date }>(
    'select name, seq, updated_at from loader_checkpoints where name = $1',
    [name],
  );
  const row = rows[0];
  return row ? { name: row.name, seq: row.seq, updatedAt: row.updated_at } : null;
}

/** Moves the checkpoint to `seq` unless it is already further (greatest wins); returns where it is. */
export async function advanceCheckpoint(db: Queryable, name: string, seq: number): Promise<number> {
  const { rows } = await db.query<{ seq: number }>(
    `insert into loader_checkpoints (name, seq) values ($1, $2)
     on conflict (name) do update
       set seq = greatest(loader_checkpoints.seq, excluded.seq),
           updated_at = case when excluded.seq > loader_checkpoints.seq then now() else loader_checkpoints.updated_at end
     returning seq`,
    [name, seq],
  );
  return rows[0]!.seq;
}

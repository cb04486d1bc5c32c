import type { Queryable } from '../../../src/stores/postgres/pool.js';

/** An alias swap asked of Elasticsearch and not yet acknowledged (table loader_pending_swaps). */
export interface PendingSwap {
  alias: string;
  index: string;
  /** Every change up to this seq is in `index`. */
  completeUpTo: number;
}

export async function recordPendingSwap(db: Queryable, swap: PendingSwap): Promise<void> {
  await db.query(
    `insert into loader_pending_swaps (alias, index, complete_up_to) values ($1, $2, $3)
     on conflict (alias) do update set index = excluded.index, complete_up_to = excluded.complete_up_to, recorded_at = now()`,
    [swap.alias, swap.index, swap.completeUpTo],
  );
}

export async function pendingSwaps(db: Queryable): Promise<PendingSwap[]> {
  const { rows } = await db.query<{ alias: string; index: string; complete_up_to: number }>(
    'select alias, index, complete_up_to from loader_pending_swaps order by alias',
  );
  return rows.map((row) => ({ alias: row.alias, index: row.index, completeUpTo: Number(row.complete_up_to) }));
}

export async function clearPendingSwap(db: Queryable, alias: string): Promise<void> {
  await db.query('delete from loader_pending_swaps where alias = $1', [alias]);
}

/** Calls with the same key made in one turn, and how many there were. */
export interface Group<K> {
  key: K;
  count: number;
}

interface Waiting<R> {
  resolve(result: R): void;
  reject(error: unknown): void;
}

/**
 * Batches calls per turn of the event loop (DataLoader's idea, for round trips to Redis and PostgreSQL): calls made
 * while a turn's I/O callbacks run are grouped by key and handed to `run` together once they are
 * done. `run` answers each group with one result per call, in call order; if it fails, every call
 * of the batch fails with its error.
 */
export function perTurn<K, R>(run: (groups: Group<K>[]) => Promise<R[][]>): (key: K) => Promise<R> {
  let pending = new Map<K, Waiting<R>[]>();
  let scheduled = false;

  async function flush(batch: Map<K, Waiting<R>[]>): Promise<void> {
    const entries = [...batch];
    try {
      const results = await run(entries.map(([key, waiting]) => ({ key, count: waiting.length })));
      entries.forEach(([, waiting], group) => waiting.forEach((call, index) => call.resolve(results[group]![index]!)));
    } catch (error) {
      for (const [, waiting] of entries) for (const call of waiting) call.reject(error);
    }
  }

  return (key) =>
    new Promise<R>((resolve, reject) => {
      const waiting = pending.get(key);
      if (waiting) waiting.push({ resolve, reject });
      else pending.set(key, [{ resolve, reject }]);
      if (scheduled) return;
      scheduled = true;
      // setImmediate runs after the turn's I/O callbacks, so every request they started is in the batch.
      setImmediate(() => {
        const batch = pending;
        pending = new Map();
        scheduled = false;
        void flush(batch);
      });
    });
}

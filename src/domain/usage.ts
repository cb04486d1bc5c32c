/** One metered call. */
export interface UsageRecord {
  kid: string;
  method: string;
  route: string;
  status: number;
  /** Milliseconds since the epoch, to the microsecond: cheap to take, and orders one process' calls. */
  at: number;
  latencyMs: number;
}

/** The calls of a batch that share kid, method, route and status: their times and latencies, in the order added. */
export interface UsageGroup {
  kid: string;
  method: string;
  route: string;
  status: number;
  at: number[];
  latencyMs: number[];
}

/**
 * Calls stored by column, grouped by what they repeat (the shape migration 005 stores). No object
 * per call outlives `add`: a buffer of calls waiting to be written is a few arrays of numbers,
 * which the garbage collector does not have to trace or move.
 */
export class UsageBatch {
  private readonly byKey = new Map<string, UsageGroup>();
  size = 0;

  static of(records: Iterable<UsageRecord>): UsageBatch {
    const batch = new UsageBatch();
    for (const record of records) batch.add(record);
    return batch;
  }

  add({ kid, method, route, status, at, latencyMs }: UsageRecord): void {
    // The route comes last: it is the only part that may hold any character.
    const key = `${status} ${method} ${kid} ${route}`;
    let group = this.byKey.get(key);
    if (!group) this.byKey.set(key, (group = { kid, method, route, status, at: [], latencyMs: [] }));
    group.at.push(at);
    group.latencyMs.push(latencyMs);
    this.size += 1;
  }

  groups(): UsageGroup[] {
    return [...this.byKey.values()];
  }

  /** The earliest and latest call times. */
  bounds(): { first: number; last: number } {
    let first = Infinity;
    let last = -Infinity;
    for (const { at } of this.byKey.values()) {
      for (const time of at) {
        first = Math.min(first, time);
        last = Math.max(last, time);
      }
    }
    return { first, last };
  }

  /** Drops up to `count` calls, the earliest first; returns how many it dropped. */
  dropOldest(count: number): number {
    let dropped = 0;
    while (dropped < count && this.size > 0) {
      let oldest: [string, UsageGroup] | null = null;
      for (const entry of this.byKey) if (!oldest || entry[1].at[0]! < oldest[1].at[0]!) oldest = entry;
      const [key, group] = oldest!;
      group.at.shift();
      group.latencyMs.shift();
      if (group.at.length === 0) this.byKey.delete(key);
      this.size -= 1;
      dropped += 1;
    }
    return dropped;
  }
}

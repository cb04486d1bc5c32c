import type { Logger } from '../log.js';
import type { Queryable } from '../stores/postgres/pool.js';
import { UsageBatch, type UsageRecord } from '../domain/usage.js';
import { insertUsage } from '../stores/postgres/usage.js';

export interface MeterHealth {
  pending: number;
  dropped: number;
  /** The last write failed (why is in the log, never in a public answer). */
  failing: boolean;
}

const BATCH = 1_000;
// What a crash (kill -9) can lose: the calls of the last interval, and those of a write under way.
// A write of a few calls costs a fraction of a millisecond of CPU, so a short interval costs little
// (scripts/bench/meter.ts --flush-every measures it).
export const FLUSH_EVERY_MS = 100;
const RETRY_MAX_MS = 5_000;
// Drops are logged at most this often, with their count: an outage must not flood the log too.
const DROP_REPORT_EVERY_MS = 10_000;

/**
 * Usage records, written to PostgreSQL in batches off the request path. While PostgreSQL is away
 * they wait in memory (up to `capacity`; past that the oldest are dropped and counted), and `close`
 * writes whatever is left before the process exits.
 */
export class Meter {
  /** Oldest first; the last one is open and takes new calls. */
  private batches: UsageBatch[] = [new UsageBatch()];
  private buffered = 0;
  private dropped = 0;
  private droppedUnreported = 0;
  private lastDropReport = -Infinity;
  private timer: NodeJS.Timeout | null = null;
  private writing: Promise<void> | null = null;
  private queuedWrite: Promise<void> | null = null;
  private failures = 0;
  private inFlight = 0;

  constructor(
    private readonly db: Queryable,
    private readonly log: Logger,
    private readonly capacity: number,
  ) {
    this.schedule(FLUSH_EVERY_MS);
  }

  record(record: UsageRecord): void {
    const open = this.batches.at(-1)!;
    open.add(record);
    this.buffered += 1;
    this.enforceCapacity();
    if (open.size < BATCH) return;
    this.batches.push(new UsageBatch());
    if (this.failures === 0) void this.writeSealed();
  }

  health(): MeterHealth {
    return { pending: this.buffered + this.inFlight, dropped: this.dropped, failing: this.failures > 0 };
  }

  /** Writes everything buffered now. */
  flush(): Promise<void> {
    if (this.batches.at(-1)!.size > 0) this.batches.push(new UsageBatch());
    return this.writeSealed();
  }

  /** Stops the timer and writes what is left, retrying until `deadlineMs` has passed. */
  async close(deadlineMs = 15_000): Promise<void> {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    const deadline = Date.now() + deadlineMs;
    for (;;) {
      await this.flush();
      if (this.buffered === 0) break;
      if (Date.now() > deadline) {
        this.log.error({ lost: this.buffered }, 'usage records could not be written before exit');
        break;
      }
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
    this.reportDrops({ now: true });
  }

  private enforceCapacity(): void {
    let excess = this.buffered + this.inFlight - this.capacity;
    if (excess <= 0) return;
    while (excess > 0 && this.buffered > 0) {
      const dropped = this.batches[0]!.dropOldest(excess);
      if (this.batches[0]!.size === 0 && this.batches.length > 1) this.batches.shift();
      this.buffered -= dropped;
      excess -= dropped;
      this.dropped += dropped;
      this.droppedUnreported += dropped;
    }
    this.reportDrops();
  }

  /** Logs the drops not yet reported, unless the last report is under DROP_REPORT_EVERY_MS old (`now`: regardless). */
  private reportDrops({ now = false } = {}): void {
    const at = Date.now();
    if (this.droppedUnreported === 0 || (!now && at - this.lastDropReport < DROP_REPORT_EVERY_MS)) return;
    this.log.error({ dropped: this.droppedUnreported, droppedTotal: this.dropped }, 'usage buffer full: oldest usage records dropped');
    this.droppedUnreported = 0;
    this.lastDropReport = at;
  }

  /**
   * Writes the batches sealed so far; callers share the write in flight, or else one more queued
   * behind it. Only full batches are sealed between flushes, so under load every row holds a full
   * batch: a write never chases the calls that arrive while it runs.
   */
  private writeSealed(): Promise<void> {
    if (!this.writing) {
      this.writing = this.writeBatches().finally(() => {
        this.writing = null;
      });
      return this.writing;
    }
    this.queuedWrite ??= this.writing.then(() => {
      this.queuedWrite = null;
      return this.writeSealed();
    });
    return this.queuedWrite;
  }

  private async writeBatches(): Promise<void> {
    // Never the open batch, which takes new calls, even if drops emptied sealed ones meanwhile.
    for (let due = this.batches.length - 1; due > 0 && this.batches.length > 1; due--) {
      const batch = this.batches.shift()!;
      this.buffered -= batch.size;
      this.inFlight = batch.size;
      try {
        await insertUsage(this.db, batch);
        this.failures = 0;
      } catch (error) {
        // Back to the front, ahead of anything recorded meanwhile.
        this.batches.unshift(batch);
        this.buffered += batch.size;
        this.failures += 1;
        this.log.warn({ pending: this.buffered, err: error }, 'usage write failed; records kept for retry');
        return;
      } finally {
        this.inFlight = 0;
        this.enforceCapacity();
      }
    }
  }

  private schedule(delayMs: number): void {
    this.timer = setTimeout(() => void this.flushAndReschedule(), delayMs);
    this.timer.unref();
  }

  private async flushAndReschedule(): Promise<void> {
    await this.flush();
    this.reportDrops();
    if (this.timer === null) return; // closed meanwhile
    const backoff = this.failures === 0 ? FLUSH_EVERY_MS : Math.min(FLUSH_EVERY_MS * 2 ** this.failures, RETRY_MAX_MS);
    this.schedule(backoff);
  }
}

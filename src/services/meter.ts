import type { Logger } from '../log.js';
import type { Queryable } from '../stores/postgres/pool.js';
import { insertUsage, type UsageRecord } from '../stores/postgres/usage.js';

export interface MeterHealth {
  pending: number;
  dropped: number;
  lastError: string | null;
}

const BATCH = 1_000;
const FLUSH_EVERY_MS = 500;
const RETRY_MAX_MS = 5_000;
// Drops are logged at most this often, with their count: an outage must not flood the log too.
const DROP_REPORT_EVERY_MS = 10_000;

/**
 * Usage records, written to PostgreSQL in batches off the request path. While PostgreSQL is away
 * they wait in memory (up to `capacity`; past that the oldest are dropped and counted), and `close`
 * writes whatever is left before the process exits.
 */
export class Meter {
  private buffer: UsageRecord[] = [];
  private dropped = 0;
  private droppedUnreported = 0;
  private lastDropReport = -Infinity;
  private lastError: string | null = null;
  private timer: NodeJS.Timeout | null = null;
  private flushing: Promise<void> | null = null;
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
    this.buffer.push(record);
    this.enforceCapacity();
    if (this.buffer.length >= BATCH && this.failures === 0) void this.flush();
  }

  health(): MeterHealth {
    return { pending: this.buffer.length + this.inFlight, dropped: this.dropped, lastError: this.lastError };
  }

  /** Writes everything buffered now. Concurrent callers share one flush. */
  flush(): Promise<void> {
    this.flushing ??= this.writeAll().finally(() => {
      this.flushing = null;
    });
    return this.flushing;
  }

  /** Stops the timer and writes what is left, retrying until `deadlineMs` has passed. */
  async close(deadlineMs = 15_000): Promise<void> {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    const deadline = Date.now() + deadlineMs;
    for (;;) {
      await this.flush();
      if (this.buffer.length === 0) break;
      if (Date.now() > deadline) {
        this.log.error({ lost: this.buffer.length }, 'usage records could not be written before exit');
        break;
      }
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
    this.reportDrops({ now: true });
  }

  private enforceCapacity(): void {
    const excess = this.buffer.length + this.inFlight - this.capacity;
    if (excess <= 0) return;
    this.buffer.splice(0, excess);
    this.dropped += excess;
    this.droppedUnreported += excess;
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
   * Writes what is buffered when it starts, not what arrives meanwhile: under load, chasing the
   * newcomers would write a row of a few dozen calls after every write, at a row's fixed cost each.
   */
  private async writeAll(): Promise<void> {
    let due = this.buffer.length;
    while (due > 0) {
      const batch = this.buffer.splice(0, Math.min(BATCH, due));
      due -= batch.length;
      this.inFlight = batch.length;
      try {
        await insertUsage(this.db, batch);
        this.failures = 0;
        this.lastError = null;
      } catch (error) {
        // Back to the front, ahead of anything recorded meanwhile.
        this.buffer.unshift(...batch);
        this.failures += 1;
        this.lastError = error instanceof Error ? error.message : String(error);
        this.log.warn({ pending: this.buffer.length, err: this.lastError }, 'usage write failed; records kept for retry');
        return;
      } finally {
        this.inFlight = 0;
        this.enforceCapacity();
      }
    }
  }

  private schedule(delayMs: number): void {
    this.timer = setTimeout(async () => {
      await this.flush();
      this.reportDrops();
      if (this.timer === null) return; // closed meanwhile
      const backoff = this.failures === 0 ? FLUSH_EVERY_MS : Math.min(FLUSH_EVERY_MS * 2 ** this.failures, RETRY_MAX_MS);
      this.schedule(backoff);
    }, delayMs);
    this.timer.unref();
  }
}

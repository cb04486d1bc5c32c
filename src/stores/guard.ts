import { AsyncLocalStorage } from 'node:async_hooks';
import { unavailable, type ApiError } from '../errors.js';
import type { Logger } from '../log.js';

/** The stores a request may wait for, by the name a client and an operator read. */
export type StoreName = 'PostgreSQL' | 'Redis' | 'Elasticsearch';

// After the store is found away, calls fail at once for this long; then one call at a time tries it again.
const RETRY_AFTER_MS = 1_000;
// Waits that run out in a row before the store counts as away: one slow answer under load is not an outage.
const TIMEOUTS_TO_TRIP = 3;
// An outage is logged when it starts, then at most this often (with the count of calls it failed).
const REPORT_EVERY_MS = 10_000;
// A request carrying several items (the searches of one _msearch) waits this share of the base wait more for each item past the first.
const WAIT_PER_EXTRA_ITEM = 0.1;

/**
 * How long a request carrying `items` may wait: the base wait for one, and a tenth of it more for
 * each other. A store does a batch's items in a few parallel lanes, so a batch takes longer than
 * one request, but far less than as many requests one after another; a store that is away still
 * fails it once its wait has run out, and a batch's wait stays a few times the base wait.
 */
export function waitForItems(baseMs: number, items: number): number {
  return Math.round(baseMs * (1 + WAIT_PER_EXTRA_ITEM * (Math.max(1, items) - 1)));
}

/** The store took longer than the request path may wait. */
export class StoreTimeout extends Error {
  constructor(store: StoreName, ms: number) {
    super(`${store} gave no answer within ${ms} ms`);
    this.name = 'StoreTimeout';
  }
}

/**
 * One request's wait for the stores it needs, shared by all of its calls: a search that asks the
 * index twice and then PostgreSQL waits STORE_WAIT_MS for the three together, not for each. What
 * is spent is the time the request had a call under way (calls at once count once); its own work
 * between calls (checking a key's secret, building JSON) is not waiting. A call carrying several
 * items (an _msearch) raises the budget to its own longer wait, for it and the calls after it.
 */
class WaitBudget {
  private allowedMs: number;
  private spentMs = 0;
  private underWay = 0;
  private underWaySince = 0;

  /** `patienceMs`: how long each call may wait, and all of them together, when longer than the guards' own waits. */
  constructor(readonly patienceMs: number) {
    this.allowedMs = patienceMs;
  }

  /** Starts a call whose own wait is `waitMs`: what is left of the budget for it, and the end of the call. */
  begin(waitMs: number): { leftMs: number; end(): void } {
    const now = performance.now();
    this.allowedMs = Math.max(this.allowedMs, waitMs);
    const leftMs = this.allowedMs - this.spentMs - (this.underWay > 0 ? now - this.underWaySince : 0);
    if (this.underWay++ === 0) this.underWaySince = now;
    let ended = false;
    const end = () => {
      if (ended) return;
      ended = true;
      if (--this.underWay === 0) this.spentMs += performance.now() - this.underWaySince;
    };
    return { leftMs, end };
  }
}

const requestBudget = new AsyncLocalStorage<WaitBudget>();

/**
 * Runs `work` (one request's handling) with a wait budget of its own, which every budgeted guard's
 * calls inside it draw on. With `patienceMs`, the calls may wait that long, each and together,
 * where the guards' waits are shorter: for work whose answer is worth waiting for once and then kept.
 */
export function withWaitBudget<T>(work: () => T, patienceMs = 0): T {
  return requestBudget.run(new WaitBudget(patienceMs), work);
}

/**
 * The request path's side of one store: every call waits at most `timeoutMs` (more for a call
 * carrying several items, see waitForItems), and no longer than what is left of its request's
 * budget (see WaitBudget) when the guard is `budgeted`; a call that
 * fails because the store is away (as `isOutage` tells, or the wait ran out) becomes a 503 naming
 * the store. The store counts as away after such an error, or after a few waits in a row ran out;
 * then calls are refused at once, and one call a second tries it again, so the store recovers
 * without a restart and a stalled one does not hold every request. The log says when an outage
 * starts, how many calls it failed every ten seconds, and when it ends.
 */
export class StoreGuard {
  private downSince: number | null = null;
  private retryAt = 0;
  private timeoutsInARow = 0;
  private failedUnreported = 0;
  private lastReport = -Infinity;
  private timeoutCount = 0;
  private refusalCount = 0;

  /**
   * `budgeted`: calls draw on their request's wait budget. Redis' are not: a request does without
   * it (a cache miss, a rate limit counted in memory), so its waits must not take from the stores
   * the request needs.
   */
  constructor(
    readonly store: StoreName,
    private readonly log: Logger,
    private readonly timeoutMs: number,
    private readonly isOutage: (error: unknown) => boolean,
    private readonly budgeted = true,
  ) {}

  get available(): boolean {
    return this.downSince === null;
  }

  /** Calls whose wait ran out, since the process started. */
  get timeouts(): number {
    return this.timeoutCount;
  }

  /** Calls answered with a 503 naming this store, since the process started. */
  get refusals(): number {
    return this.refusalCount;
  }

  /**
   * `work`, given its wait: that of a call carrying `items`, or what is left of its request's
   * budget if less. A wait that runs out (the guard's, or work's own StoreTimeout) counts towards
   * the store being away only when three calls of one item run out their whole wait in a row: a
   * slow answer is not an outage, and a batch past its wait says the store is busy (batches at once
   * wait behind each other), which single calls would say too if it were stalled; a call cut short
   * by its request's budget says only that the request had spent its wait on other calls.
   */
  async run<T>(work: (waitMs: number) => Promise<T>, items = 1): Promise<T> {
    const budget = this.budgeted ? requestBudget.getStore() : undefined;
    const ownWaitMs = Math.max(waitForItems(this.timeoutMs, items), budget?.patienceMs ?? 0);
    const call = budget?.begin(ownWaitMs);
    try {
      return await this.attempt(work, items, ownWaitMs, Math.round(Math.min(ownWaitMs, call?.leftMs ?? ownWaitMs)));
    } finally {
      call?.end();
    }
  }

  private async attempt<T>(work: (waitMs: number) => Promise<T>, items: number, ownWaitMs: number, waitMs: number): Promise<T> {
    const cutShort = waitMs < ownWaitMs;
    if (waitMs <= 0) throw this.refuse();
    if (this.downSince !== null) {
      if (Date.now() < this.retryAt) throw this.refuse();
      // This call tries the store; the others keep being refused until it has an answer.
      this.retryAt = Date.now() + RETRY_AFTER_MS;
    }
    let result: T;
    try {
      result = await within(work(waitMs), waitMs, () => new StoreTimeout(this.store, waitMs));
    } catch (error) {
      const timedOut = error instanceof StoreTimeout;
      if (timedOut) this.timeoutCount += 1;
      if (!timedOut && !this.isOutage(error)) throw error;
      if (timedOut && (items > 1 || cutShort) && this.downSince === null) throw this.refuse();
      this.timeoutsInARow = timedOut ? this.timeoutsInARow + 1 : 0;
      if (!timedOut || this.timeoutsInARow >= TIMEOUTS_TO_TRIP || this.downSince !== null) this.wentDown(error);
      throw this.refuse();
    }
    this.timeoutsInARow = 0;
    if (this.downSince !== null) {
      this.log.info(
        { store: this.store, downMs: Date.now() - this.downSince, failed: this.failedUnreported },
        `${this.store} available again`,
      );
      this.downSince = null;
      this.failedUnreported = 0;
    }
    return result;
  }

  private wentDown(error: unknown): void {
    const now = Date.now();
    this.retryAt = now + RETRY_AFTER_MS;
    // The message only: a stack per failed call is what an outage must not fill the log with.
    const reason = error instanceof Error ? error.message : String(error);
    if (this.downSince === null) {
      this.downSince = now;
      this.lastReport = now;
      this.log.error({ store: this.store, err: reason }, `${this.store} unavailable`);
    }
  }

  private refuse(): ApiError {
    const now = Date.now();
    this.refusalCount += 1;
    // The outage's count: a call past its wait while the store is up is not one of them.
    if (this.downSince !== null) this.failedUnreported += 1;
    if (this.downSince !== null && now - this.lastReport >= REPORT_EVERY_MS) {
      this.log.error(
        { store: this.store, downMs: now - (this.downSince ?? now), failed: this.failedUnreported },
        `${this.store} still unavailable`,
      );
      this.failedUnreported = 0;
      this.lastReport = now;
    }
    return unavailable(this.store, Math.max(1, Math.ceil((this.retryAt - now) / 1000)));
  }
}

/** What a store's client needs of a guard; UNGUARDED for the commands and tools, which may wait as long as it takes. */
export type Guard = Pick<StoreGuard, 'run'>;
export const UNGUARDED: Guard = { run: (work) => work(Number.POSITIVE_INFINITY) };

/**
 * `promise`, or the error `timedOut` makes once `ms` have passed. An event loop busy for longer
 * than `ms` runs expired timers before it reads the answers waiting on its sockets, so the deadline
 * is only given once those have been read (setImmediate runs after them).
 */
function within<T>(promise: Promise<T>, ms: number, timedOut: () => Error): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => setImmediate(() => reject(timedOut())), ms);
  });
  return Promise.race([promise, deadline]).finally(() => clearTimeout(timer));
}

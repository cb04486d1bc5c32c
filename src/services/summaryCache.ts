import { isUnavailable } from '../errors.js';
import type { Logger } from '../log.js';
import { withWaitBudget } from '../stores/guard.js';
import type { SummaryStore } from '../stores/redis/summaries.js';

/**
 * Summaries kept and served stale while revalidated: answers that aggregate much of the catalogue
 * (a subject's page, trending), where a ranking a few minutes old serves a reader as well as one of
 * this second. Once computed, a summary is served from Redis to everyone; once older than the
 * refresh age it is still served, and one caller across all instances recomputes it in the
 * background, the new one replacing it. So only the first request of a page waits for it.
 *
 * A summary missing (never asked, or unasked for a day) is computed in the request and kept, its
 * calls waiting for the stores past the request path's wait (COMPUTATION_WAIT_MS); the
 * requests for it meanwhile on this instance wait for that computation instead of starting theirs. Redis
 * away: computed in the request, as if there were no cache. A background refresh that fails is
 * logged and leaves the kept summary in place; its lock, left to expire, spaces out the next try.
 */

// How long a summary's computation may wait for the stores, in the request or the background: past
// the request path's wait, since aggregating a subject of millions of books takes seconds, and is then
// kept. A store that does not answer in this long is away.
const COMPUTATION_WAIT_MS = 30_000;
// A summary unasked for this long leaves Redis; one asked again later is computed afresh.
const KEEP_AT_LEAST_S = 24 * 60 * 60;
// The lock of a refresh: longer than a computation under the store waits takes, so no second
// caller starts one meanwhile; released as soon as the summary is replaced.
const REFRESH_HOLD_S = 60;

/** How often summaries of one kind were computed: in a request (nothing kept, or Redis away), or in the background. */
export interface SummaryComputations {
  cold: number;
  refreshed: number;
  failedRefreshes: number;
}

export class SummaryCache {
  /** Computations since the process started, by kind of summary (`subject`, `trending`), for the metrics. */
  readonly computations = new Map<string, SummaryComputations>();
  /** Cold computations under way in this process, as the body they will keep: a request for the same summary joins one rather than computing it again. */
  private readonly computing = new Map<string, Promise<string>>();
  private readonly refreshes = new Set<Promise<void>>();
  private readonly refreshMs: number;
  private readonly keepS: number;

  /** `refreshS`: the age past which a summary is recomputed; 0 keeps none (every request computes). */
  constructor(
    private readonly store: SummaryStore,
    refreshS: number,
    private readonly log: Logger,
  ) {
    this.refreshMs = refreshS * 1_000;
    // Many refresh ages, so that a page asked now and then is served kept between its refreshes.
    this.keepS = Math.max(KEEP_AT_LEAST_S, 10 * refreshS);
  }

  /** The summary of `kind` for `inputs` (its parameters, canonical): kept, or computed by `compute` and kept. */
  async through<T>(kind: string, inputs: string, compute: () => Promise<T>): Promise<T> {
    if (this.refreshMs === 0) return compute();
    const name = `${kind}:${inputs}`;
    const lookup = await this.store.lookup(name).catch((error: unknown) => {
      if (!isUnavailable(error)) this.log.warn({ err: error }, 'summary read failed');
      return null;
    });
    if (lookup?.kept) {
      const { body, computedAt } = lookup.kept;
      if (lookup.now - computedAt >= this.refreshMs) this.refreshLater(kind, name, computedAt, lookup.now, compute);
      return JSON.parse(body) as T;
    }
    const underWay = this.computing.get(name);
    if (underWay) return JSON.parse(await underWay) as T;
    const computation = this.computeCold(kind, name, lookup?.now ?? null, compute);
    const body = computation.then(({ body }) => body);
    // Its failure is the first caller's to answer; those joining it answer it as well.
    body.catch(() => undefined);
    // Joined until it is kept: a request that found it missing just before then would compute it again.
    this.computing.set(name, body);
    return (await computation.finally(() => this.computing.delete(name))).value;
  }

  /** Computes a summary in the request and keeps it, unless Redis could not be read (`readAt` null). */
  private async computeCold<T>(
    kind: string,
    name: string,
    readAt: number | null,
    compute: () => Promise<T>,
  ): Promise<{ value: T; body: string }> {
    const value = await withWaitBudget(compute, COMPUTATION_WAIT_MS);
    this.count(kind).cold += 1;
    const body = JSON.stringify(value);
    if (readAt !== null) {
      await this.store.keep(name, body, readAt, this.keepS).catch((error: unknown) => {
        if (!isUnavailable(error)) this.log.warn({ err: error }, 'summary write failed');
      });
    }
    return { value, body };
  }

  /** Resolves once the background refreshes under way have ended, before the stores they use close. */
  async idle(): Promise<void> {
    await Promise.allSettled([...this.refreshes]);
  }

  private count(kind: string): SummaryComputations {
    let counts = this.computations.get(kind);
    if (!counts) this.computations.set(kind, (counts = { cold: 0, refreshed: 0, failedRefreshes: 0 }));
    return counts;
  }

  /** Starts the refresh of a summary found old, outside the request: it waits for none of it, nor spends its store wait. */
  private refreshLater<T>(kind: string, name: string, keptAt: number, readAt: number, compute: () => Promise<T>): void {
    const refresh = withWaitBudget(() => this.refresh(kind, name, keptAt, readAt, compute), COMPUTATION_WAIT_MS).finally(() => {
      this.refreshes.delete(refresh);
    });
    this.refreshes.add(refresh);
  }

  /** Never throws: a refresh has no caller to answer. */
  private async refresh<T>(kind: string, name: string, keptAt: number, readAt: number, compute: () => Promise<T>): Promise<void> {
    let token: string | null = null;
    try {
      token = await this.store.claimRefresh(name, keptAt, REFRESH_HOLD_S);
      if (token === null) return;
      const value = await compute();
      // Stamped with the moment before the computation read the stores: its age is never understated.
      await this.store.keep(name, JSON.stringify(value), readAt, this.keepS);
      this.count(kind).refreshed += 1;
    } catch (error) {
      if (token === null) {
        if (!isUnavailable(error)) this.log.warn({ err: error, summary: name }, 'summary refresh could not be claimed');
        return;
      }
      this.count(kind).failedRefreshes += 1;
      this.log.warn({ err: error, summary: name }, 'summary refresh failed; the kept summary is served until a later one succeeds');
      return;
    }
    await this.store.releaseRefresh(name, token).catch((error: unknown) => {
      if (!isUnavailable(error)) this.log.warn({ err: error, summary: name }, 'summary refresh lock not released; it expires');
    });
  }
}

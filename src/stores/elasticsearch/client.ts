import {
  Client,
  errors,
  SniffingTransport,
  type TransportRequestOptions,
  type TransportRequestOptionsWithMeta,
  type TransportRequestOptionsWithOutMeta,
  type TransportRequestParams,
  type TransportResult,
} from '@elastic/elasticsearch';
import { unavailable, type ApiError } from '../../errors.js';
import type { Logger } from '../../log.js';
import { StoreGuard, StoreTimeout } from '../guard.js';

export type Elastic = Client;

/**
 * The loader's client. `url` names one node, or several comma-separated: the client spreads
 * requests over them and skips a node that is down. A batch job waits for a slow node rather than
 * fail: a node just started on a loaded machine can leave requests unanswered for a while, and a
 * first reindex (`npm run up`'s) must not fail for that.
 */
export function createElastic(url: string): Elastic {
  return new Client({ nodes: url.split(','), requestTimeout: 120_000, maxRetries: 2 });
}

/**
 * The API's client: every request to Elasticsearch goes through one guard (see StoreGuard), so an
 * unreachable or stalled cluster is a prompt 503 naming it, not a 500 after the client's retries.
 * A node that refuses connections is still skipped for another (a retry on a timeout is not: the
 * wait is spent), so the client's own retries and their pauses never outlast the wait.
 * A request's wait grows with the searches it carries (an _msearch's, see waitForItems), is cut
 * to what its API request has left (see WaitBudget), and the client's own timeout is that wait:
 * running out of it is a slow answer, which alone does not make the cluster count as away, as a
 * refused connection does.
 */
export function createRequestPathElastic(url: string, guard: StoreGuard): Elastic {
  class GuardedTransport extends SniffingTransport {
    override request<TResponse = unknown>(params: TransportRequestParams, options?: TransportRequestOptionsWithOutMeta): Promise<TResponse>;
    override request<TResponse = unknown, TContext = unknown>(
      params: TransportRequestParams,
      options?: TransportRequestOptionsWithMeta,
    ): Promise<TransportResult<TResponse, TContext>>;
    override request<TResponse = unknown>(params: TransportRequestParams, options?: TransportRequestOptions): Promise<TResponse>;
    override request(params: TransportRequestParams, options?: TransportRequestOptions): Promise<unknown> {
      // The next node at once, without the client's growing pauses between rounds: the wait is the guard's.
      const sent = (requestTimeout: number) =>
        super.request(params, { ...options, requestTimeout, retryBackoff: () => 0 }).catch((error: unknown) => {
          if (error instanceof errors.TimeoutError) throw new StoreTimeout('Elasticsearch', requestTimeout);
          throw (error instanceof errors.ResponseError ? missingIndex(error.body) : null) ?? error;
        });
      return guard.run(sent, searchesIn(params));
    }
  }
  // The client's own timeout is its connections' (undici's header and body timeouts), which no
  // request's can exceed: it must lie above every request's wait, which each request sets itself.
  return new Client({ nodes: url.split(','), requestTimeout: CONNECTION_TIMEOUT_MS, maxRetries: 2, Transport: GuardedTransport });
}

const CONNECTION_TIMEOUT_MS = 120_000;

/** The request path's guard of Elasticsearch (see StoreGuard): a request waits at most `waitMs`, more for an _msearch. */
export const elasticGuard = (log: Logger, waitMs: number): StoreGuard => new StoreGuard('Elasticsearch', log, waitMs, isElasticOutage);

// A missing index comes back when an operator builds it (a first load's reindex), not within a second.
const MISSING_INDEX_RETRY_S = 30;

/**
 * The 503 of a search whose index is missing, or null for any other error (`body`: an error
 * answer's body, or one answer of an _msearch). The cluster is up, so the guard does not count it
 * away: requests that need other indices keep being answered.
 */
export function missingIndex(body: unknown): ApiError | null {
  const error = typeof body === 'object' && body !== null && 'error' in body ? body.error : null;
  if (typeof error !== 'object' || error === null || !('type' in error) || error.type !== 'index_not_found_exception') return null;
  const index = 'index' in error && typeof error.index === 'string' ? `index ${error.index}` : 'an index';
  return unavailable('Elasticsearch', MISSING_INDEX_RETRY_S, `${index} is missing`);
}

/** The searches a request carries: an _msearch's (its body is a header and a search for each), else one. */
function searchesIn(params: TransportRequestParams): number {
  return Array.isArray(params.bulkBody) && params.path.endsWith('/_msearch') ? params.bulkBody.length / 2 : 1;
}

/** Errors that say the cluster is away or overloaded, not that a request was wrong (a timeout is the guard's to count). */
export function isElasticOutage(error: unknown): boolean {
  if (error instanceof errors.ResponseError) return error.statusCode === 502 || error.statusCode === 503 || error.statusCode === 504;
  return error instanceof errors.ConnectionError || error instanceof errors.NoLivingConnectionsError;
}

/** The aliases clients query; each points at one versioned physical index (see loader/index). */
export interface IndexAliases {
  books: string;
  authors: string;
}

export function indexAliases(prefix: string): IndexAliases {
  return { books: `${prefix}books`, authors: `${prefix}authors` };
}

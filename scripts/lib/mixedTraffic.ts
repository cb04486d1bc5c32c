import { setTimeout as sleep } from 'node:timers/promises';
import { reindex } from '../../loader/index/reindex.js';
import { createLogger } from '../../src/log.js';
import { indexAliases, type Elastic } from '../../src/stores/elasticsearch/client.js';
import type { Pool } from '../../src/stores/postgres/pool.js';
import { importSampleBooks } from './bench.js';

/**
 * Steady mixed traffic, as clients of the service send it: cached and uncached point lookups, book
 * searches, matches, bulk lookups and MCP tool calls, at a set rate over a set number of keep-alive
 * connections. Every request's outcome is reported: its kind, status (0 when no answer came), the
 * error of a request that got none (a reset connection), and its latency.
 */

export const REQUEST_KINDS = ['cached lookup', 'uncached lookup', 'search', 'match', 'bulk lookup', 'mcp'] as const;
export type RequestKind = (typeof REQUEST_KINDS)[number];

export interface Outcome {
  kind: RequestKind;
  status: number;
  /** Why no answer came (`ECONNRESET`, `UND_ERR_SOCKET`, ...); null when one did. */
  error: string | null;
  ms: number;
  /** When it was sent, from performance.now(). */
  at: number;
}

/** What the traffic asks for: books that exist in the catalogue under load. */
export interface TrafficCatalogue {
  isbns: string[];
  bookIds: string[];
  titles: string[];
}

/** The goodbooks-10k sample imported and indexed under `indexPrefix`: the books the traffic asks for, by id. */
export async function indexedSample(db: Pool, elastic: Elastic, indexPrefix: string): Promise<SampleBook[]> {
  await importSampleBooks(db);
  await reindex({ db, es: elastic, aliases: indexAliases(indexPrefix), log: createLogger('warn') }, 'all', { progress: false });
  const { rows } = await db.query<SampleBook>(
    'select public_id(id) as id, isbn_13, title from books where isbn_13 is not null and merged_into is null order by books.id',
  );
  return rows;
}

export interface SampleBook {
  id: string;
  isbn_13: string;
  title: string;
}

export const trafficCatalogue = (books: readonly SampleBook[]): TrafficCatalogue => ({
  isbns: books.map((book) => book.isbn_13),
  bookIds: books.map((book) => book.id),
  titles: books.map((book) => book.title),
});

export interface TrafficOptions {
  baseUrl: string;
  headers: Record<string, string>;
  catalogue: TrafficCatalogue;
  /** Requests per second over all connections. */
  rate: number;
  connections: number;
  signal: AbortSignal;
  onOutcome: (outcome: Outcome) => void;
}

/** Ten requests in the mix's proportions: three cached lookups, two uncached, two searches, one match, bulk lookup and MCP call each. */
const MIX: readonly RequestKind[] = [
  'cached lookup',
  'search',
  'uncached lookup',
  'cached lookup',
  'match',
  'mcp',
  'cached lookup',
  'search',
  'uncached lookup',
  'bulk lookup',
];

/** The few ISBNs every client asks for: after their first answer they come from the cache. */
const HOT = 20;

/** A request of `kind`, the `n`th of the run. */
function request(kind: RequestKind, n: number, catalogue: TrafficCatalogue): { path: string; init: RequestInit } {
  const { isbns, bookIds, titles } = catalogue;
  const pick = <T>(list: T[], index: number): T => list[index % list.length]!;
  const post = (path: string, body: unknown, headers: Record<string, string> = {}) => ({
    path,
    init: { method: 'POST', body: JSON.stringify(body), headers: { 'Content-Type': 'application/json', ...headers } },
  });
  switch (kind) {
    case 'cached lookup':
      return { path: `/v1/isbn/${pick(isbns.slice(0, HOT), n)}`, init: {} };
    case 'uncached lookup':
      // Each book in turn: a book is asked for again only once every other one has been.
      return { path: `/v1/books/${pick(bookIds, Math.floor(n / MIX.length) * 2 + (n % 2))}`, init: {} };
    case 'search':
      return { path: `/v1/books/search?q=${encodeURIComponent(pick(titles, n).split(' ').slice(0, 2).join(' '))}&limit=5`, init: {} };
    case 'match':
      return post('/v1/match', { title: pick(titles, n) });
    case 'bulk lookup':
      return post('/v1/isbn/batch', { isbns: Array.from({ length: 10 }, (_, i) => pick(isbns, n + i * 7)) });
    case 'mcp':
      return post(
        '/mcp',
        {
          jsonrpc: '2.0',
          id: n,
          method: 'tools/call',
          params: { name: 'search_books', arguments: { q: pick(titles, n).split(' ')[0], limit: 3 } },
        },
        { Accept: 'application/json, text/event-stream' },
      );
  }
}

/** The code of a failed fetch's cause (`ECONNRESET`), or its message. */
function failure(error: unknown): string {
  const cause = (error as { cause?: { code?: string; message?: string } }).cause;
  return cause?.code ?? cause?.message ?? (error as Error).message;
}

/** Why an MCP answer is no tool result, or null when it is one. */
function toolFailure(text: string): string | null {
  const message = JSON.parse(text) as { error?: { message: string }; result?: { isError?: boolean; content?: { text: string }[] } };
  if (message.error) return `JSON-RPC error: ${message.error.message}`;
  return message.result?.isError ? `tool error: ${message.result.content?.[0]?.text ?? ''}` : null;
}

/** Runs until `signal` aborts; resolves once every request sent has its outcome. */
export async function mixedTraffic(options: TrafficOptions): Promise<void> {
  const { baseUrl, headers, catalogue, rate, connections, signal, onOutcome } = options;
  const interval = (1000 * connections) / rate;
  let sent = 0;
  const client = async (offset: number) => {
    // The clients start spread over one interval, so the load is even rather than in bursts.
    await sleep((interval * offset) / connections);
    let due = performance.now();
    while (!signal.aborted) {
      const n = sent++;
      const kind = MIX[n % MIX.length]!;
      const { path, init } = request(kind, n, catalogue);
      const at = performance.now();
      let status = 0;
      let error: string | null = null;
      try {
        const response = await fetch(`${baseUrl}${path}`, {
          ...init,
          headers: { ...headers, ...(init.headers as Record<string, string>) },
        });
        const text = await response.text();
        status = response.status;
        // A tool's failure is a JSON-RPC answer of a 200: the error is in the message.
        if (kind === 'mcp' && status === 200) error = toolFailure(text);
      } catch (caught) {
        error = failure(caught);
      }
      onOutcome({ kind, status, error, ms: performance.now() - at, at });
      due += interval;
      const wait = due - performance.now();
      if (wait > 0) await sleep(wait).catch(() => undefined);
      else due = performance.now(); // behind: no burst to catch up
    }
  };
  await Promise.all(Array.from({ length: connections }, (_, offset) => client(offset)));
}

/** The failures among outcomes: no answer, or anything but a 200 (every request of the mix is valid and within budget). */
export const failed = (outcomes: readonly Outcome[]): Outcome[] =>
  outcomes.filter((outcome) => outcome.error !== null || outcome.status !== 200);

import { setTimeout as sleep } from 'node:timers/promises';
import type { Logger } from '../../src/log.js';
import { BOOK } from '../../src/stores/elasticsearch/booksIndex.js';
import { errors } from '@elastic/elasticsearch';
import { isElasticOutage, type Elastic, type IndexAliases } from '../../src/stores/elasticsearch/client.js';
import type { StoreName } from '../../src/stores/guard.js';
import { BulkError, BulkWriter, type BulkStats } from '../stores/elasticsearch/bulk.js';
import {
  authorDocuments,
  bookDocuments,
  bookFacts,
  booksOfAuthors,
  editionsOfWorks,
  sameAuthorFacts,
  sameWorkFacts,
  type BookFacts,
} from '../stores/elasticsearch/documents.js';
import type { IndexShape } from '../../src/config.js';
import { INDEX_KINDS } from '../../src/stores/elasticsearch/indices.js';
import { ensureAlias, errorType, statusOf, swapAlias } from '../stores/elasticsearch/indices.js';
import { advanceCheckpoint, readCheckpoint } from '../stores/postgres/checkpoints.js';
import { clearPendingSwap, pendingSwaps } from '../stores/postgres/pendingSwaps.js';
import { readChanges, type RecordedChange } from '../../src/stores/postgres/changes.js';
import { isPostgresOutage, type Pool, type PoolClient } from '../../src/stores/postgres/pool.js';
import type { ResponseCache } from '../../src/stores/redis/responseCache.js';

/**
 * `bookmeta sync [--follow]`: applies the change sequence to the search indices.
 *
 * Ordering. Every document is written with an external version: the sequence number of the last
 * change of the page being applied, read *before* the documents are built from PostgreSQL. So a
 * document written at version V reflects at least every change up to V, and whatever happens to an
 * entity after V has a higher sequence number and is written later at a higher version. Elasticsearch
 * keeps the highest version and answers 409 to an older one (counted as success: a newer state is
 * already there), so an older change never overwrites a newer one, whoever writes (this loop, a
 * reindex catching up, a second sync process). Merged and deleted entities are deleted with a version
 * too; their tombstones live for index.gc_deletes (1h in mappings/*.json), long enough that a late
 * write built before the merge cannot bring them back.
 *
 * Durability. The checkpoint (loader_checkpoints 'sync') is moved forward only after Elasticsearch
 * acknowledged every write of the page, in PostgreSQL, never backwards. A kill -9 at any moment
 * leaves it at or behind what is indexed, and the next run rebuilds the same documents from the
 * current state again: applying a page twice is harmless.
 *
 * Which documents a change touches: a book change rebuilds that book (a merge also its survivor), the
 * author documents of its current and previous authors (work_count, popularity) and the editions of
 * its current and previous works (work_readers, work_rating); an author
 * change rebuilds that author and, unless it is an insert, the books crediting it (author_names); a
 * work change rebuilds its editions (work_id, also_liked never names another edition of the work).
 * Ids that are no longer live are deleted from the index.
 *
 * Each page is applied while holding SYNC_WRITE_LOCK, which a reindex takes around its final catch-up
 * and alias swap, so no write of this loop can land in an index that is just being replaced.
 */

export const SYNC_CHECKPOINT = 'sync';
/** Session advisory lock serialising sync pages against a reindex's final catch-up and alias swap. */
const SYNC_WRITE_LOCK = 7_340_010;

export interface LoaderDeps {
  db: Pool;
  es: Elastic;
  aliases: IndexAliases;
  log: Logger;
  /** Shards and replicas of the indices the loader creates (single node when absent). */
  shape?: IndexShape;
  /** The API's caches, told when what the indices answer has changed (none: short-lived answers just expire). */
  cache?: ResponseCache | null;
}

/**
 * What search, match, recommendations and suggestions answer may have changed (pages searchable, an
 * alias swapped, reader signals derived): the short cache stops serving the answers it kept from
 * before. Without Redis those expire on their own, within the short cache's lifetime.
 */
export async function answersChanged({ cache, log }: Pick<LoaderDeps, 'cache' | 'log'>): Promise<void> {
  await cache?.catalogueChanged().catch((error: unknown) => {
    log.warn({ err: error }, 'could not drop short-lived answers; they expire on their own');
  });
}

/** Where writes of each kind go: an alias (sync) or a physical index (reindex catching up). Absent: skip. */
export interface WriteTargets {
  books?: string;
  authors?: string;
  /** Targets are aliases: refuse to auto-create a concrete index. */
  aliases: boolean;
  /** Refresh after writing, so the documents are searchable at once instead of within refresh_interval. */
  refresh?: boolean;
}

export interface ApplyStats {
  changes: number;
  books: number;
  authors: number;
  bulk: BulkStats;
}

const DOC_BATCH = 2_000;

function chunks<T>(items: readonly T[], size: number): T[][] {
  const out: T[][] = [];
  for (let start = 0; start < items.length; start += size) out.push(items.slice(start, start + size));
  return out;
}

/** The facts of the indexed documents of these books (what their authors' and work's documents were built from). */
async function indexedBookFacts(es: Elastic, booksIndex: string, bookIds: readonly string[]): Promise<Map<string, BookFacts>> {
  const found = new Map<string, BookFacts>();
  for (const ids of chunks(bookIds, DOC_BATCH)) {
    try {
      const response = await es.mget<BookFacts>({
        index: booksIndex,
        ids,
        _source_includes: [BOOK.work_id.path, BOOK.title.path, BOOK.popularity.path, BOOK.average_rating.path, BOOK.author_ids.path],
      });
      for (const doc of response.docs) {
        if ('found' in doc && doc.found && doc._source)
          found.set(doc._id, {
            work_id: doc._source.work_id,
            title: doc._source.title,
            popularity: doc._source.popularity,
            average_rating: doc._source.average_rating ?? null,
            author_ids: doc._source.author_ids ?? [],
          });
      }
    } catch (error) {
      if (statusOf(error) !== 404) throw error;
    }
  }
  return found;
}

/**
 * Authors and works whose documents a change to these books may change: the authors credited before
 * (as indexed) or after (in PostgreSQL), and the works the book belonged to before or after (their
 * editions carry the work's readers and rating). With `skipUnchanged`, not those of a book whose
 * facts are all as indexed: a title or cover fixed on a book of an author of 15,000 editions then
 * costs no more than the book. Only sync may skip: it keeps the books and authors behind the aliases
 * in step, so an indexed book says what the other documents were built from; a replay into a new
 * index built from a snapshot cannot know that.
 */
async function affectedBy(
  deps: LoaderDeps,
  bookIds: readonly string[],
  skipUnchanged: boolean,
): Promise<{ authors: Set<string>; works: Set<string> }> {
  const affected = { authors: new Set<string>(), works: new Set<string>() };
  if (bookIds.length === 0) return affected;
  const [before, after] = await Promise.all([indexedBookFacts(deps.es, deps.aliases.books, bookIds), bookFacts(deps.db, bookIds)]);
  for (const id of bookIds) {
    const was = before.get(id);
    const is = after.get(id);
    if (!(skipUnchanged && was && is && sameAuthorFacts(was, is))) {
      for (const author of [...(was?.author_ids ?? []), ...(is?.author_ids ?? [])]) affected.authors.add(author);
    }
    if (!(skipUnchanged && was && is && sameWorkFacts(was, is))) {
      for (const work of [was?.work_id, is?.work_id]) if (work !== undefined) affected.works.add(work);
    }
  }
  return affected;
}

/**
 * Applies one page of changes (in sequence order) to the targets and waits until Elasticsearch
 * acknowledged all of it. Throws when any write failed (other than a stale version).
 */
export async function applyChanges(deps: LoaderDeps, changes: readonly RecordedChange[], targets: WriteTargets): Promise<ApplyStats> {
  const writer = new BulkWriter(deps.es, { requireAlias: targets.aliases, concurrency: 2, refresh: targets.refresh });
  const stats: ApplyStats = { changes: changes.length, books: 0, authors: 0, bulk: writer.stats };
  if (changes.length === 0) return stats;
  const version = changes[changes.length - 1]!.seq;

  const books = new Set<string>();
  const authors = new Set<string>();
  const works = new Set<string>();
  const authorsWhoseBooks = new Set<string>();
  for (const change of changes) {
    const ids = change.survivorId ? [change.id, change.survivorId] : [change.id];
    for (const id of ids) {
      if (change.entity === 'book') {
        books.add(id);
      } else if (change.entity === 'work') {
        works.add(id);
      } else {
        authors.add(id);
        if (change.operation !== 'insert') authorsWhoseBooks.add(id);
      }
    }
  }

  // All reads before any write: affectedBy reads the old book documents through the alias, and a
  // bulk chunk can be sent mid-loop. It runs first, while `books` still holds only changed books.
  const inStep = targets.aliases && targets.books === deps.aliases.books && targets.authors === deps.aliases.authors;
  const affected = await affectedBy(deps, [...books], inStep);
  if (targets.authors) {
    for (const id of affected.authors) authors.add(id);
  }
  if (targets.books) {
    for (const id of await editionsOfWorks(deps.db, [...works, ...affected.works])) books.add(id);
    for (const id of await booksOfAuthors(deps.db, [...authorsWhoseBooks])) books.add(id);
  }

  const documentsOf = { books: bookDocuments, authors: authorDocuments };
  const idsOf = { books, authors };
  for (const kind of INDEX_KINDS) {
    const target = targets[kind];
    if (!target) continue;
    for (const ids of chunks([...idsOf[kind]], DOC_BATCH)) {
      const docs = await documentsOf[kind](deps.db, ids, version);
      const live = new Set(docs.map((doc) => doc.id));
      for (const doc of docs) await writer.index(target, doc.id, version, doc.json);
      for (const id of ids) if (!live.has(id)) await writer.delete(target, id, version);
      stats[kind] += ids.length;
    }
  }
  await writer.flush();
  return stats;
}

/** Applies every change in (from, to] to the targets, a page at a time. Returns the last seq applied. */
export async function replayChanges(deps: LoaderDeps, from: number, to: number, targets: WriteTargets, pageSize = 1_000): Promise<number> {
  let since = from;
  while (since < to) {
    const changes = (await readChanges(deps.db, since, pageSize)).filter((change) => change.seq <= to);
    if (changes.length === 0) break;
    await applyChanges(deps, changes, targets);
    since = changes[changes.length - 1]!.seq;
  }
  return since;
}

export interface SyncOptions {
  /** Changes per page (default 1,000). */
  pageSize?: number;
  signal?: AbortSignal;
  /** Refresh after each page (follow mode: searchable at once rather than within the 1 s refresh interval). */
  refresh?: boolean;
  /** Called after each page is acknowledged and checkpointed. */
  onPage?: (page: { changes: number; checkpoint: number; stats: ApplyStats; oldestChangedAt: Date }) => void;
}

export interface SyncResult {
  pages: number;
  changes: number;
  checkpoint: number;
}

/** Holds SYNC_WRITE_LOCK on `client` (a dedicated connection) while `work` runs. */
export async function withSyncWriteLock<T>(client: PoolClient, work: () => Promise<T>): Promise<T> {
  await client.query('select pg_advisory_lock($1)', [SYNC_WRITE_LOCK]);
  try {
    return await work();
  } finally {
    await client.query('select pg_advisory_unlock($1)', [SYNC_WRITE_LOCK]).catch(() => undefined);
  }
}

/**
 * Makes the alias swaps that reindexes recorded and did not see acknowledged (they died, or the
 * request failed). Elasticsearch may still carry out such a request at any later moment, and
 * whatever sync had written into the old index by then would vanish from search. So the swap is
 * made now, before any write through the alias: the new index holds every change up to the
 * recorded seq, and sync's checkpoint, which cannot move while a reindex holds SYNC_WRITE_LOCK, is at
 * or below it. A late copy of the dead reindex's request then changes nothing. Call it holding
 * SYNC_WRITE_LOCK.
 */
export async function completePendingSwaps(deps: LoaderDeps): Promise<void> {
  for (const swap of await pendingSwaps(deps.db)) {
    try {
      await swapAlias(deps.es, swap.alias, swap.index);
      deps.log.warn({ alias: swap.alias, index: swap.index, completeUpTo: swap.completeUpTo }, 'completed the alias swap of a reindex');
    } catch (error) {
      // Deleted by hand since: the alias stays where it is, on a complete index.
      if (errorType(error) !== 'index_not_found_exception') throw error;
    }
    await clearPendingSwap(deps.db, swap.alias);
    await answersChanged(deps);
  }
}

/** Makes sure both aliases exist, so writes through them never auto-create an index. */
export async function ensureAliases(deps: LoaderDeps): Promise<void> {
  await ensureAlias(deps.es, deps.aliases.books, 'books', deps.shape);
  await ensureAlias(deps.es, deps.aliases.authors, 'authors', deps.shape);
}

/**
 * Applies the changes after the checkpoint until there are none left, page by page: each page is
 * acknowledged by Elasticsearch, then the checkpoint moves to its last seq.
 */
export async function syncOnce(deps: LoaderDeps, options: SyncOptions = {}, lockClient?: PoolClient): Promise<SyncResult> {
  const pageSize = options.pageSize ?? 1_000;
  const client = lockClient ?? (await deps.db.connect());
  const result: SyncResult = { pages: 0, changes: 0, checkpoint: (await readCheckpoint(deps.db, SYNC_CHECKPOINT))?.seq ?? 0 };
  try {
    while (!options.signal?.aborted) {
      // Look without the lock first: when idle (follow mode) this is the only query per poll.
      const peek = await readChanges(deps.db, result.checkpoint, 1);
      if (peek.length === 0) break;
      const done = await withSyncWriteLock(client, async () => {
        await completePendingSwaps(deps);
        const checkpoint = (await readCheckpoint(deps.db, SYNC_CHECKPOINT))?.seq ?? 0;
        const changes = await readChanges(deps.db, checkpoint, pageSize);
        if (changes.length === 0) return { checkpoint, applied: 0 };
        const stats = await applyChanges(deps, changes, {
          books: deps.aliases.books,
          authors: deps.aliases.authors,
          aliases: true,
          refresh: options.refresh,
        });
        const last = changes[changes.length - 1]!.seq;
        const now = await advanceCheckpoint(deps.db, SYNC_CHECKPOINT, last);
        // Refreshed pages are searchable now; the others within the refresh interval, and the
        // refresh after the last page makes sure of them.
        await answersChanged(deps);
        options.onPage?.({ changes: changes.length, checkpoint: now, stats, oldestChangedAt: changes[0]!.changedAt });
        return { checkpoint: now, applied: changes.length };
      });
      result.checkpoint = done.checkpoint;
      if (done.applied === 0) break;
      result.pages += 1;
      result.changes += done.applied;
    }
    if (result.pages > 0 && !options.refresh) {
      await deps.es.indices.refresh({ index: [deps.aliases.books, deps.aliases.authors], ignore_unavailable: true });
      await answersChanged(deps);
    }
  } finally {
    if (!lockClient) client.release();
  }
  return result;
}

export interface FollowOptions extends SyncOptions {
  /** Pause between polls when there is nothing to apply (default 100 ms). */
  pollMs?: number;
  /** Seconds between summary log lines (default 10). */
  logEverySeconds?: number;
  /** Called when a page failed because a store is away (it is retried after a pause). */
  onFailure?: (error: unknown) => void;
}

// While a store is away, pages are tried again after 1 s, then 2 s, then every 5 s.
const AWAY_PAUSE_MS = 1_000;
const AWAY_PAUSE_MAX_MS = 5_000;

/**
 * The store a failed page says is away, or null for any other error (a bug, a document refused,
 * bad credentials), which ends `follow`: retrying cannot mend it. Refusals that are all the
 * cluster's own (5xx, such as shards not started yet) or still queue-full after the bulk writer's
 * retries (none listed) say Elasticsearch cannot take writes now.
 */
function storeAway(error: unknown): StoreName | null {
  if (isElasticOutage(error) || error instanceof errors.TimeoutError) return 'Elasticsearch';
  if (error instanceof BulkError && error.failures.every((failure) => failure.status >= 500)) return 'Elasticsearch';
  return isPostgresOutage(error) ? 'PostgreSQL' : null;
}

/** A dedicated connection for SYNC_WRITE_LOCK. Losing its server while idle must not crash the process: its next query fails instead. */
async function lockClient(db: Pool): Promise<PoolClient> {
  const client = await db.connect();
  client.on('error', () => undefined);
  return client;
}

/**
 * `sync --follow`: tails the change sequence until `signal` aborts (SIGTERM/SIGINT), polling every
 * `pollMs` when idle. Each page is written with refresh=true, so a change is searchable as soon as
 * its page is acknowledged rather than up to a refresh interval (1 s) later: a few small refreshes
 * per second at most, for a commit-to-searchable lag well under the 2 s target.
 *
 * PostgreSQL or Elasticsearch away (restarted, unreachable) is logged once, when it starts and
 * when it ends, and the page is tried again after a pause, on a new connection if PostgreSQL's was
 * lost. The checkpoint only moves after acknowledged pages, so a page cut short is applied again
 * from it, which is harmless (see Durability above), and nothing is skipped. Any other error ends
 * the process.
 */
export async function follow(deps: LoaderDeps, options: FollowOptions = {}): Promise<SyncResult> {
  const pollMs = options.pollMs ?? 100;
  const logEveryMs = (options.logEverySeconds ?? 10) * 1000;
  const total: SyncResult = { pages: 0, changes: 0, checkpoint: 0 };
  let sinceLog = 0;
  let lastLog = performance.now();
  let aliasesEnsured = false;
  let client: PoolClient | null = null;
  // Asserted: the checker does not see the catch below assign it, and would narrow it to null.
  let away = null as { store: StoreName; since: number; failures: number } | null;
  try {
    while (!options.signal?.aborted) {
      try {
        if (!aliasesEnsured) await ensureAliases(deps);
        aliasesEnsured = true;
        client ??= await lockClient(deps.db);
        const result = await syncOnce(deps, { ...options, refresh: options.refresh ?? true }, client);
        if (away) deps.log.info({ store: away.store, downMs: Date.now() - away.since }, `${away.store} available again`);
        away = null;
        total.pages += result.pages;
        total.changes += result.changes;
        total.checkpoint = result.checkpoint;
        sinceLog += result.changes;
        if (performance.now() - lastLog >= logEveryMs) {
          deps.log.info({ changes: sinceLog, checkpoint: total.checkpoint }, 'sync following');
          sinceLog = 0;
          lastLog = performance.now();
        }
        if (result.changes === 0) await sleep(pollMs, undefined, { signal: options.signal }).catch(() => undefined);
      } catch (error) {
        const store = storeAway(error);
        if (store === null) throw error;
        options.onFailure?.(error);
        if (store === 'PostgreSQL') {
          client?.release(true);
          client = null;
        }
        if (away?.store !== store) {
          // The message only: a stack per retry is what an outage must not fill the log with.
          deps.log.error({ store, err: error instanceof Error ? error.message : String(error) }, `${store} unavailable`);
          away = { store, since: Date.now(), failures: 0 };
        }
        const pause = Math.min(AWAY_PAUSE_MAX_MS, AWAY_PAUSE_MS * 2 ** away.failures++);
        await sleep(pause, undefined, { signal: options.signal }).catch(() => undefined);
      }
    }
  } finally {
    client?.release();
  }
  return total;
}

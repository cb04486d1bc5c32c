import { setTimeout as sleep } from 'node:timers/promises';
import { BulkWriter } from '../stores/elasticsearch/bulk.js';
import { countLive, streamDocuments } from '../stores/elasticsearch/documents.js';
import { INDEX_KINDS, type IndexKind } from '../../src/stores/elasticsearch/indices.js';
import {
  countDocuments,
  createPhysicalIndex,
  dropIndex,
  ensureAlias,
  finishBulkLoad,
  segmentCount,
  strayIndices,
  swapAlias,
} from '../stores/elasticsearch/indices.js';
import { advanceCheckpoint } from '../stores/postgres/checkpoints.js';
import { clearPendingSwap, recordPendingSwap } from '../stores/postgres/pendingSwaps.js';
import { lastSeq } from '../../src/stores/postgres/changes.js';
import type { PoolClient } from '../../src/stores/postgres/pool.js';
import { createProgress, type ProgressReporter } from './progress.js';
import { readyIndex } from './readyIndex.js';
import { SYNC_CHECKPOINT, answersChanged, completePendingSwaps, replayChanges, withSyncWriteLock, type LoaderDeps } from './sync.js';

/**
 * `bookmeta reindex [books|authors|all]`: rebuilds an index from PostgreSQL into a new physical
 * index and moves the alias to it, while searches keep answering from the old one.
 *
 *  1. Take the reindex lock of the alias (a session advisory lock: it dies with the process, so a
 *     kill -9 never leaves it held) and drop the alias's physical indices that the alias does not
 *     point at: the half-built leftovers of a killed reindex.
 *  2. Create `<alias>-v<timestamp>` from its declaration (src/stores/elasticsearch/indices.ts) with refresh_interval -1.
 *  3. Open a REPEATABLE READ transaction, read S = the last change seq in it, and stream every live
 *     row of that snapshot, page by page in id order, into bulk requests (at most `concurrency` in flight),
 *     version S. The snapshot holds exactly the changes up to S, because seq order is commit order
 *     (see stores/postgres/changes.ts).
 *  4. Check that the index holds as many documents as were streamed.
 *  5. Catch up: apply the changes after S to the new index with the sync logic (versions = their
 *     seqs, so they win over the snapshot's S). Restore the refresh interval, force-merge the index
 *     to a few segments and warm it with the API's kinds of queries (readyIndex.ts), so it answers
 *     at full speed from its first query behind the alias.
 *  6. Under SYNC_WRITE_LOCK, so no sync page can write into the old index meanwhile: apply the last
 *     changes up to M, check the counts against PostgreSQL, swap the alias atomically. Every change
 *     up to M is in the new index, and sync only ever wrote changes up to M to the old one; whatever
 *     comes after M, sync applies through the alias, i.e. to the new index. Nothing is lost.
 *  7. Drop the old index. For `all`, move the sync checkpoint up to the lower M (never back), so
 *     sync does not replay history the new indices already hold.
 *
 * The swap is recorded in PostgreSQL (loader_pending_swaps) before it is asked for, and cleared once
 * acknowledged: a request that reached Elasticsearch may take effect after the process died and its
 * lock was released, so sync, and the next reindex before step 1, make a recorded swap themselves
 * before anything else (completePendingSwaps in sync.ts).
 *
 * A kill -9 before the swap was recorded leaves the alias on the old, complete index (step 1 of the
 * next run drops the partial one); after it, the alias is, or is made to be, on the new index,
 * complete up to M, and sync carries on from its own checkpoint (at most M, or already past it
 * through the new index). The old index, if not yet dropped, is dropped by the next reindex.
 */

export type ReindexTarget = IndexKind | 'all';

export interface ReindexOptions {
  /** Rows per cursor read (default 2,000). */
  batchSize?: number;
  /** Bulk requests in flight (default 2). */
  concurrency?: number;
  /** Bulk request size in bytes (default 5 MiB). */
  maxBytes?: number;
  /** Documents per second at most (default: unlimited), to spare a busy cluster. */
  maxRate?: number;
  /** How long to wait for another reindex of the same alias to end (default 10 s). */
  lockWaitMs?: number;
  /** Show a progress bar / progress lines on stderr (default true). */
  progress?: boolean;
  /** Test hooks: after the snapshot seq is read; before the final catch-up and swap. */
  hooks?: {
    afterSnapshot?: (kind: IndexKind, seq: number) => Promise<void> | void;
    beforeSwap?: (kind: IndexKind, index: string) => Promise<void> | void;
  };
}

export interface ReindexResult {
  kind: IndexKind;
  index: string;
  alias: string;
  /** Snapshot seq. */
  snapshotSeq: number;
  /** Every change up to this seq is in the new index. */
  completeUpTo: number;
  documents: number;
  count: number;
  /** Segments of the new index's primaries when the alias moved to it. */
  segments: number;
  seconds: number;
  docsPerSecond: number;
  dropped: string[];
}

const REINDEX_LOCK = 7_340_020;
const KIND_KEY: Record<IndexKind, number> = { books: 1, authors: 2 };

export class ReindexBusyError extends Error {}

export async function reindex(deps: LoaderDeps, target: ReindexTarget, options: ReindexOptions = {}): Promise<ReindexResult[]> {
  const kinds = target === 'all' ? INDEX_KINDS : [target];
  const results: ReindexResult[] = [];
  for (const kind of kinds) results.push(await reindexOne(deps, kind, options));
  if (target === 'all') {
    await advanceCheckpoint(deps.db, SYNC_CHECKPOINT, Math.min(...results.map((result) => result.completeUpTo)));
  }
  return results;
}

async function reindexOne(deps: LoaderDeps, kind: IndexKind, options: ReindexOptions): Promise<ReindexResult> {
  const { db, es, log } = deps;
  const alias = deps.aliases[kind];
  const started = performance.now();
  const lockClient = await db.connect();
  try {
    // A reindex killed a moment ago may still hold the lock until PostgreSQL notices: wait a little.
    for (let waited = 0; ; waited += 250) {
      const { rows } = await lockClient.query<{ locked: boolean }>('select pg_try_advisory_lock($1, $2) as locked', [
        REINDEX_LOCK,
        KIND_KEY[kind],
      ]);
      if (rows[0]?.locked) break;
      if (waited >= (options.lockWaitMs ?? 10_000)) throw new ReindexBusyError(`another reindex of ${alias} is running`);
      await sleep(250);
    }
    try {
      // A reindex that died asking for its swap left an index the alias may yet move to: not a leftover.
      await withSyncWriteLock(lockClient, () => completePendingSwaps(deps));
      for (const stray of await strayIndices(es, alias)) {
        log.info({ index: stray }, 'dropping leftover index');
        await dropIndex(es, stray);
      }
      const index = await createPhysicalIndex(es, alias, kind, { bulkLoad: true, shape: deps.shape });
      log.info({ index, alias }, 'reindex started');
      let swapAsked = false;
      try {
        const snapshot = await loadSnapshot(deps, kind, index, options);
        const streamedCount = await countDocuments(es, index, { refresh: true });
        if (streamedCount !== snapshot.documents) {
          throw new Error(`${index} holds ${streamedCount} documents after streaming ${snapshot.documents}`);
        }
        // A book changed meanwhile may change its authors' documents (their work counts and
        // popularity): the replay brings those up to date behind their alias too, so that sync, which
        // rebuilds an author only when a book's indexed facts differ from PostgreSQL's, finds the
        // two indices in step after the swap.
        if (kind === 'books') await ensureAlias(es, deps.aliases.authors, 'authors', deps.shape);
        const targets =
          kind === 'books' ? { books: index, authors: deps.aliases.authors, aliases: false } : { authors: index, aliases: false };
        const caughtUp = await replayChanges(deps, snapshot.seq, await lastSeq(db), targets);
        await finishBulkLoad(es, index, kind, deps.shape);
        await readyIndex(es, log, kind, index);
        await options.hooks?.beforeSwap?.(kind, index);
        const { completeUpTo, count, segments, dropped } = await withSyncWriteLock(lockClient, async () => {
          // replayChanges returns at least `from` (caughtUp, itself at least snapshot.seq).
          const upTo = await replayChanges(deps, caughtUp, await lastSeq(db), targets);
          const count = await checkCounts(deps, kind, index, upTo);
          const segments = await segmentCount(es, index);
          // Once asked for, the swap may take effect in Elasticsearch even if this process dies before
          // the answer: recorded first, so that sync makes it before writing through the alias again.
          await recordPendingSwap(db, { alias, index, completeUpTo: upTo });
          log.info({ index, alias, completeUpTo: upTo }, 'swap recorded');
          swapAsked = true;
          const old = await swapAlias(es, alias, index);
          await clearPendingSwap(db, alias);
          return { completeUpTo: upTo, count, segments, dropped: old };
        });
        log.info({ index, alias, segments, replaced: dropped }, 'alias swapped');
        await answersChanged(deps);
        for (const old of dropped) await dropIndex(es, old);
        const seconds = (performance.now() - started) / 1000;
        return {
          kind,
          index,
          alias,
          snapshotSeq: snapshot.seq,
          completeUpTo,
          documents: snapshot.documents,
          count,
          segments,
          seconds,
          docsPerSecond: snapshot.documents / snapshot.seconds,
          dropped,
        };
      } catch (error) {
        if (!swapAsked) await dropIndex(es, index).catch(() => undefined);
        throw error;
      }
    } finally {
      await lockClient.query('select pg_advisory_unlock($1, $2)', [REINDEX_LOCK, KIND_KEY[kind]]).catch(() => undefined);
    }
  } finally {
    lockClient.release();
  }
}

/** Steps 3: streams the REPEATABLE READ snapshot into the index at version S. */
async function loadSnapshot(
  deps: LoaderDeps,
  kind: IndexKind,
  index: string,
  options: ReindexOptions,
): Promise<{ seq: number; documents: number; seconds: number }> {
  const client: PoolClient = await deps.db.connect();
  let progress: ProgressReporter | null = null;
  try {
    await client.query('begin isolation level repeatable read read only');
    const seq = await lastSeq(client);
    const total = await countLive(client, kind);
    await options.hooks?.afterSnapshot?.(kind, seq);
    if (options.progress !== false) progress = createProgress({ label: `reindex ${kind}`, total });
    const writer = new BulkWriter(deps.es, {
      concurrency: options.concurrency ?? 2,
      maxBytes: options.maxBytes,
      onAcknowledged: (n) => progress?.add(n),
    });
    const started = performance.now();
    let documents = 0;
    for await (const batch of streamDocuments(client, kind, seq, options.batchSize ?? 2_000)) {
      for (const doc of batch) await writer.index(index, doc.id, seq, doc.json);
      documents += batch.length;
      if (options.maxRate) {
        const ahead = (documents / options.maxRate) * 1000 - (performance.now() - started);
        if (ahead > 0) await sleep(ahead);
      }
    }
    await writer.flush();
    await client.query('commit');
    progress?.finish();
    return { seq, documents, seconds: (performance.now() - started) / 1000 };
  } catch (error) {
    await client.query('rollback').catch(() => undefined);
    throw error;
  } finally {
    client.release();
  }
}

/**
 * The new index must hold one document per live entity. Exact when no change was committed after
 * `upTo` by the time PostgreSQL is counted (one statement: one snapshot); otherwise they may differ
 * by at most the number of changes committed since.
 */
async function checkCounts(deps: LoaderDeps, kind: IndexKind, index: string, upTo: number): Promise<number> {
  const count = (await countDocuments(deps.es, index, { refresh: true })) ?? 0;
  const { rows } = await deps.db.query<{ live: number; seq: number }>(
    `select (select count(*) from ${kind} where merged_into is null and deleted_at is null)::bigint as live,
            (select coalesce(max(seq), 0) from changes)::bigint as seq`,
  );
  const { live, seq } = rows[0]!;
  // Each change after upTo moves the live count by at most one.
  if (Math.abs(count - live) > seq - upTo) {
    throw new Error(`${index} holds ${count} documents but PostgreSQL has about ${live} live ${kind}; alias not swapped`);
  }
  deps.log.info({ index, documents: count, live, upTo }, 'counts checked');
  return count;
}

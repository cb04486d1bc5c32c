import { collectDefaultMetrics, Counter, Registry } from 'prom-client';
import type { Logger } from '../../src/log.js';
import { serveMetrics, type MetricsEndpoint } from '../../src/metrics/endpoint.js';
import { readAtScrape } from '../../src/metrics/readAtScrape.js';
import type { Queryable } from '../../src/stores/postgres/pool.js';
import { BulkError } from '../stores/elasticsearch/bulk.js';
import { syncPosition, type SyncPosition } from './status.js';
import type { FollowOptions } from './sync.js';

// Well within Prometheus' default scrape timeout (10 s), so a stalled PostgreSQL costs the scrape only the position.
const POSITION_WAIT_MS = 3_000;

/**
 * `bookmeta sync --follow`'s metrics, in a registry of its own: Node's process metrics, where sync
 * stands against the change sequence (read from PostgreSQL at each scrape, so they hold whoever moved
 * the checkpoint), and what the pages it applied wrote to Elasticsearch and failed to.
 */
class SyncMetrics {
  readonly registry = new Registry();
  private readonly changes: Counter;
  private readonly documents: Counter<'outcome'>;
  private readonly failedPages: Counter;

  constructor(db: Queryable) {
    const registers = [this.registry];
    collectDefaultMetrics({ register: this.registry });
    // The four gauges' collects start together at each scrape and share one read. While PostgreSQL
    // cannot answer in time, they are left out of the scrape rather than shown stale.
    let reading: Promise<SyncPosition | null> | null = null;
    const position = () =>
      (reading ??= Promise.race([
        syncPosition(db).catch(() => null),
        new Promise<null>((resolve) => setTimeout(resolve, POSITION_WAIT_MS, null).unref()),
      ]).finally(() => {
        reading = null;
      }));
    const fromPosition = (read: (position: SyncPosition) => number) => async () => {
      const now = await position();
      return now ? [{ value: read(now) }] : [];
    };
    readAtScrape(
      this.registry,
      'gauge',
      'bookmeta_sync_applied_seq',
      'The last change sequence number applied to the indices (the sync checkpoint).',
      fromPosition((now) => now.checkpoint),
    );
    readAtScrape(
      this.registry,
      'gauge',
      'bookmeta_sync_head_seq',
      'The last change sequence number recorded in PostgreSQL (the head of the change feed).',
      fromPosition((now) => now.lastSeq),
    );
    readAtScrape(
      this.registry,
      'gauge',
      'bookmeta_sync_lag_changes',
      'Changes recorded but not yet applied to the indices.',
      fromPosition((now) => now.lagChanges),
    );
    readAtScrape(
      this.registry,
      'gauge',
      'bookmeta_sync_lag_seconds',
      'Age of the oldest change not yet applied to the indices (0 when none is waiting).',
      fromPosition((now) => now.lagSeconds),
    );
    this.changes = new Counter({
      name: 'bookmeta_sync_changes_applied_total',
      help: 'Changes applied to the indices by this process.',
      registers,
    });
    this.documents = new Counter({
      name: 'bookmeta_sync_documents_total',
      help: 'Documents this process wrote: indexed, deleted, stale (a newer version was already there), or failed (refused by Elasticsearch).',
      labelNames: ['outcome'],
      registers,
    });
    this.failedPages = new Counter({
      name: 'bookmeta_sync_page_failures_total',
      help: 'Pages that failed and were retried after a pause (Elasticsearch or PostgreSQL away).',
      registers,
    });
    for (const outcome of ['indexed', 'deleted', 'stale', 'failed']) this.documents.inc({ outcome }, 0);
    this.changes.inc(0);
    this.failedPages.inc(0);
  }

  /** The hooks `follow` calls after each page and each failure. */
  readonly hooks: Required<Pick<FollowOptions, 'onPage' | 'onFailure'>> = {
    onPage: ({ changes, stats }) => {
      this.changes.inc(changes);
      this.documents.inc({ outcome: 'indexed' }, stats.bulk.indexed);
      this.documents.inc({ outcome: 'deleted' }, stats.bulk.deleted);
      this.documents.inc({ outcome: 'stale' }, stats.bulk.stale);
    },
    onFailure: (error) => {
      this.failedPages.inc();
      if (error instanceof BulkError) this.documents.inc({ outcome: 'failed' }, error.failures.length);
    },
  };
}

/** Sync's metrics, served at `host:port` (SYNC_METRICS_PORT), and the hooks that feed them. */
export async function serveSyncMetrics(
  db: Queryable,
  host: string,
  port: number,
  log: Logger,
): Promise<MetricsEndpoint & Pick<SyncMetrics, 'hooks'>> {
  const metrics = new SyncMetrics(db);
  const endpoint = await serveMetrics(metrics.registry, host, port, log);
  return { ...endpoint, hooks: metrics.hooks };
}

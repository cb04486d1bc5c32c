import { INDEX_KINDS, type IndexKind } from '../../src/stores/elasticsearch/indices.js';
import { aliasTargets, countDocuments, strayIndices } from '../stores/elasticsearch/indices.js';
import { readCheckpoint } from '../stores/postgres/checkpoints.js';
import { countLive } from '../stores/elasticsearch/documents.js';
import { lastSeq } from '../../src/stores/postgres/changes.js';
import type { Queryable } from '../../src/stores/postgres/pool.js';
import { formatTable } from '../../src/table.js';
import { SYNC_CHECKPOINT, type LoaderDeps } from './sync.js';

/** `bookmeta loader status`: where sync stands and whether the indices agree with PostgreSQL. */

export interface IndexStatus {
  kind: IndexKind;
  alias: string;
  targets: string[];
  /** Physical indices of the alias it does not point at (a reindex running, or a killed one's leftovers). */
  others: string[];
  documents: number | null;
  live: number;
}

/** Where sync stands against the change sequence. */
export interface SyncPosition {
  checkpoint: number;
  checkpointUpdatedAt: Date | null;
  lastSeq: number;
  lagChanges: number;
  /** Age of the oldest change not yet applied (0 when none is pending). */
  lagSeconds: number;
}

export interface LoaderStatus extends SyncPosition {
  indices: IndexStatus[];
}

export async function syncPosition(db: Queryable): Promise<SyncPosition> {
  const checkpoint = await readCheckpoint(db, SYNC_CHECKPOINT);
  const seq = checkpoint?.seq ?? 0;
  const last = await lastSeq(db);
  const { rows } = await db.query<{ age: number | null }>(
    'select extract(epoch from clock_timestamp() - changed_at)::float8 as age from changes where seq > $1 order by seq limit 1',
    [seq],
  );
  return {
    checkpoint: seq,
    checkpointUpdatedAt: checkpoint?.updatedAt ?? null,
    lastSeq: last,
    lagChanges: Math.max(0, last - seq),
    lagSeconds: Math.max(0, rows[0]?.age ?? 0),
  };
}

export async function loaderStatus(deps: LoaderDeps): Promise<LoaderStatus> {
  const position = await syncPosition(deps.db);
  const indices: IndexStatus[] = [];
  for (const kind of INDEX_KINDS) {
    const alias = deps.aliases[kind];
    indices.push({
      kind,
      alias,
      targets: await aliasTargets(deps.es, alias),
      others: await strayIndices(deps.es, alias),
      documents: await countDocuments(deps.es, alias),
      live: await countLive(deps.db, kind),
    });
  }
  return { ...position, indices };
}

export function formatLoaderStatus(status: LoaderStatus): string {
  const lines = [
    `sync checkpoint: ${status.checkpoint} of ${status.lastSeq}${status.checkpointUpdatedAt ? ` (advanced ${status.checkpointUpdatedAt.toISOString()})` : ' (never run)'}`,
    `lag: ${status.lagChanges} changes, ${status.lagSeconds.toFixed(1)} s`,
    '',
    formatTable(
      ['index', 'alias target', 'documents', 'live in PostgreSQL', 'difference', 'other physical indices'],
      status.indices.map((index) => [
        index.alias,
        index.targets.join(', ') || '(missing)',
        index.documents === null ? '-' : String(index.documents),
        String(index.live),
        index.documents === null ? '-' : String(index.documents - index.live),
        index.others.join(', '),
      ]),
    ),
  ];
  return lines.join('\n');
}

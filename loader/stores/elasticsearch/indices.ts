import { setTimeout as sleep } from 'node:timers/promises';
import type { IndexShape } from '../../../src/config.js';
import type { Elastic } from '../../../src/stores/elasticsearch/client.js';
import { indexDefinition } from '../../../src/stores/elasticsearch/indexDeclaration.js';
import { INDICES, type IndexKind } from '../../../src/stores/elasticsearch/indices.js';

/**
 * Versioned physical indices behind aliases. Clients only ever name the alias (`bookmeta-books`);
 * the data lives in `bookmeta-books-v<timestamp>`. A full reindex builds a new physical index and
 * moves the alias to it in one atomic `_aliases` call, so searches never see a missing or half-built
 * index.
 */

export const SINGLE_NODE: IndexShape = { shards: 1, replicas: 0 };

/**
 * Index-level operations on a freshly bulk-loaded index (the first refresh of a million documents,
 * creating an index on a busy node) can take minutes: far longer than the client's default timeout.
 */
const SLOW = { requestTimeout: 10 * 60_000 } as const;

const MERGE_POLL_MS = 250;

/** Physical indices of an alias are named `<alias>-v<ms timestamp>`; this pattern finds them all. */
export function physicalPattern(alias: string): string {
  return `${alias}-v*`;
}

const PHYSICAL = (alias: string) => new RegExp(`^${alias.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}-v\\d+$`);

/**
 * Creates a new, empty physical index for `alias` from its declaration (src/stores/elasticsearch/indices.ts), in the given shape. With
 * `bulkLoad` the index neither refreshes (refresh_interval -1) nor keeps replicas, which would index
 * every document again, until `finishBulkLoad` restores both.
 */
export async function createPhysicalIndex(
  es: Elastic,
  alias: string,
  kind: IndexKind,
  options: { bulkLoad?: boolean; shape?: IndexShape } = {},
): Promise<string> {
  const { shards, replicas } = options.shape ?? SINGLE_NODE;
  const definition = indexDefinition(INDICES[kind]);
  // Date.now() alone could repeat for two creations in the same millisecond: never reuse a name.
  let stamp = Date.now();
  for (;;) {
    const name = `${alias}-v${stamp}`;
    const settings = { ...definition.settings };
    settings.index = { ...settings.index, number_of_shards: shards, number_of_replicas: options.bulkLoad ? 0 : replicas };
    if (options.bulkLoad) settings.index.refresh_interval = '-1';
    try {
      await es.indices.create({ index: name, settings, mappings: definition.mappings, wait_for_active_shards: 1 }, SLOW);
      return name;
    } catch (error) {
      if (errorType(error) !== 'resource_already_exists_exception') throw error;
      stamp += 1;
    }
  }
}

/** Restores the mapping's refresh interval and the shape's replicas after a bulk load, and makes everything searchable. */
export async function finishBulkLoad(es: Elastic, index: string, kind: IndexKind, shape: IndexShape = SINGLE_NODE): Promise<void> {
  const interval = String(INDICES[kind].settings.index.refresh_interval);
  await es.indices.putSettings({ index, settings: { index: { refresh_interval: interval, number_of_replicas: shape.replicas } } }, SLOW);
  await es.indices.refresh({ index }, SLOW);
}

/**
 * Merges each shard of `index` down to at most `maxSegments` segments and returns the segment count
 * of its primaries. The merge runs as a task and is waited for by polling: merging a large index
 * takes longer than any one request should stay open.
 */
export async function forceMerge(es: Elastic, index: string, maxSegments: number): Promise<number> {
  const { task } = await es.indices.forcemerge({ index, max_num_segments: maxSegments, wait_for_completion: false });
  if (task === undefined) throw new Error(`force merge of ${index} started no task`);
  for (;;) {
    const status = await es.tasks.get({ task_id: String(task) });
    if (status.error) throw new Error(`force merge of ${index} failed: ${status.error.type}: ${status.error.reason ?? ''}`);
    if (status.completed) break;
    await sleep(MERGE_POLL_MS);
  }
  return segmentCount(es, index);
}

/** Segments of the index's primaries, over every shard. */
export async function segmentCount(es: Elastic, index: string): Promise<number> {
  const stats = await es.indices.stats({ index, metric: 'segments' });
  return stats._all.primaries?.segments?.count ?? 0;
}

/** The physical indices an alias points at now (normally exactly one; none before the first build). */
export async function aliasTargets(es: Elastic, alias: string): Promise<string[]> {
  try {
    const response = await es.indices.getAlias({ name: alias });
    return Object.keys(response).sort();
  } catch (error) {
    if (statusOf(error) === 404) return [];
    throw error;
  }
}

/** True when a concrete index (not an alias) has the alias's name, e.g. auto-created by a stray write. */
async function concreteIndexNamed(es: Elastic, name: string): Promise<boolean> {
  try {
    const response = await es.indices.get({ index: name, allow_no_indices: true, ignore_unavailable: true, expand_wildcards: 'none' });
    return Object.prototype.hasOwnProperty.call(response, name);
  } catch (error) {
    if (statusOf(error) === 404) return false;
    throw error;
  }
}

/**
 * Points `alias` at `index` and at nothing else, in one atomic `_aliases` call: a search runs either
 * against the old index or against the new one, never against none. A concrete index squatting on
 * the alias's name is removed in the same call.
 */
export async function swapAlias(es: Elastic, alias: string, index: string): Promise<string[]> {
  const old = (await aliasTargets(es, alias)).filter((name) => name !== index);
  const actions: Record<string, unknown>[] = [];
  if (await concreteIndexNamed(es, alias)) actions.push({ remove_index: { index: alias } });
  for (const name of old) actions.push({ remove: { index: name, alias } });
  actions.push({ add: { index, alias, is_write_index: true } });
  await es.indices.updateAliases({ actions: actions }, SLOW);
  return old;
}

/**
 * Makes sure the alias exists, creating an empty physical index behind it when it does not, so that
 * writers addressing the alias (sync) never auto-create a concrete index with dynamic mappings.
 * Returns the alias's target.
 */
export async function ensureAlias(es: Elastic, alias: string, kind: IndexKind, shape: IndexShape = SINGLE_NODE): Promise<string> {
  const targets = await aliasTargets(es, alias);
  if (targets.length > 0) return targets[0]!;
  const index = await createPhysicalIndex(es, alias, kind, { shape });
  try {
    await swapAlias(es, alias, index);
  } catch (error) {
    await dropIndex(es, index);
    throw error;
  }
  // Two processes may have raced here; whichever alias action came last won. Drop the loser.
  const now = await aliasTargets(es, alias);
  if (!now.includes(index)) await dropIndex(es, index);
  return now[0] ?? index;
}

/** Every physical index of `alias` that the alias does not point at: leftovers of killed reindexes. */
export async function strayIndices(es: Elastic, alias: string): Promise<string[]> {
  const response = await es.cat.indices({ index: physicalPattern(alias), format: 'json', h: 'index', expand_wildcards: 'all' });
  const targets = new Set(await aliasTargets(es, alias));
  const pattern = PHYSICAL(alias);
  return (response as { index?: string }[])
    .map((row) => row.index ?? '')
    .filter((name) => pattern.test(name) && !targets.has(name))
    .sort();
}

export async function dropIndex(es: Elastic, index: string): Promise<void> {
  try {
    await es.indices.delete({ index }, SLOW);
  } catch (error) {
    if (statusOf(error) !== 404) throw error;
  }
}

/** Documents in an index or alias (after a refresh if asked), or null when it does not exist. */
export async function countDocuments(es: Elastic, index: string, options: { refresh?: boolean } = {}): Promise<number | null> {
  try {
    if (options.refresh) await es.indices.refresh({ index }, SLOW);
    const { count } = await es.count({ index }, SLOW);
    return count;
  } catch (error) {
    if (statusOf(error) === 404) return null;
    throw error;
  }
}

export function statusOf(error: unknown): number | undefined {
  return (error as { meta?: { statusCode?: number } })?.meta?.statusCode;
}

export function errorType(error: unknown): string | undefined {
  return (error as { meta?: { body?: { error?: { type?: string } } } })?.meta?.body?.error?.type;
}

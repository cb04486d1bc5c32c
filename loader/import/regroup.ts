import { workKind, workTitle } from '../../src/domain/titles.js';
import { merge } from '../../src/services/merge.js';
import type { Pool } from '../../src/stores/postgres/pool.js';
import type { ResponseCache } from '../../src/stores/redis/responseCache.js';
import { liveWorks, reviseWork, workIdsByKey, type LiveWork, type WorkRevision } from '../stores/postgres/works.js';
import { workKey } from './sourceFields.js';

/**
 * Brings works made under an earlier grouping rule in line with today's (sourceFields.workKey):
 * works whose editions now share a key are merged into one, through the merge machinery, so the old
 * work ids answer 301, the change feed records each merge and the index follows by sync. The
 * survivor is the work already holding the key, else the most popular; it takes the key, its title
 * without edition labels, and the kind of its most popular edition. Running it again changes nothing.
 */

export interface RegroupOutcome {
  merged: number;
  revised: number;
}

/** The key today's import would give the work's editions: its best edition's title, the same first author. */
const keyToday = (work: LiveWork, title: string): string =>
  workKey(title, work.work_key.slice(work.work_key.lastIndexOf('|') + 1) || undefined);

export async function regroupWorks(db: Pool, cache: ResponseCache | null): Promise<RegroupOutcome> {
  const groups = new Map<string, LiveWork[]>();
  for (const work of await liveWorks(db)) {
    if (work.edition === null) continue;
    const key = keyToday(work, work.edition.title);
    groups.set(key, [...(groups.get(key) ?? []), work]);
  }
  const holders = await workIdsByKey(db, [...groups.keys()]);
  const outcome: RegroupOutcome = { merged: 0, revised: 0 };
  for (const [key, group] of groups) {
    const mostPopular = group.reduce((best, work) => (work.popularity > best.popularity ? work : best));
    const survivorId = holders.get(key) ?? mostPopular.id;
    for (const work of group) {
      if (work.id === survivorId) continue;
      const merged = await merge(db, cache, 'work', work.id, survivorId);
      if (merged.merged) outcome.merged += 1;
    }
    const survivor = group.find((work) => work.id === survivorId);
    if (survivor === undefined) continue; // the key's holder is another group's survivor: nothing of it to revise here
    const edition = mostPopular.edition!;
    const revision: WorkRevision = {};
    if (survivor.work_key !== key && !holders.has(key)) revision.key = key;
    const title = workTitle(survivor.title);
    if (title !== survivor.title) revision.title = title;
    const kind = workKind({ title: edition.title, subtitle: edition.subtitle, seriesNumber: edition.series_number });
    if (kind !== survivor.kind) revision.kind = kind;
    if (Object.keys(revision).length === 0) continue;
    const touched = await reviseWork(db, survivorId, revision);
    await cache?.invalidate(touched);
    outcome.revised += 1;
  }
  return outcome;
}

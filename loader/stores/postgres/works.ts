import type { WorkKind } from '../../../src/domain/titles.js';
import { recordChanges, type Change } from '../../../src/stores/postgres/changes.js';
import { withTransaction, type Pool, type Queryable } from '../../../src/stores/postgres/pool.js';

/** The SQL of regrouping works (loader/import/regroup.ts): live works with their best edition, and a work's revision. */

export interface LiveWork {
  id: string;
  work_key: string;
  title: string;
  kind: WorkKind;
  /** Sum of the popularity of its live editions. */
  popularity: number;
  /** Its most popular live edition, as stored (title with its qualifiers); null when it has none. */
  edition: { title: string; subtitle: string | null; series_number: string | null } | null;
}

export async function liveWorks(db: Queryable): Promise<LiveWork[]> {
  const { rows } = await db.query<LiveWork>(
    `select public_id(w.id) as id, w.work_key, w.title, w.kind, coalesce(p.popularity, 0)::float8 as popularity,
            case when e.title is null then null else json_build_object('title', e.title, 'subtitle', e.subtitle, 'series_number', e.series_number) end as edition
       from works w
       left join lateral (select title, subtitle, series_number from books
                           where work_id = w.id and merged_into is null order by popularity desc, id limit 1 offset 0) e on true
       left join lateral (select sum(popularity) as popularity from books where work_id = w.id and merged_into is null offset 0) p on true
      where w.merged_into is null`,
  );
  return rows;
}

/** The live work each key leads to: the work holding it, or the survivor it was merged into. */
export async function workIdsByKey(db: Queryable, keys: readonly string[]): Promise<Map<string, string>> {
  const { rows } = await db.query<{ work_key: string; id: string }>(
    'select work_key, public_id(coalesce(merged_into, id)) as id from works where work_key = any($1)',
    [keys],
  );
  return new Map(rows.map((row) => [row.work_key, row.id]));
}

export interface WorkRevision {
  key?: string;
  title?: string;
  kind?: WorkKind;
}

/**
 * Revises a live work in one transaction with its changes: the work's, and its live editions' when
 * the kind changes (their records show it). Returns the ids whose cached answers are stale.
 */
export async function reviseWork(pool: Pool, id: string, revision: WorkRevision): Promise<string[]> {
  return withTransaction(pool, async (client) => {
    await client.query(
      `update works set work_key = coalesce($2, work_key), title = coalesce($3, title), kind = coalesce($4, kind), updated_at = now()
        where id = entity_key($1) and merged_into is null`,
      [id, revision.key ?? null, revision.title ?? null, revision.kind ?? null],
    );
    const changes: Change[] = [{ entity: 'work', id, operation: 'update' }];
    if (revision.kind !== undefined) {
      const { rows } = await client.query<{ id: string }>(
        'update books set updated_at = now() where work_id = entity_key($1) and merged_into is null returning public_id(id) as id',
        [id],
      );
      for (const row of rows) changes.push({ entity: 'book', id: row.id, operation: 'update' });
    }
    await recordChanges(client, changes);
    return changes.map((change) => change.id);
  });
}

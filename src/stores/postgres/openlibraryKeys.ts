import type { EntityKind } from '../../domain/ids.js';
import type { Queryable } from './pool.js';

/**
 * What an Open Library key names in the catalogue (read side; the importer writes these rows, see
 * loader/stores/postgres/openlibrary.ts).
 */
export interface OlKeyRow {
  state: 'record' | 'pending' | 'redirect' | 'delete';
  entity_id: string | null;
  redirect_to: string | null;
}

export async function openLibraryKey(db: Queryable, key: string): Promise<OlKeyRow | null> {
  const { rows } = await db.query<OlKeyRow>({
    name: 'openlibrary-key',
    text: 'select state, public_id(entity_id) as entity_id, redirect_to from openlibrary_records where key = $1',
    values: [key],
  });
  return rows[0] ?? null;
}

const TABLE: Record<EntityKind, string> = { book: 'books', work: 'works', author: 'authors' };

/** The survivor of an entity (itself unless merged) and whether it is deleted; null if no such row. */
export async function survivorOf(db: Queryable, kind: EntityKind, id: string): Promise<{ id: string; deleted: boolean } | null> {
  const { rows } = await db.query<{ id: string; deleted: boolean }>(
    `select public_id(s.id) as id, s.deleted_at is not null as deleted
       from ${TABLE[kind]} e join ${TABLE[kind]} s on s.id = coalesce(e.merged_into, e.id) where e.id = entity_key($1)`,
    [id],
  );
  return rows[0] ?? null;
}

import type { EntityKind } from '../../domain/ids.js';
import { recordChanges, type Change } from './changes.js';
import { withTransaction, type Pool, type PoolClient, type Queryable } from './pool.js';

/**
 * Merging one entity into another: FROM keeps its row as a redirect (merged_into = INTO), what hung
 * on FROM moves to INTO, and redirects that pointed at FROM are re-pointed at INTO, so every chain
 * is one hop long and a lookup of any old id lands on the final survivor.
 */

export type MergeOutcome =
  { merged: true; changes: Change[]; touched: Set<string> } | { merged: false; alreadyDone: true } | { merged: false; refused: string };

const TABLE: Record<EntityKind, string> = { book: 'books', work: 'works', author: 'authors' };

interface Row {
  id: string;
  merged_into: string | null;
}

export async function mergeEntities(pool: Pool, kind: EntityKind, fromId: string, intoId: string): Promise<MergeOutcome> {
  return withTransaction(pool, (client) => mergeInTransaction(client, kind, fromId, intoId));
}

export interface WorkMerge {
  fromId: string;
  intoId: string;
}

/**
 * Many work merges in one transaction, with the outcome each would have had done one after another
 * by mergeInTransaction, in order. Where each FROM is a distinct live work and each INTO a live work
 * that no merge of the batch takes (a resolution's groups), they are done set-based: a statement per
 * step for them all instead of a dozen per merge. Otherwise one after another.
 */
export async function mergeWorksInTransaction(client: PoolClient, merges: readonly WorkMerge[]): Promise<MergeOutcome[]> {
  // Every row locked at once, in id order, so that two such transactions cannot deadlock.
  const { rows } = await client.query<Row>(
    'select public_id(id) as id, public_id(merged_into) as merged_into from works where id = any(entity_keys($1)) order by works.id for update',
    [[...new Set(merges.flatMap((merge) => [merge.fromId, merge.intoId]))]],
  );
  const live = new Set(rows.filter((row) => row.merged_into === null).map((row) => row.id));
  const froms = new Set(merges.map((merge) => merge.fromId));
  const apart =
    froms.size === merges.length &&
    merges.every((merge) => merge.fromId !== merge.intoId && live.has(merge.fromId) && live.has(merge.intoId) && !froms.has(merge.intoId));
  if (!apart) {
    const outcomes: MergeOutcome[] = [];
    for (const { fromId, intoId } of merges) outcomes.push(await mergeInTransaction(client, 'work', fromId, intoId));
    return outcomes;
  }
  return mergeApartWorks(client, merges);
}

/**
 * The steps of merging works whose rows are locked, each FROM a distinct live work and each INTO a
 * live work no FROM is, a statement per step for them all (one merge is a batch of one).
 */
async function mergeApartWorks(client: PoolClient, merges: readonly WorkMerge[]): Promise<MergeOutcome[]> {
  const pairs = [merges.map((merge) => merge.fromId), merges.map((merge) => merge.intoId)];
  const { rows: moved } = await client.query<{ id: string; from_id: string }>(
    `update books b set work_id = m.into_id, updated_at = now() from unnest(entity_keys($1), entity_keys($2)) m(from_id, into_id)
      where b.work_id = m.from_id and b.merged_into is null returning public_id(b.id) as id, public_id(m.from_id) as from_id`,
    pairs,
  );
  // Redirect rows follow too, so that no book ever points at a merged work.
  await client.query(
    `update books b set work_id = m.into_id from unnest(entity_keys($1), entity_keys($2)) m(from_id, into_id) where b.work_id = m.from_id`,
    pairs,
  );
  await client.query(
    `update works w set original_year = least(w.original_year, f.original_year)
       from (select m.into_id, min(f.original_year) as original_year
               from unnest(entity_keys($1), entity_keys($2)) m(from_id, into_id) join works f on f.id = m.from_id group by m.into_id) f
      where w.id = f.into_id`,
    pairs,
  );
  const { rows: credits } = await client.query<{ book_id: string; author_id: string }>(
    'select distinct public_id(book_id) as book_id, public_id(author_id) as author_id from book_authors where book_id = any(entity_keys($1))',
    [moved.map((book) => book.id)],
  );
  await client.query(
    `update works w set merged_into = m.into_id, updated_at = now() from unnest(entity_keys($1), entity_keys($2)) m(from_id, into_id)
      where w.id = m.from_id`,
    pairs,
  );
  const { rows: repointed } = await client.query<{ id: string; from_id: string }>(
    `update works w set merged_into = m.into_id, updated_at = now() from unnest(entity_keys($1), entity_keys($2)) m(from_id, into_id)
      where w.merged_into = m.from_id returning public_id(w.id) as id, public_id(m.from_id) as from_id`,
    pairs,
  );
  await client.query('update works set updated_at = now() where id = any(entity_keys($1))', [pairs[1]]);

  const movedBy = groupedBy(moved, (row) => row.from_id);
  const repointedBy = groupedBy(repointed, (row) => row.from_id);
  const authorsOf = groupedBy(credits, (credit) => credit.book_id);
  const outcomes = merges.map(({ fromId, intoId }): MergeOutcome => {
    const touched = new Set([fromId, intoId]);
    const changes: Change[] = [];
    for (const { id } of movedBy.get(fromId) ?? []) {
      changes.push({ entity: 'book', id, operation: 'update' });
      touched.add(id);
      for (const { author_id } of authorsOf.get(id) ?? []) touched.add(author_id);
    }
    changes.push({ entity: 'work', id: fromId, operation: 'merge', survivorId: intoId });
    for (const { id } of repointedBy.get(fromId) ?? []) {
      changes.push({ entity: 'work', id, operation: 'merge', survivorId: intoId });
      touched.add(id);
    }
    changes.push({ entity: 'work', id: intoId, operation: 'update' });
    return { merged: true, changes, touched };
  });
  await recordChanges(
    client,
    outcomes.flatMap((outcome) => (outcome.merged ? outcome.changes : [])),
  );
  return outcomes;
}

function groupedBy<T>(list: readonly T[], keyOf: (item: T) => string): Map<string, T[]> {
  const groups = new Map<string, T[]>();
  for (const item of list) {
    const key = keyOf(item);
    const group = groups.get(key);
    if (group) group.push(item);
    else groups.set(key, [item]);
  }
  return groups;
}

/** The same merge inside the caller's transaction (an importer merging as its records say). */
export async function mergeInTransaction(client: PoolClient, kind: EntityKind, fromId: string, intoId: string): Promise<MergeOutcome> {
  if (fromId === intoId) return { merged: false, refused: `cannot merge ${kind} ${fromId} into itself` };
  // Lock both rows, in id order so that two opposite merges cannot deadlock.
  const { rows } = await client.query<Row>(
    `select public_id(id) as id, public_id(merged_into) as merged_into from ${TABLE[kind]}
      where id = any(entity_keys($1)) order by ${TABLE[kind]}.id for update`,
    [[fromId, intoId]],
  );
  const from = rows.find((row) => row.id === fromId);
  const into = rows.find((row) => row.id === intoId);
  if (!from) return { merged: false, refused: `${kind} ${fromId} not found` };
  if (!into) return { merged: false, refused: `${kind} ${intoId} not found` };
  if (from.merged_into === intoId) return { merged: false, alreadyDone: true };
  if (into.merged_into === fromId) {
    return { merged: false, refused: `${kind} ${intoId} was merged into ${fromId}; merging ${fromId} into it would make a cycle` };
  }
  if (into.merged_into) {
    return { merged: false, refused: `${kind} ${intoId} is a redirect to ${into.merged_into}; merge into ${into.merged_into} instead` };
  }
  if (from.merged_into) return { merged: false, refused: `${kind} ${fromId} is already merged into ${from.merged_into}` };
  if (kind === 'work') return (await mergeApartWorks(client, [{ fromId, intoId }]))[0]!;

  const touched = new Set([fromId, intoId]);
  const changes: Change[] = [];
  const moved = await MOVE[kind](client, fromId, intoId);
  for (const bookId of moved.books) {
    changes.push({ entity: 'book', id: bookId, operation: 'update' });
    touched.add(bookId);
  }
  for (const id of moved.alsoTouched) touched.add(id);

  await client.query(`update ${TABLE[kind]} set merged_into = entity_key($2), updated_at = now() where id = entity_key($1)`, [
    fromId,
    intoId,
  ]);
  const { rows: repointed } = await client.query<{ id: string }>(
    `update ${TABLE[kind]} set merged_into = entity_key($2), updated_at = now() where merged_into = entity_key($1) returning public_id(id) as id`,
    [fromId, intoId],
  );
  await client.query(`update ${TABLE[kind]} set updated_at = now() where id = entity_key($1)`, [intoId]);
  changes.push({ entity: kind, id: fromId, operation: 'merge', survivorId: intoId });
  for (const row of repointed) {
    changes.push({ entity: kind, id: row.id, operation: 'merge', survivorId: intoId });
    touched.add(row.id);
  }
  changes.push({ entity: kind, id: intoId, operation: 'update' });
  await recordChanges(client, changes);
  return { merged: true, changes, touched };
}

interface Moved {
  /** Live books whose record changed because of the move. */
  books: string[];
  /** Other entities whose answers show what moved (works and authors of those books). */
  alsoTouched: string[];
}

// A work's merge is mergeApartWorks's, for one.
const MOVE: Record<Exclude<EntityKind, 'work'>, (client: PoolClient, fromId: string, intoId: string) => Promise<Moved>> = {
  /** FROM's books are credited to INTO (once), and FROM's spellings become INTO's. */
  async author(client, fromId, intoId) {
    const { rows } = await client.query<{ book_id: string }>(
      'select public_id(book_id) as book_id from book_authors where author_id = entity_key($1)',
      [fromId],
    );
    await client.query(
      `update book_authors set author_id = entity_key($2)
        where author_id = entity_key($1) and book_id not in (select book_id from book_authors where author_id = entity_key($2))`,
      [fromId, intoId],
    );
    await client.query('delete from book_authors where author_id = entity_key($1)', [fromId]);
    await client.query('update author_names set author_id = entity_key($2) where author_id = entity_key($1)', [fromId, intoId]);
    const bookIds = rows.map((row) => row.book_id);
    const { rows: live } = await client.query<{ id: string; work_id: string }>(
      `update books set updated_at = now() where id = any(entity_keys($1)) and merged_into is null
       returning public_id(id) as id, public_id(work_id) as work_id`,
      [bookIds],
    );
    return { books: live.map((row) => row.id), alsoTouched: live.map((row) => row.work_id) };
  },

  /** Readers' ratings and credits of FROM move to INTO where INTO lacks them. */
  async book(client, fromId, intoId) {
    await client.query(
      `update ratings set book_id = entity_key($2)
        where book_id = entity_key($1) and user_id not in (select user_id from ratings where book_id = entity_key($2))`,
      [fromId, intoId],
    );
    await client.query('delete from ratings where book_id = entity_key($1)', [fromId]);
    await client.query(
      `insert into book_authors (book_id, author_id, position)
       select entity_key($2), author_id,
              (select coalesce(max(position), -1) from book_authors where book_id = entity_key($2)) + row_number() over (order by position)
         from book_authors
        where book_id = entity_key($1) and author_id not in (select author_id from book_authors where book_id = entity_key($2))`,
      [fromId, intoId],
    );
    const { rows } = await client.query<{ work_id: string }>(
      'select public_id(work_id) as work_id from books where id = any(entity_keys($1))',
      [[fromId, intoId]],
    );
    return { books: [], alsoTouched: [...rows.map((row) => row.work_id), ...(await authorsOfBooks(client, [fromId, intoId]))] };
  },
};

/** Authors credited on any of `bookIds` (live or not: their work counts change either way). */
async function authorsOfBooks(db: Queryable, bookIds: readonly string[]): Promise<string[]> {
  if (bookIds.length === 0) return [];
  const { rows } = await db.query<{ author_id: string }>(
    'select distinct public_id(author_id) as author_id from book_authors where book_id = any(entity_keys($1))',
    [bookIds],
  );
  return rows.map((row) => row.author_id);
}

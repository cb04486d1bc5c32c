import { randomBytes } from 'node:crypto';
import { writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createLogger } from '../../src/log.js';
import { changesSince } from '../../src/services/changeFeed.js';
import { ShortCache } from '../../src/services/shortCache.js';
import type { Pool } from '../../src/stores/postgres/pool.js';
import type { TestWorld } from './env.js';

/** What the Open Library import tests compare: the catalogue's tables and change feed, without the ids a run mints. */

// Each id as the identity key of what it names: an author's name key, a work's work key, a book's source key or ISBN.
const KEYED = `with k as (select id, name_key as k from authors union all select id, work_key from works union all select id, coalesce(source_key, isbn_13) from books)`;

/**
 * Every table an Open Library import writes, ids replaced by identity keys; the change feed counted by
 * entity and operation. Book updates are counted apart: the record path's batches commit before the
 * works' popularity is derived, so their books get an update for it; a first load derives it before
 * its commit, and its books need none (deriveWorkPopularityIn).
 */
export async function catalogueFingerprint(db: Pool): Promise<Record<string, unknown[]>> {
  const query = async (sql: string) => (await db.query<Record<string, unknown>>(`${KEYED} ${sql}`)).rows;
  return {
    authors: await query(
      `select a.name_key, a.name, a.bio, a.birth_date, a.death_date, a.alternate_names, m.k as merged_into, a.deleted_at is not null as deleted
         from authors a left join k m on m.id = a.merged_into order by 1`,
    ),
    works: await query(
      `select w.work_key, w.title, w.subtitle, w.subjects, w.description, w.original_year, w.cover_url, w.kind, m.k as merged_into, w.deleted_at is not null as deleted
         from works w left join k m on m.id = w.merged_into order by 1`,
    ),
    books: await query(
      `select coalesce(b.source_key, b.isbn_13) as identity, b.isbn_13, b.isbn_10, b.source_key, w.k as work, b.title, b.subtitle, b.series, b.series_number,
              b.publisher, b.year, b.language, b.pages, b.cover_url, b.popularity, b.average_rating, b.subjects, b.description, b.physical_format,
              m.k as merged_into, b.deleted_at is not null as deleted
         from books b join k w on w.id = b.work_id left join k m on m.id = b.merged_into order by 1`,
    ),
    credits: await query(
      'select b.k as book, a.k as author, ba.position from book_authors ba join k b on b.id = ba.book_id join k a on a.id = ba.author_id order by 1, 3',
    ),
    externalIds: await query('select e.k as entity, x.scheme, x.value from external_ids x join k e on e.id = x.entity_id order by 1, 2, 3'),
    keys: await query(
      'select r.key, r.revision, r.state, e.k as entity, r.digest, r.redirect_to from openlibrary_records r left join k e on e.id = r.entity_id order by 1',
    ),
    // What readers read: the counts by work key and day as imported, and what was derived per work.
    readerCounts: (await db.query('select * from openlibrary_reader_counts order by work_key')).rows,
    readingLogDays: (
      await db.query("select work_key, to_char(day, 'YYYY-MM-DD') as day, added from openlibrary_reading_log_days order by 1, 2")
    ).rows,
    workReaders: await query(
      'select w.k as work, r.want_to_read, r.currently_reading, r.already_read, r.rated from work_readers r join k w on w.id = r.work_id order by 1',
    ),
    trending: await query('select t.period, w.k as work, t.added from trending_works t join k w on w.id = t.work_id order by 1, 2'),
    changes: (
      await db.query(
        "select entity, operation, count(*)::int as n from changes where (entity, operation) <> ('book', 'update') group by 1, 2 order by 1, 2",
      )
    ).rows,
    bookUpdates: (await db.query("select count(*)::int as n from changes where (entity, operation) = ('book', 'update')")).rows,
    spellings: (await db.query('select count(*)::int as n from author_names')).rows,
  };
}

export const lastChange = async (db: Pool): Promise<number> =>
  Number((await db.query<{ seq: string }>('select coalesce(max(seq), 0) as seq from changes')).rows[0]!.seq);

/** The changes after `seq`, ids as identity keys, in a stable order (batches may group them differently). */
export async function changesAfter(db: Pool, seq: number): Promise<unknown[]> {
  const { rows } = await db.query<Record<string, unknown>>(
    `${KEYED} select c.entity, e.k as entity_key, c.operation, s.k as survivor from changes c join k e on e.id = c.entity_id left join k s on s.id = c.survivor_id
      where c.seq > $1 order by 1, 2, 3, 4`,
    [seq],
  );
  return rows;
}

/**
 * The change feed after `since` as a client reads it (the service behind GET /v1/changes, page after
 * page, in order), told per entity: each entity's operations in the order the feed gives them, ids
 * as identity keys. An update right after an insert or update of the same entity is one for a client,
 * who reads the record again either way. Also the merges whose survivor the feed had not named before
 * (a client could not follow them).
 */
export async function feedAsClientsRead(
  world: TestWorld,
  since: number,
): Promise<{ byEntity: Record<string, string[]>; survivorsUnseen: string[] }> {
  const keys = new Map(
    (await world.db.query<{ id: string; k: string }>(`${KEYED} select public_id(id) as id, k from k`)).rows.map((row) => [row.id, row.k]),
  );
  const shortCache = new ShortCache(world.cache, 0, createLogger('silent'));
  const byEntity: Record<string, string[]> = {};
  const survivorsUnseen: string[] = [];
  // From the start, so that a survivor the catalogue had before `since` counts as seen.
  const seen = new Set<string>();
  let cursor = '0';
  for (;;) {
    const page = await changesSince(world.db, shortCache, cursor, '1000');
    for (const change of page.changes) {
      const entity = `${change.entity} ${keys.get(change.id)}`;
      const survivor = change.survivor_id ? `${change.entity} ${keys.get(change.survivor_id)}` : null;
      if (survivor && !seen.has(survivor)) survivorsUnseen.push(`${entity} into ${survivor}`);
      seen.add(entity);
      if (change.seq <= since) continue;
      const operations = (byEntity[entity] ??= []);
      const last = operations.at(-1);
      if (change.operation === 'update' && (last === 'insert' || last === 'update')) continue;
      operations.push(survivor ? `merge into ${keys.get(change.survivor_id!)}` : change.operation);
    }
    if (!page.has_more) return { byEntity, survivorsUnseen };
    cursor = page.next;
  }
}

/** Lines of an Open Library dump written for a test: an author, a work, an edition (revision 1 unless given). */
const dumpLine = (type: string, key: string, json: object, revision = 1): string =>
  `${type}\t${key}\t${revision}\t2024-01-01T00:00:00\t${JSON.stringify({ ...json, key, revision })}`;
export const olAuthor = (key: string, name: string): string =>
  dumpLine('/type/author', `/authors/${key}`, { name, type: { key: '/type/author' } });
export const olWork = (key: string, title: string, authorKey: string): string =>
  dumpLine('/type/work', `/works/${key}`, {
    title,
    type: { key: '/type/work' },
    authors: [{ type: { key: '/type/author_role' }, author: { key: `/authors/${authorKey}` } }],
  });
export const olEdition = (key: string, title: string, isbn: string, workKey: string, authorKey: string): string =>
  dumpLine('/type/edition', `/books/${key}`, {
    title,
    isbn_13: [isbn],
    type: { key: '/type/edition' },
    works: [{ key: `/works/${workKey}` }],
    authors: [{ key: `/authors/${authorKey}` }],
  });

/** A dump file of these lines in the temporary directory (the caller removes it). */
export async function olDumpFile(lines: readonly string[]): Promise<string> {
  const path = join(tmpdir(), `bookmeta-ol_dump_${randomBytes(6).toString('hex')}.txt`);
  await writeFile(path, `${lines.join('\n')}\n`);
  return path;
}

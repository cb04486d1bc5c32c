import type { Isbn } from '../../../domain/isbn.js';
import { newId } from '../../../domain/ids.js';
import { preferredName } from '../../../domain/names.js';
import { recordChanges, type Change } from '../../../stores/postgres/changes.js';
import { withTransaction, type Pool, type PoolClient } from '../../../stores/postgres/pool.js';

/**
 * Write side of the catalogue for importers: upserts a batch of editions with their authors and
 * works in one transaction, records every change in the change sequence, and reports which
 * entities it touched so the caller can drop their cached answers.
 */

/** Fields of a book an importer may supply; absent means "this source does not know". */
export interface EditionFields {
  title: string;
  subtitle: string | null;
  series: string | null;
  series_number: string | null;
  publisher: string | null;
  year: number | null;
  language: string | null;
  pages: number | null;
  cover_url: string | null;
  popularity: number;
  average_rating: number | null;
}

export type EditionField = keyof EditionFields;
const EDITION_FIELDS: readonly EditionField[] = [
  'title', 'subtitle', 'series', 'series_number', 'publisher', 'year', 'language', 'pages', 'cover_url', 'popularity', 'average_rating',
];

export interface EditionInput {
  /** Line of the source file, for the report. */
  line: number;
  isbn: Isbn | null;
  /** Identity in the source for a row without an ISBN ("goodreads:2767052"). */
  sourceKey: string | null;
  fields: Partial<EditionFields> & { title: string };
  /** Author names in credited order, already cleaned. */
  authors: { name: string; key: string }[];
  work: { key: string; title: string; originalYear: number | null };
}

/**
 * What a source is trusted for. Fields it owns overwrite what is stored (a corrected source file
 * corrects the catalogue); other fields only fill gaps; a value the source lacks never erases one.
 * Because no two sources own the same field, importing them again in any order changes nothing.
 */
export interface SourcePolicy {
  owns: ReadonlySet<EditionField | 'authors'>;
}

export interface BatchOutcome {
  inserted: number;
  updated: number;
  unchanged: number;
  /** Rows whose book is a merged redirect: nothing is written to a redirect. */
  skippedMerged: number;
  changes: Change[];
  /** Every book, work and author whose cached answers are stale now. */
  touched: Set<string>;
}

type BookRow = EditionFields & {
  id: string;
  isbn_13: string | null;
  isbn_10: string | null;
  source_key: string | null;
  work_id: string;
  merged_into: string | null;
};

const identity = (input: { isbn: Isbn | null; sourceKey: string | null }): string =>
  input.isbn ? `isbn:${input.isbn.isbn13}` : `source:${input.sourceKey}`;
const rowIdentity = (row: BookRow): string[] => [
  ...(row.isbn_13 ? [`isbn:${row.isbn_13}`] : []),
  ...(row.source_key ? [`source:${row.source_key}`] : []),
];

export async function upsertEditions(pool: Pool, inputs: readonly EditionInput[], policy: SourcePolicy): Promise<BatchOutcome> {
  // One row per book: a second row for the same ISBN in one batch adds nothing the first did not.
  const unique = [...new Map(inputs.map((input) => [identity(input), input])).values()];
  return withTransaction(pool, async (client) => {
    const outcome: BatchOutcome = { inserted: 0, updated: 0, unchanged: inputs.length - unique.length, skippedMerged: 0, changes: [], touched: new Set() };
    const authorIds = await resolveAuthors(client, unique, outcome);
    const existing = await existingBooks(client, unique);
    const fresh = unique.filter((input) => !existing.has(identity(input)));
    const workIds = await resolveWorks(client, fresh, outcome);

    await insertBooks(client, fresh, workIds, authorIds, outcome);
    for (const input of unique) {
      const row = existing.get(identity(input));
      if (row) await updateBook(client, row, input, policy, authorIds, outcome);
    }
    await recordChanges(client, outcome.changes);
    return outcome;
  });
}

/** Author ids for every name in the batch, creating authors and spellings that are new. */
async function resolveAuthors(client: PoolClient, inputs: readonly EditionInput[], outcome: BatchOutcome): Promise<Map<string, string>> {
  const names = new Map<string, string>(); // name -> key
  for (const input of inputs) for (const author of input.authors) names.set(author.name, author.key);
  const keys = [...new Set(names.values())];
  const idByKey = new Map<string, string>();
  if (keys.length === 0) return idByKey;

  const known = await client.query<{ name_key: string; author_id: string }>(
    'select distinct on (name_key) name_key, author_id from author_names where name_key = any($1)',
    [keys],
  );
  for (const row of known.rows) idByKey.set(row.name_key, row.author_id);

  const missing = keys.filter((key) => !idByKey.has(key));
  if (missing.length > 0) {
    const firstName = new Map<string, string>();
    for (const [name, key] of names) {
      const other = firstName.get(key);
      firstName.set(key, other === undefined ? name : preferredName(other, name));
    }
    const created = await client.query<{ id: string; name_key: string }>(
      `insert into authors (id, name, name_key)
       select * from unnest($1::text[], $2::text[], $3::text[])
       on conflict (name_key) do nothing
       returning id, name_key`,
      [missing.map(() => newId('author')), missing.map((key) => firstName.get(key)!), missing],
    );
    for (const row of created.rows) {
      idByKey.set(row.name_key, row.id);
      outcome.changes.push({ entity: 'author', id: row.id, operation: 'insert' });
      outcome.touched.add(row.id);
    }
    // Created meanwhile by a concurrent import: take theirs.
    const raced = missing.filter((key) => !idByKey.has(key));
    if (raced.length > 0) {
      const { rows } = await client.query<{ id: string; name_key: string }>(
        'select coalesce(merged_into, id) as id, name_key from authors where name_key = any($1)',
        [raced],
      );
      for (const row of rows) idByKey.set(row.name_key, row.id);
    }
  }

  // Remember every spelling; the display name is the preferred one of all spellings seen.
  const spellings = [...names].map(([name, key]) => ({ name, authorId: idByKey.get(key)! }));
  const added = await client.query<{ name: string; author_id: string }>(
    `insert into author_names (name, name_key, author_id)
     select * from unnest($1::text[], $2::text[], $3::text[])
     on conflict (name) do nothing
     returning name, author_id`,
    [spellings.map((s) => s.name), spellings.map((s) => names.get(s.name)!), spellings.map((s) => s.authorId)],
  );
  const newSpellings = added.rows.filter((row) => !outcome.touched.has(row.author_id));
  if (newSpellings.length > 0) {
    const { rows: current } = await client.query<{ id: string; name: string }>('select id, name from authors where id = any($1)', [
      [...new Set(newSpellings.map((row) => row.author_id))],
    ]);
    const displayName = new Map(current.map((row) => [row.id, row.name]));
    for (const spelling of newSpellings) displayName.set(spelling.author_id, preferredName(displayName.get(spelling.author_id)!, spelling.name));
    for (const row of current) {
      const name = displayName.get(row.id)!;
      // A new spelling is a change of the author record (alternate names) even if the display name stays.
      if (name !== row.name) await client.query('update authors set name = $2, updated_at = now() where id = $1', [row.id, name]);
      else await client.query('update authors set updated_at = now() where id = $1', [row.id]);
      outcome.changes.push({ entity: 'author', id: row.id, operation: 'update' });
      outcome.touched.add(row.id);
    }
  }
  return idByKey;
}

async function existingBooks(client: PoolClient, inputs: readonly EditionInput[]): Promise<Map<string, BookRow>> {
  const isbns = inputs.flatMap((input) => (input.isbn ? [input.isbn.isbn13] : []));
  const sourceKeys = inputs.flatMap((input) => (input.isbn ? [] : [input.sourceKey!]));
  const { rows } = await client.query<BookRow>(
    `select id, isbn_13, isbn_10, source_key, work_id, merged_into, ${EDITION_FIELDS.join(', ')}
       from books where isbn_13 = any($1) or source_key = any($2)`,
    [isbns, sourceKeys],
  );
  const byIdentity = new Map<string, BookRow>();
  for (const row of rows) for (const key of rowIdentity(row)) byIdentity.set(key, row);
  return byIdentity;
}

/** Work ids for new editions by grouping key, creating works that are new. */
async function resolveWorks(client: PoolClient, inputs: readonly EditionInput[], outcome: BatchOutcome): Promise<Map<string, string>> {
  const works = new Map(inputs.map((input) => [input.work.key, input.work]));
  const idByKey = new Map<string, string>();
  if (works.size === 0) return idByKey;
  const keys = [...works.keys()];
  const created = await client.query<{ id: string }>(
    `insert into works (id, work_key, title, original_year)
     select * from unnest($1::text[], $2::text[], $3::text[], $4::int[])
     on conflict (work_key) do nothing
     returning id`,
    [keys.map(() => newId('work')), keys, keys.map((key) => works.get(key)!.title), keys.map((key) => works.get(key)!.originalYear)],
  );
  for (const row of created.rows) {
    outcome.changes.push({ entity: 'work', id: row.id, operation: 'insert' });
    outcome.touched.add(row.id);
  }
  const { rows } = await client.query<{ id: string; work_key: string; merged_into: string | null }>(
    'select id, work_key, merged_into from works where work_key = any($1)',
    [keys],
  );
  // A merged work's key still groups editions: they join the survivor.
  for (const row of rows) idByKey.set(row.work_key, row.merged_into ?? row.id);
  return idByKey;
}

async function insertBooks(
  client: PoolClient,
  inputs: readonly EditionInput[],
  workIds: Map<string, string>,
  authorIds: Map<string, string>,
  outcome: BatchOutcome,
): Promise<void> {
  if (inputs.length === 0) return;
  const rows = inputs.map((input) => ({
    id: newId('book'),
    work_id: workIds.get(input.work.key)!,
    isbn_13: input.isbn?.isbn13 ?? null,
    isbn_10: input.isbn?.isbn10 ?? null,
    source_key: input.isbn ? null : input.sourceKey,
    popularity: 0,
    ...input.fields,
  }));
  const columns = ['id', 'work_id', 'isbn_13', 'isbn_10', 'source_key', ...EDITION_FIELDS];
  await client.query(
    `insert into books (${columns.join(', ')})
     select ${columns.join(', ')} from json_populate_recordset(null::books, $1)`,
    [JSON.stringify(rows)],
  );
  await setAuthors(client, rows.map((row, index) => ({ bookId: row.id, authorIds: inputs[index]!.authors.map((author) => authorIds.get(author.key)!) })));
  rows.forEach((row) => {
    outcome.inserted += 1;
    outcome.changes.push({ entity: 'book', id: row.id, operation: 'insert' });
    outcome.touched.add(row.id).add(row.work_id);
  });
  for (const input of inputs) for (const author of input.authors) outcome.touched.add(authorIds.get(author.key)!);
}

async function updateBook(
  client: PoolClient,
  row: BookRow,
  input: EditionInput,
  policy: SourcePolicy,
  authorIds: Map<string, string>,
  outcome: BatchOutcome,
): Promise<void> {
  if (row.merged_into) {
    outcome.skippedMerged += 1;
    return;
  }
  const changed: Partial<Record<EditionField, unknown>> = {};
  for (const field of EDITION_FIELDS) {
    if (!(field in input.fields)) continue;
    const offered = input.fields[field] ?? null;
    const stored = row[field] ?? null;
    // A null offer means the source does not know, never that the value should go.
    const wanted = offered !== null && (policy.owns.has(field) || stored === null) ? offered : stored;
    if (wanted !== stored) changed[field] = wanted;
  }
  const { rows: currentAuthors } = await client.query<{ author_id: string }>(
    'select author_id from book_authors where book_id = $1 order by position',
    [row.id],
  );
  const offeredAuthors = [...new Set(input.authors.map((author) => authorIds.get(author.key)!))];
  const current = currentAuthors.map((author) => author.author_id);
  const authorsWanted = policy.owns.has('authors') || current.length === 0 ? offeredAuthors : current;
  const authorsChanged = authorsWanted.join() !== current.join();

  if (Object.keys(changed).length === 0 && !authorsChanged) {
    outcome.unchanged += 1;
    return;
  }
  const fields = Object.keys(changed) as EditionField[];
  await client.query(
    `update books set ${[...fields.map((field, index) => `${field} = $${index + 2}`), 'updated_at = now()'].join(', ')} where id = $1`,
    [row.id, ...fields.map((field) => changed[field])],
  );
  if (authorsChanged) {
    await client.query('delete from book_authors where book_id = $1', [row.id]);
    await setAuthors(client, [{ bookId: row.id, authorIds: authorsWanted }]);
    for (const id of current) outcome.touched.add(id);
  }
  outcome.updated += 1;
  outcome.changes.push({ entity: 'book', id: row.id, operation: 'update' });
  outcome.touched.add(row.id).add(row.work_id);
  for (const id of authorsWanted) outcome.touched.add(id);
}

async function setAuthors(client: PoolClient, links: { bookId: string; authorIds: string[] }[]): Promise<void> {
  const rows = links.flatMap(({ bookId, authorIds }) => [...new Set(authorIds)].map((authorId, position) => ({ bookId, authorId, position })));
  if (rows.length === 0) return;
  await client.query(
    `insert into book_authors (book_id, author_id, position)
     select * from unnest($1::text[], $2::text[], $3::smallint[])`,
    [rows.map((row) => row.bookId), rows.map((row) => row.authorId), rows.map((row) => row.position)],
  );
}

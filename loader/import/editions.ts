import type { Isbn } from '../../src/domain/isbn.js';
import { newId } from '../../src/domain/ids.js';
import { preferredName } from '../../src/domain/names.js';
import type { WorkKind } from '../../src/domain/titles.js';
import { recordChanges, type Change } from '../../src/stores/postgres/changes.js';
import { withTransaction, type Pool, type PoolClient } from '../../src/stores/postgres/pool.js';
import {
  EDITION_FIELDS,
  authorIdsByKey,
  authorNames,
  creditAuthors,
  creditedAuthorIds,
  editionsByIsbnOrSourceKey,
  insertAuthors,
  insertEditions,
  insertSpellings,
  insertWorks,
  survivingAuthorIdsByKey,
  touchAuthor,
  uncreditAuthors,
  updateAuthorName,
  updateEdition,
  worksByKey,
  type EditionField,
  type EditionFields,
  type StoredEdition,
} from '../stores/postgres/editions.js';
import { claimCredits, noteToResolve } from '../stores/postgres/authors.js';

/**
 * How a batch of editions enters the catalogue: one transaction that upserts the editions with
 * their authors and works, records every change in the change sequence, and reports which
 * entities it touched so the caller can drop their cached answers. The rules are here: spellings
 * with one identity key are one author, shown by the preferred spelling; a source's fields win or
 * only fill gaps by its policy; nothing is written to a merged edition.
 */

export interface EditionInput {
  /** Line of the source file, for the report. */
  line: number;
  isbn: Isbn | null;
  /** Identity in the source for a row without an ISBN ("goodreads:2767052"). */
  sourceKey: string | null;
  fields: Partial<EditionFields> & { title: string };
  /** Author names in credited order, already cleaned, each with its identity key (authorKey). */
  authors: { name: string; key: string }[];
  work: { key: string; title: string; originalYear: number | null; kind: WorkKind };
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

const identity = (input: { isbn: Isbn | null; sourceKey: string | null }): string =>
  input.isbn ? `isbn:${input.isbn.isbn13}` : `source:${input.sourceKey}`;
const storedIdentity = (row: StoredEdition): string[] => [
  ...(row.isbn_13 ? [`isbn:${row.isbn_13}`] : []),
  ...(row.source_key ? [`source:${row.source_key}`] : []),
];

export async function upsertEditions(pool: Pool, inputs: readonly EditionInput[], policy: SourcePolicy): Promise<BatchOutcome> {
  // One row per book: a second row for the same ISBN in one batch adds nothing the first did not.
  const unique = [...new Map(inputs.map((input) => [identity(input), input])).values()];
  return withTransaction(pool, async (client) => {
    const outcome: BatchOutcome = {
      inserted: 0,
      updated: 0,
      unchanged: inputs.length - unique.length,
      skippedMerged: 0,
      changes: [],
      touched: new Set(),
    };
    const authorIds = await resolveAuthors(client, unique, outcome);
    const existing = await existingEditions(client, unique);
    const fresh = unique.filter((input) => !existing.has(identity(input)));
    const workIds = await resolveWorks(client, fresh, outcome);

    await addEditions(client, fresh, workIds, authorIds, outcome);
    for (const input of unique) {
      const row = existing.get(identity(input));
      if (row) await reviseEdition(client, row, input, policy, authorIds, outcome);
    }
    await noteToResolve(client, outcome.touched);
    await recordChanges(client, outcome.changes);
    return outcome;
  });
}

/** Author ids for every identity key in the batch, creating authors and spellings that are new. */
async function resolveAuthors(client: PoolClient, inputs: readonly EditionInput[], outcome: BatchOutcome): Promise<Map<string, string>> {
  const names = new Map<string, string>(); // name -> key
  for (const input of inputs) for (const author of input.authors) names.set(author.name, author.key);
  const keys = [...new Set(names.values())];
  if (keys.length === 0) return new Map();
  const idByKey = await authorIdsByKey(client, keys);

  const missing = keys.filter((key) => !idByKey.has(key));
  if (missing.length > 0) {
    // A new author is shown by the preferred one of its spellings in the batch.
    const displayName = new Map<string, string>();
    for (const [name, key] of names) {
      const other = displayName.get(key);
      displayName.set(key, other === undefined ? name : preferredName(other, name));
    }
    const created = await insertAuthors(
      client,
      missing.map((key) => ({ id: newId('author'), name: displayName.get(key)!, key })),
    );
    for (const [key, id] of created) {
      idByKey.set(key, id);
      outcome.changes.push({ entity: 'author', id, operation: 'insert' });
      outcome.touched.add(id);
    }
    // Created meanwhile by a concurrent import: take theirs.
    const raced = missing.filter((key) => !idByKey.has(key));
    if (raced.length > 0) for (const [key, id] of await survivingAuthorIdsByKey(client, raced)) idByKey.set(key, id);
  }

  // Remember every spelling; the display name is the preferred one of all spellings seen.
  const added = await insertSpellings(
    client,
    [...names].map(([name, key]) => ({ name, key, authorId: idByKey.get(key)! })),
  );
  const newSpellings = added.filter((spelling) => !outcome.touched.has(spelling.authorId));
  if (newSpellings.length > 0) {
    const current = await authorNames(client, [...new Set(newSpellings.map((spelling) => spelling.authorId))]);
    const displayName = new Map(current.map((row) => [row.id, row.name]));
    for (const spelling of newSpellings)
      displayName.set(spelling.authorId, preferredName(displayName.get(spelling.authorId)!, spelling.name));
    for (const row of current) {
      const name = displayName.get(row.id)!;
      // A new spelling is a change of the author record (alternate names) even if the display name stays.
      if (name !== row.name) await updateAuthorName(client, row.id, name);
      else await touchAuthor(client, row.id);
      outcome.changes.push({ entity: 'author', id: row.id, operation: 'update' });
      outcome.touched.add(row.id);
    }
  }
  return idByKey;
}

async function existingEditions(client: PoolClient, inputs: readonly EditionInput[]): Promise<Map<string, StoredEdition>> {
  const isbns = inputs.flatMap((input) => (input.isbn ? [input.isbn.isbn13] : []));
  const sourceKeys = inputs.flatMap((input) => (input.isbn ? [] : [input.sourceKey!]));
  const byIdentity = new Map<string, StoredEdition>();
  for (const row of await editionsByIsbnOrSourceKey(client, isbns, sourceKeys))
    for (const key of storedIdentity(row)) byIdentity.set(key, row);
  return byIdentity;
}

/** Work ids for new editions by grouping key, creating works that are new. */
async function resolveWorks(client: PoolClient, inputs: readonly EditionInput[], outcome: BatchOutcome): Promise<Map<string, string>> {
  const works = new Map(inputs.map((input) => [input.work.key, input.work]));
  const idByKey = new Map<string, string>();
  if (works.size === 0) return idByKey;
  const keys = [...works.keys()];
  const created = await insertWorks(
    client,
    keys.map((key) => ({ id: newId('work'), ...works.get(key)! })),
  );
  for (const id of created) {
    outcome.changes.push({ entity: 'work', id, operation: 'insert' });
    outcome.touched.add(id);
  }
  // A merged work's key still groups editions: they join the survivor.
  for (const row of await worksByKey(client, keys)) idByKey.set(row.work_key, row.merged_into ?? row.id);
  return idByKey;
}

async function addEditions(
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
  await insertEditions(client, rows);
  await creditAuthors(
    client,
    rows.map((row, index) => ({ bookId: row.id, authorIds: inputs[index]!.authors.map((author) => authorIds.get(author.key)!) })),
  );
  rows.forEach((row) => {
    outcome.inserted += 1;
    outcome.changes.push({ entity: 'book', id: row.id, operation: 'insert' });
    outcome.touched.add(row.id).add(row.work_id);
  });
  for (const input of inputs) for (const author of input.authors) outcome.touched.add(authorIds.get(author.key)!);
}

async function reviseEdition(
  client: PoolClient,
  row: StoredEdition,
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
    // By value: some fields are arrays (Goodreads' stars, subjects).
    if (JSON.stringify(wanted) !== JSON.stringify(stored)) changed[field] = wanted;
  }
  const current = await creditedAuthorIds(client, row.id);
  const offeredAuthors = [...new Set(input.authors.map((author) => authorIds.get(author.key)!))];
  const authorsWanted = policy.owns.has('authors') || current.length === 0 ? offeredAuthors : current;
  const authorsChanged = authorsWanted.join() !== current.join();
  await claimCredits(client, [{ bookId: row.id, authorIds: [...offeredAuthors, ...current].filter((id) => !authorsWanted.includes(id)) }]);

  if (Object.keys(changed).length === 0 && !authorsChanged) {
    outcome.unchanged += 1;
    return;
  }
  await updateEdition(client, row.id, changed);
  if (authorsChanged) {
    await uncreditAuthors(client, row.id);
    await creditAuthors(client, [{ bookId: row.id, authorIds: authorsWanted }]);
    for (const id of current) outcome.touched.add(id);
  }
  outcome.updated += 1;
  outcome.changes.push({ entity: 'book', id: row.id, operation: 'update' });
  outcome.touched.add(row.id).add(row.work_id);
  for (const id of authorsWanted) outcome.touched.add(id);
}

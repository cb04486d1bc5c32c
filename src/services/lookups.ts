import { z } from 'zod/v4';
import { badRequest, gone, notFound } from '../errors.js';
import { kindOfId, type EntityKind } from '../domain/ids.js';
import { parseIsbn } from '../domain/isbn.js';
import type { AuthorRecord, BookRecord, Lookup, WorkRecord } from '../domain/records.js';
import { quoted } from '../domain/text.js';
import type { PointReads } from '../stores/postgres/pointReads.js';

/**
 * Point lookups shared by the HTTP routes and the MCP tools. A lookup either finds a record
 * (with the ids of every entity it shows, for cache invalidation) or finds that the id was merged.
 */
export type Resolved<T> = { record: T; shows: string[] } | Merged;

/** A merged id (or the ISBN of a merged edition): the final survivor, and its URL (the 301's Location). */
export interface Merged {
  mergedInto: string;
  location: string;
}

/** The body of a lookup's 301 for a merged id. */
export const mergedBody = z
  .object({
    merged_into: z.string().meta({ description: "The final survivor's id." }),
    location: z.string().meta({ description: 'Its URL, as in `Location`.' }),
  })
  .meta({ id: 'Merged' });

export const isMerged = (answer: object): answer is Merged => 'mergedInto' in answer;

// Merges are flattened to one hop (see stores/postgres/merges.ts); a second one only happens when a
// merge commits between the two reads.
const MAX_MERGE_HOPS = 3;

/**
 * Follows a merged id to its survivor the way an HTTP client follows the 301: `survivor` answers
 * what the survivor's Location answers, until that is a record. Says which id it ended at.
 */
export async function followMerges<A extends object>(
  asked: string,
  first: A | Merged,
  survivor: (merged: Merged) => Promise<A | Merged>,
): Promise<{ answer: A; mergedInto: string | null }> {
  let answer = first;
  let mergedInto: string | null = null;
  for (let hops = 0; isMerged(answer); hops++) {
    if (hops === MAX_MERGE_HOPS) throw new Error(`merge chain of ${asked} is longer than ${MAX_MERGE_HOPS} hops`);
    mergedInto = answer.mergedInto;
    answer = await survivor(answer);
  }
  return { answer, mergedInto };
}

/** The families of records a GET answers by key: `/v1/isbn/<isbn>`, `/v1/books/<id>`, `/v1/works/<id>`, `/v1/authors/<id>`. */
export type PointFamily = 'isbn' | 'books' | 'works' | 'authors';

/** The URL path at which GET answers `key` of `family`, the key as the client spells it: a 301's Location, and the point cache's key. */
export const recordPath = (family: PointFamily, key: string): string => `/v1/${family}/${encodeURIComponent(key)}`;

/** A lookup's record, or its 301; else the 404 (`missing`) or the 410 of a deleted record (`named` was deleted). */
function resolve<T>(
  lookup: Lookup<T>,
  family: Exclude<PointFamily, 'isbn'>,
  named: string,
  shows: (record: T) => string[],
  missing = `${named} not found`,
): Resolved<T> {
  if (!lookup) throw notFound(missing);
  if ('deleted' in lookup) throw gone(`${named} was deleted: its source withdrew the record, so it is no longer in the catalogue`);
  if ('mergedInto' in lookup) return { mergedInto: lookup.mergedInto, location: recordPath(family, lookup.mergedInto) };
  return { record: lookup.found, shows: shows(lookup.found) };
}

const ID_EXAMPLES: Record<EntityKind, string> = { book: 'bk_5n1x7q0c2r9a', work: 'wk_8d2m4q6s0v1x', author: 'au_3k8d0f1m2x7p' };

/**
 * Refuses, before any store sees it, text that cannot be an id of `kind`: the wrong prefix, NUL or
 * other control characters, any other length. A store never has to cope with such bytes, and one
 * such request can never fail the others that share its batched read.
 */
export function requireId(kind: EntityKind, id: string): string {
  if (kindOfId(id) !== kind) throw badRequest(`invalid ${kind} id: ${quoted(id)} is not of the form ${ID_EXAMPLES[kind]}`);
  return id;
}

// A book's record shows its work's readers and rating: a change to those drops it with the work's.
const bookShows = (book: BookRecord): string[] => [book.id, book.work_id, ...book.authors.map((author) => author.id)];

/**
 * The longest identifier argument read (an ISBN with its hyphens and spaces; ids are shorter still):
 * text past it is refused before it is parsed, cached or echoed.
 */
export const IDENTIFIER_MAX_LENGTH = 64;

/** The ISBN `text` spells, or the 400 of text that spells none (checked before any store sees it, as ids are). */
export function requireIsbn(text: string): NonNullable<ReturnType<typeof parseIsbn>> {
  if (text.length > IDENTIFIER_MAX_LENGTH)
    throw badRequest(`invalid ISBN: ${quoted(text)} is longer than ${IDENTIFIER_MAX_LENGTH} characters`);
  const isbn = parseIsbn(text);
  if (!isbn) throw badRequest(`invalid ISBN: ${quoted(text)} is not a valid ISBN-10 or ISBN-13`);
  return isbn;
}

export async function bookByIsbn(reads: PointReads, text: string): Promise<Resolved<BookRecord>> {
  const isbn = requireIsbn(text);
  return resolve(
    await reads.bookByIsbn13(isbn.isbn13),
    'books',
    `the book with ISBN ${isbn.isbn13}`,
    bookShows,
    `no book with ISBN ${isbn.isbn13}`,
  );
}

export async function bookById(reads: PointReads, id: string): Promise<Resolved<BookRecord>> {
  requireId('book', id);
  return resolve(await reads.book(id), 'books', `book ${id}`, bookShows);
}

export async function workById(reads: PointReads, id: string): Promise<Resolved<WorkRecord>> {
  requireId('work', id);
  return resolve(await reads.work(id), 'works', `work ${id}`, (work) => [
    work.id,
    ...work.editions.map((edition) => edition.id),
    ...work.authors.map((author) => author.id),
  ]);
}

export async function authorById(reads: PointReads, id: string): Promise<Resolved<AuthorRecord>> {
  requireId('author', id);
  return resolve(await reads.author(id), 'authors', `author ${id}`, (author) => [author.id, ...author.works.map((work) => work.id)]);
}

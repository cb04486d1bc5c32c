import { badRequest, notFound } from '../errors.js';
import { parseIsbn } from '../domain/isbn.js';
import type { AuthorRecord, BookRecord, Lookup, WorkRecord } from '../domain/records.js';
import type { PointReads } from '../stores/postgres/pointReads.js';

/**
 * Point lookups shared by the HTTP routes and the MCP tools. A lookup either finds a record
 * (with the ids of every entity it shows, for cache invalidation) or finds that the id was merged.
 */
export type Resolved<T> = { record: T; shows: string[] } | { mergedInto: string; location: string };

function resolve<T>(lookup: Lookup<T>, family: string, missing: string, shows: (record: T) => string[]): Resolved<T> {
  if (!lookup) throw notFound(missing);
  if ('mergedInto' in lookup) return { mergedInto: lookup.mergedInto, location: `/v1/${family}/${lookup.mergedInto}` };
  return { record: lookup.found, shows: shows(lookup.found) };
}

const bookShows = (book: BookRecord): string[] => [book.id, ...book.authors.map((author) => author.id)];

export async function bookByIsbn(reads: PointReads, text: string): Promise<Resolved<BookRecord>> {
  const isbn = parseIsbn(text);
  if (!isbn) throw badRequest(`invalid ISBN: "${text}" is not a valid ISBN-10 or ISBN-13`);
  return resolve(await reads.bookByIsbn13(isbn.isbn13), 'books', `no book with ISBN ${isbn.isbn13}`, bookShows);
}

export async function bookById(reads: PointReads, id: string): Promise<Resolved<BookRecord>> {
  return resolve(await reads.book(id), 'books', `book ${id} not found`, bookShows);
}

export async function workById(reads: PointReads, id: string): Promise<Resolved<WorkRecord>> {
  return resolve(await reads.work(id), 'works', `work ${id} not found`, (work) => [
    work.id,
    ...work.editions.map((edition) => edition.id),
    ...work.authors.map((author) => author.id),
  ]);
}

export async function authorById(reads: PointReads, id: string): Promise<Resolved<AuthorRecord>> {
  return resolve(await reads.author(id), 'authors', `author ${id} not found`, (author) => [
    author.id,
    ...author.works.map((work) => work.id),
  ]);
}

import { badRequest, notFound } from '../errors.js';
import { parseIsbn } from '../domain/isbn.js';
import type { AuthorRecord, BookRecord, Lookup, WorkRecord } from '../domain/records.js';
import { findAuthor, findBook, findBookByIsbn13, findWork } from '../stores/postgres/catalogue.js';
import type { Queryable } from '../stores/postgres/pool.js';

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

export async function bookByIsbn(db: Queryable, text: string): Promise<Resolved<BookRecord>> {
  const isbn = parseIsbn(text);
  if (!isbn) throw badRequest(`invalid ISBN: "${text}" is not a valid ISBN-10 or ISBN-13`);
  return resolve(await findBookByIsbn13(db, isbn.isbn13), 'books', `no book with ISBN ${isbn.isbn13}`, bookShows);
}

export async function bookById(db: Queryable, id: string): Promise<Resolved<BookRecord>> {
  return resolve(await findBook(db, id), 'books', `book ${id} not found`, bookShows);
}

export async function workById(db: Queryable, id: string): Promise<Resolved<WorkRecord>> {
  return resolve(await findWork(db, id), 'works', `work ${id} not found`, (work) => [
    work.id,
    ...work.editions.map((edition) => edition.id),
    ...work.authors.map((author) => author.id),
  ]);
}

export async function authorById(db: Queryable, id: string): Promise<Resolved<AuthorRecord>> {
  return resolve(await findAuthor(db, id), 'authors', `author ${id} not found`, (author) => [
    author.id,
    ...author.works.map((work) => work.id),
  ]);
}

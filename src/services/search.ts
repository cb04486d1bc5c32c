import { kindOfId } from '../domain/ids.js';
import { parseIsbn } from '../domain/isbn.js';
import { authorKey } from '../domain/names.js';
import type { AuthorSummary, BookRecord } from '../domain/records.js';
import { collapseWhitespace } from '../domain/text.js';
import { badRequest } from '../errors.js';
import { searchAuthors as searchAuthorIndex, searchBooks as searchBookIndex, type BookSearch, type ScoredId } from '../stores/elasticsearch/search.js';
import { authorSummariesByIds, booksByIds } from '../stores/postgres/catalogue.js';
import { parseLimit } from './queryParams.js';
import type { Services } from './context.js';

/**
 * Book and author search, shared by the HTTP routes and the MCP tools. Elasticsearch finds and
 * ranks; the records come from PostgreSQL, so a hit reads exactly like its point lookup. Answers
 * are kept in the short cache under their canonical parameters.
 */

export const SEARCH_DEFAULT_LIMIT = 20;
export const SEARCH_MAX_LIMIT = 100;
/** offset + limit may not go past this: deep pages cost the index more than they help anyone. */
export const SEARCH_MAX_WINDOW = 1_000;
export const QUERY_MAX_LENGTH = 200;

/** What search, match and recommendations use of the services. */
export type SearchServices = Pick<Services, 'db' | 'reads' | 'elastic' | 'indices' | 'shortCache'>;

/** The query parameters of GET /v1/books/search, as text (absent: undefined). */
export interface BookSearchParams {
  q?: string;
  limit?: string;
  offset?: string;
  author_id?: string;
  language?: string;
  year_from?: string;
  year_to?: string;
  editions?: string;
}

export interface AuthorSearchParams {
  q?: string;
  limit?: string;
  offset?: string;
}

export interface SearchPage<T> {
  /** How many books (works, unless every edition was asked for) or authors match in all. */
  total: number;
  limit: number;
  offset: number;
  results: T[];
}

export interface BookHit {
  score: number;
  book: BookRecord;
}

export interface AuthorHit {
  score: number;
  author: AuthorSummary;
}

function requiredQuery(text: string | undefined): string {
  const q = collapseWhitespace(text ?? '');
  if (q === '') throw badRequest('q is required');
  if (q.length > QUERY_MAX_LENGTH) throw badRequest(`q must be at most ${QUERY_MAX_LENGTH} characters`);
  return q;
}

function paging(params: { limit?: string; offset?: string }): { limit: number; offset: number } {
  const limit = parseLimit(params.limit, SEARCH_DEFAULT_LIMIT, SEARCH_MAX_LIMIT);
  const text = params.offset ?? '0';
  if (!/^\d+$/.test(text)) throw badRequest('offset must be a non-negative integer');
  const offset = Number(text);
  if (offset + limit > SEARCH_MAX_WINDOW) throw badRequest(`offset + limit must be at most ${SEARCH_MAX_WINDOW}`);
  return { limit, offset };
}

function year(name: string, text: string | undefined): number | null {
  if (text === undefined) return null;
  if (!/^-?\d{1,4}$/.test(text)) throw badRequest(`${name} must be a year (an integer of at most 4 digits)`);
  return Number(text);
}

/** The words of q, with every valid ISBN in it taken out: "0-439-02348-3" or "hunger games 9780439023481". */
function splitIsbns(q: string): { text: string; isbn13s: string[] } {
  const whole = parseIsbn(q);
  if (whole) return { text: '', isbn13s: [whole.isbn13] };
  const words: string[] = [];
  const isbn13s: string[] = [];
  for (const word of q.split(' ')) {
    const isbn = /\d/.test(word) ? parseIsbn(word) : null;
    if (isbn) isbn13s.push(isbn.isbn13);
    else words.push(word);
  }
  return { text: words.join(' '), isbn13s };
}

function bookSearch(params: BookSearchParams): BookSearch {
  const { text, isbn13s } = splitIsbns(requiredQuery(params.q));
  const authorId = params.author_id ?? null;
  if (authorId !== null && kindOfId(authorId) !== 'author') throw badRequest(`author_id must be an author id (au_...), got "${authorId}"`);
  const language = params.language ?? null;
  if (language !== null && !/^[A-Za-z]{2,3}(?:-[A-Za-z]{2,4})?$/.test(language)) throw badRequest(`language must be a language code such as eng or en-US, got "${language}"`);
  const yearFrom = year('year_from', params.year_from);
  const yearTo = year('year_to', params.year_to);
  if (yearFrom !== null && yearTo !== null && yearFrom > yearTo) throw badRequest('year_from must not be after year_to');
  const editions = params.editions ?? 'best';
  if (editions !== 'best' && editions !== 'all') throw badRequest('editions must be best or all');
  return { text, isbn13s, authorId, language, yearFrom, yearTo, everyEdition: editions === 'all', ...paging(params) };
}

const roundScore = (score: number): number => Math.round(score * 1000) / 1000;

/** Pairs hits with their records from PostgreSQL; a hit whose record is gone or merged since it was indexed is left out. */
export async function hydrate<R extends { id: string }, H>(hits: ScoredId[], records: (ids: string[]) => Promise<R[]>, hit: (score: number, record: R) => H): Promise<H[]> {
  const byId = new Map((await records(hits.map((found) => found.id))).map((record) => [record.id, record]));
  return hits.flatMap((found) => {
    const record = byId.get(found.id);
    return record ? [hit(roundScore(found.score), record)] : [];
  });
}

/** GET /v1/books/search. */
export async function searchBooks(services: SearchServices, params: BookSearchParams): Promise<SearchPage<BookHit>> {
  const search = bookSearch(params);
  return services.shortCache.through(`search:books:${JSON.stringify(search)}`, async () => {
    const page = await searchBookIndex(services.elastic, services.indices.books, search);
    const results = await hydrate(page.hits, (ids) => booksByIds(services.db, ids), (score, book) => ({ score, book }));
    return { value: { total: page.total, limit: search.limit, offset: search.offset, results }, cacheable: true };
  });
}

/** GET /v1/authors/search. */
export async function searchAuthors(services: SearchServices, params: AuthorSearchParams): Promise<SearchPage<AuthorHit>> {
  const text = requiredQuery(params.q);
  const search = { text, nameKey: authorKey(text), ...paging(params) };
  return services.shortCache.through(`search:authors:${JSON.stringify(search)}`, async () => {
    const page = await searchAuthorIndex(services.elastic, services.indices.authors, search);
    const results = await hydrate(page.hits, (ids) => authorSummariesByIds(services.db, ids), (score, author) => ({ score, author }));
    return { value: { total: page.total, limit: search.limit, offset: search.offset, results }, cacheable: true };
  });
}

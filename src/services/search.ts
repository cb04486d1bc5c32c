import { z } from 'zod/v4';
import { kindOfId } from '../domain/ids.js';
import { parseIsbn } from '../domain/isbn.js';
import { authorKey } from '../domain/names.js';
import { authorSummary, bookRecord } from '../domain/records.js';
import { collapseWhitespace } from '../domain/text.js';
import { parseInput } from '../errors.js';
import {
  searchAuthors as searchAuthorIndex,
  searchBooks as searchBookIndex,
  type BookSearch,
  type ScoredId,
} from '../stores/elasticsearch/search.js';
import { authorSummariesOf, booksByIds } from '../stores/postgres/catalogue.js';
import { integerWithDefault, limitParam, optionalInteger, type QueryText } from './queryParams.js';
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

const Q_REQUIRED = 'q is required';

const q = (description: string, example: string) =>
  z
    .string({ error: Q_REQUIRED })
    .overwrite(collapseWhitespace)
    .min(1, Q_REQUIRED)
    .max(QUERY_MAX_LENGTH, `q must be at most ${QUERY_MAX_LENGTH} characters`)
    .meta({ description: `${description} Whitespace runs count as one space.`, example });

const paging = (what: string) => ({
  limit: limitParam(SEARCH_DEFAULT_LIMIT, SEARCH_MAX_LIMIT).meta({ description: `${what} per page.` }),
  offset: integerWithDefault(0, SEARCH_MAX_WINDOW - 1, 0, 'offset must be a non-negative integer').meta({
    description: `${what} to skip. \`offset + limit\` may not exceed ${SEARCH_MAX_WINDOW}: refine the query rather than page deeper.`,
  }),
});

/** A page may not reach past SEARCH_MAX_WINDOW. */
const withinWindow = ({ limit, offset }: { limit: number; offset: number }): boolean => offset + limit <= SEARCH_MAX_WINDOW;
const WINDOW = { error: `offset + limit must be at most ${SEARCH_MAX_WINDOW}` };

const year = (name: string, description: string) =>
  optionalInteger(-9999, 9999, `${name} must be a year (an integer of at most 4 digits)`).meta({ description });

/** The query of GET /v1/books/search (and the arguments of search_books). */
export const bookSearchQuery = z
  .object({
    q: q('What to look for: words of the title, subtitle, series or author names, and/or an ISBN.', 'hunger games'),
    author_id: z
      .string()
      .refine((id) => kindOfId(id) === 'author', {
        error: (issue) => `author_id must be an author id (au_...), got "${String(issue.input)}"`,
      })
      .optional()
      .meta({ description: 'Only books crediting this author (an `au_` id of a live author).', pattern: '^au_' }),
    language: z
      .string()
      .regex(/^[A-Za-z]{2,3}(?:-[A-Za-z]{2,4})?$/, {
        error: (issue) => `language must be a language code such as eng or en-US, got "${String(issue.input)}"`,
      })
      .optional()
      .meta({
        description:
          'Only books in this language, as the records spell it (`eng`, `en-US`, `spa`). Books of unknown language are left out.',
      }),
    year_from: year('year_from', 'Only books published in this year or later. Books of unknown year are left out by either year filter.'),
    year_to: year('year_to', 'Only books published in this year or earlier.'),
    editions: z.enum(['best', 'all'], { error: 'editions must be best or all' }).default('best').meta({
      description: '`best` (default): one result per work, the edition that scores best; `all`: every edition.',
    }),
    ...paging('Results'),
  })
  .refine(({ year_from: from, year_to: to }) => from === undefined || to === undefined || from <= to, {
    error: 'year_from must not be after year_to',
  })
  .refine(withinWindow, WINDOW);

/** The query of GET /v1/authors/search (and the arguments of search_authors). */
export const authorSearchQuery = z
  .object({ q: q('A name, or part of one.', 'rowling'), ...paging('Results') })
  .refine(withinWindow, WINDOW);

/** The query parameters of a search as text (absent: undefined), as a URL or a tool call gives them. */
export type BookSearchParams = QueryText<typeof bookSearchQuery>;
export type AuthorSearchParams = QueryText<typeof authorSearchQuery>;

const scored = <Key extends string, Item extends z.ZodType>(key: Key, item: Item) =>
  z.object({ score: z.number().meta({ description: 'Relevance: higher is better. Comparable within one answer only.' }), [key]: item } as {
    score: z.ZodNumber;
  } & { [K in Key]: Item });

export const bookHit = scored('book', bookRecord).meta({ id: 'ScoredBook' });
export const authorHit = scored('author', authorSummary).meta({ id: 'ScoredAuthor' });

const page = <Hit extends z.ZodType>(hit: Hit, total: string) =>
  z.object({
    total: z.int().meta({ description: total }),
    limit: z.int(),
    offset: z.int(),
    results: z.array(hit).meta({ description: 'Best first.' }),
  });

export const bookSearchPage = page(
  bookHit,
  'Matching editions, not only those on this page, counted up to 10,000 (a larger count reads 10000). With one result per work (the default) ' +
    'a work counts once per matching edition, so `total` may exceed the number of results there are to page through.',
).meta({ id: 'BookSearchPage' });
export const authorSearchPage = page(authorHit, 'Matching authors, not only those on this page.').meta({ id: 'AuthorSearchPage' });

export type BookHit = z.output<typeof bookHit>;
export type AuthorHit = z.output<typeof authorHit>;
export type BookSearchPage = z.output<typeof bookSearchPage>;
export type AuthorSearchPage = z.output<typeof authorSearchPage>;

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
  const query = parseInput(bookSearchQuery, params);
  const { text, isbn13s } = splitIsbns(query.q);
  return {
    text,
    isbn13s,
    authorId: query.author_id ?? null,
    language: query.language ?? null,
    yearFrom: query.year_from ?? null,
    yearTo: query.year_to ?? null,
    everyEdition: query.editions === 'all',
    limit: query.limit,
    offset: query.offset,
  };
}

const roundScore = (score: number): number => Math.round(score * 1000) / 1000;

/** Pairs hits with their records from PostgreSQL; a hit whose record is gone or merged since it was indexed is left out. */
export async function hydrate<Hit extends ScoredId, R extends { id: string }, H>(
  hits: Hit[],
  records: (hits: Hit[]) => Promise<R[]>,
  hit: (score: number, record: R) => H,
): Promise<H[]> {
  const byId = new Map((await records(hits)).map((record) => [record.id, record]));
  return hits.flatMap((found) => {
    const record = byId.get(found.id);
    return record ? [hit(roundScore(found.score), record)] : [];
  });
}

/** GET /v1/books/search. */
export async function searchBooks(services: SearchServices, params: BookSearchParams): Promise<BookSearchPage> {
  const search = bookSearch(params);
  return services.shortCache.through(`search:books:${JSON.stringify(search)}`, async () => {
    const page = await searchBookIndex(services.elastic, services.indices.books, search);
    const results = await hydrate(
      page.hits,
      (hits) =>
        booksByIds(
          services.db,
          hits.map((found) => found.id),
        ),
      (score, book) => ({ score, book }),
    );
    return { value: { total: page.total, limit: search.limit, offset: search.offset, results }, cacheable: true };
  });
}

/** GET /v1/authors/search. */
export async function searchAuthors(services: SearchServices, params: AuthorSearchParams): Promise<AuthorSearchPage> {
  const { q: text, limit, offset } = parseInput(authorSearchQuery, params);
  const search = { text, nameKey: authorKey(text), limit, offset };
  return services.shortCache.through(`search:authors:${JSON.stringify(search)}`, async () => {
    const page = await searchAuthorIndex(services.elastic, services.indices.authors, search);
    const results = await hydrate(
      page.hits,
      (hits) => authorSummariesOf(services.db, hits),
      (score, author) => ({ score, author }),
    );
    return { value: { total: page.total, limit: search.limit, offset: search.offset, results }, cacheable: true };
  });
}

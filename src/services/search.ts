import { z } from 'zod/v4';
import { kindOfId } from '../domain/ids.js';
import { parseIsbn } from '../domain/isbn.js';
import { PRIOR_MEAN, PRIOR_RATINGS } from '../domain/ratings.js';
import { authorSummary, bookRecord } from '../domain/records.js';
import { subjectKey } from '../domain/subjects.js';
import { FACET_FIELDS, type FacetField } from '../stores/elasticsearch/facets.js';
import { collapseWhitespace } from '../domain/text.js';
import { badRequest, parseInput } from '../errors.js';
import { parseQuery, QuerySyntaxError, type ParsedQuery } from '../domain/querySyntax.js';
import {
  searchAuthors as searchAuthorIndex,
  searchBooks as searchBookIndex,
  BOOK_SORTS,
  type AuthorSearch,
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
export const FACET_DEFAULT_LIMIT = 10;
export const FACET_MAX_LIMIT = 20;

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

/** The paging parameters of a list (`limit`, `offset`), as every list of the API takes them. */
export const paging = (what: string) => ({
  limit: limitParam(SEARCH_DEFAULT_LIMIT, SEARCH_MAX_LIMIT).meta({ description: `${what} per page.` }),
  offset: integerWithDefault(0, SEARCH_MAX_WINDOW - 1, 0, 'offset must be a non-negative integer').meta({
    description: `${what} to skip. \`offset + limit\` may not exceed ${SEARCH_MAX_WINDOW}: refine the query rather than page deeper.`,
  }),
});

/** A page may not reach past SEARCH_MAX_WINDOW. */
export const withinWindow = ({ limit, offset }: { limit: number; offset: number }): boolean => offset + limit <= SEARCH_MAX_WINDOW;
export const WINDOW = { error: `offset + limit must be at most ${SEARCH_MAX_WINDOW}` };

const year = (name: string, description: string) =>
  optionalInteger(-9999, 9999, `${name} must be a year (an integer of at most 4 digits)`).meta({ description });

/** The query of GET /v1/books/search (and the arguments of search_books). */
export const bookSearchQuery = z
  .object({
    q: q(
      'What to look for: words of the title, subtitle, series or author names, and/or an ISBN. For people who know what they want, a query syntax: ' +
        '`title:`, `author:`, `series:`, `subject:` and `publisher:` followed directly by a word or a quoted phrase require it in that field (`author:herbert`, `title:"the long earth"`); ' +
        '`isbn:` an ISBN; `year:1965` or `year:1960..1969` (an end may be left open: `year:..1900`) a year; `"a quoted phrase"` those words together in that order; ' +
        '`-word` or `-"a phrase"` leaves out books that have it. Free text and operators mix: `dune author:herbert -messiah`. ' +
        'Only a known field name directly followed by a colon and a value is an operator: `Star Wars: A New Hope` and `Re: Zero` search as text. ' +
        'A query the syntax cannot read (a quote not closed, `year:sixties`, `isbn:42`, only words to leave out) is a 400 naming the problem.',
      'dune author:herbert -messiah',
    ),
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
    subject: z
      .string()
      .overwrite(collapseWhitespace)
      .refine((subject) => subjectKey(subject) !== '', { error: 'subject must have a letter or digit' })
      .optional()
      .meta({
        description:
          'Only books with this subject, whatever its case, punctuation and word order (`Fantasy fiction` also finds `FICTION / Fantasy`): a `value` of the `subject` facet, or any spelling.',
        example: 'Fantasy',
      }),
    publisher: z
      .string()
      .overwrite(collapseWhitespace)
      .min(1, 'publisher must not be empty')
      .optional()
      .meta({ description: 'Only books of this publisher, whatever its case and diacritics: a `value` of the `publisher` facet.' }),
    facets: z
      .string()
      .transform((list, context) => {
        const fields = [...new Set(list.split(',').map((field) => field.trim()))];
        const unknown = fields.find((field) => !(FACET_FIELDS as readonly string[]).includes(field));
        if (unknown !== undefined) {
          context.addIssue({
            code: 'custom',
            message: `facets must be a comma-separated list of ${FACET_FIELDS.join(', ')}; got "${unknown}"`,
          });
          return z.NEVER;
        }
        return fields as FacetField[];
      })
      .optional()
      .meta({
        description:
          `Adds \`facets\` to the answer: for each field named (any of ${FACET_FIELDS.map((field) => `\`${field}\``).join(', ')}, comma-separated), its most frequent values over the whole result set, ` +
          'not only this page, with how many results have each: works with one result per work, editions with `editions=all`. ' +
          "A field's counts ignore that field's own filter (the other filters apply), so the other languages show beside the one chosen. " +
          'Drill down with the matching filter: `subject=` and `publisher=` take a `value`, `author_id=` an author value, `language=` a language, and a decade value `1960` reads `year_from=1960&year_to=1969`. ' +
          'Subjects count as one once case, punctuation and word order are set aside, shown in the spelling most books use; publishers once case and diacritics are.',
        example: 'subject,language,decade',
      }),
    facet_limit: integerWithDefault(
      1,
      FACET_MAX_LIMIT,
      FACET_DEFAULT_LIMIT,
      `facet_limit must be an integer from 1 to ${FACET_MAX_LIMIT}`,
    ).meta({
      description: 'Values per facet, most frequent first.',
    }),
    editions: z.enum(['best', 'all'], { error: 'editions must be best or all' }).default('best').meta({
      description: '`best` (default): one result per work, the edition that scores best; `all`: every edition.',
    }),
    sort: z
      .enum(BOOK_SORTS, { error: `sort must be one of ${BOOK_SORTS.join(', ')}` })
      .default('relevance')
      .meta({
        description:
          'The order of the results. `relevance` (default): how well each book fits the query, then its readers (see above). ' +
          '`newest` / `oldest`: by year; `readers`: most read first (ratings and Open Library readers); ' +
          `\`rating\`: best rated first, by a damped average that counts how many rated: (${PRIOR_RATINGS} × ${PRIOR_MEAN} + the sum of the ratings) / (${PRIOR_RATINGS} + their number), ` +
          `as if every book had ${PRIOR_RATINGS} more ratings of ${PRIOR_MEAN}, so one five-star rating cannot outrank a million fours (ties: more readers first); ` +
          '`title`: alphabetical, ignoring a leading article, case, diacritics and punctuation. ' +
          "With one result per work, a work sorts by its own values: the year it was first published (its edition's year when unknown), the readers and ratings of all its editions together, " +
          'and shows its first edition in that order; with `editions=all` each edition sorts by its own. Books without the value sorted by (no year, nobody rated) come last. ' +
          'Every sort takes every filter and pages exactly up to the deepest `offset`.',
        example: 'rating',
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

const facetValue = z
  .object({
    value: z.string().meta({ description: 'The value, as the filter of its field takes it.' }),
    count: z.int().meta({ description: 'Results with this value: works with one result per work, editions with `editions=all`.' }),
    name: z.string().optional().meta({ description: "The author's name (`author` facet, whose value is the author's id)." }),
  })
  .meta({ id: 'FacetValue' });

const facets = z
  .object(
    Object.fromEntries(FACET_FIELDS.map((field) => [field, z.array(facetValue).optional()])) as Record<
      FacetField,
      z.ZodOptional<z.ZodArray<typeof facetValue>>
    >,
  )
  .meta({
    id: 'Facets',
    description:
      'Present when `facets` was asked: each field asked, its most frequent values first (ties by value), at most `facet_limit`.',
    example: {
      language: [
        { value: 'eng', count: 120 },
        { value: 'spa', count: 4 },
      ],
      decade: [{ value: '2000', count: 61 }],
    },
  });

export const bookSearchPage = page(
  bookHit,
  'Matching editions, not only those on this page, counted up to 10,000 (a larger count reads 10000). With one result per work (the default) ' +
    'a work counts once per matching edition, so `total` may exceed the number of results there are to page through.',
)
  .extend({ facets: facets.optional() })
  .meta({ id: 'BookSearchPage' });
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

/** q read by the query syntax; a query it cannot read is a 400 saying why. */
function readQuery(q: string): ParsedQuery {
  try {
    return parseQuery(q);
  } catch (error) {
    if (error instanceof QuerySyntaxError) throw badRequest(error.message);
    throw error;
  }
}

/** The later of two lower bounds, the earlier of two upper bounds: a year range of q and year_from/year_to both apply. */
const tighter = (a: number | null | undefined, b: number | null, pick: (x: number, y: number) => number): number | null =>
  a === undefined || a === null ? b : b === null ? a : pick(a, b);

/** The index query a book search request asks for (a bad parameter throws the request's 400). */
export function bookSearch(params: BookSearchParams): BookSearch {
  const query = parseInput(bookSearchQuery, params);
  const parsed = readQuery(query.q);
  const { text, isbn13s } = splitIsbns(parsed.text);
  return {
    text,
    isbn13s,
    phrases: parsed.phrases,
    fields: parsed.fields,
    requiredIsbn13s: parsed.isbn13s,
    excluded: parsed.excluded,
    authorId: query.author_id ?? null,
    language: query.language ?? null,
    yearFrom: tighter(query.year_from, parsed.yearFrom, Math.max),
    yearTo: tighter(query.year_to, parsed.yearTo, Math.min),
    subjectKey: query.subject === undefined ? null : subjectKey(query.subject),
    publisher: query.publisher ?? null,
    facets: query.facets ?? [],
    facetLimit: query.facet_limit,
    everyEdition: query.editions === 'all',
    sort: query.sort,
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
    const facets = page.facets === undefined ? {} : { facets: page.facets };
    return { value: { total: page.total, limit: search.limit, offset: search.offset, results, ...facets }, cacheable: true };
  });
}

/** The index query an author search request asks for. */
export function authorSearch(params: AuthorSearchParams): AuthorSearch {
  const { q: text, limit, offset } = parseInput(authorSearchQuery, params);
  return { text, limit, offset };
}

/** GET /v1/authors/search. */
export async function searchAuthors(services: SearchServices, params: AuthorSearchParams): Promise<AuthorSearchPage> {
  const search = authorSearch(params);
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

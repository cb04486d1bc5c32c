import { z } from 'zod/v4';
import type { BookRecord } from '../domain/records.js';
import { authorSimilarity } from '../domain/similarity.js';
import { ApiError, badRequest } from '../errors.js';
import { MATCH_BATCH_MAX } from './batch.js';
import { matchBooks, MATCH_CANDIDATES_SHOWN, type MatchCandidate, type MatchResult } from './match.js';
import { searchAuthors, type SearchServices } from './search.js';
import { SUGGEST_MAX_LENGTH, SUGGEST_MAX_LIMIT, suggestBooks } from './suggest.js';

/**
 * The W3C Reconciliation Service API 0.2 (what OpenRefine speaks) over the catalogue: the service
 * manifest, and query batches answered by the same services as /v1 — a book or work query is a
 * match (POST /v1/match), an author query an author search. Scores are our confidence on 0 to 100;
 * `match` is true only for the candidate /v1/match would return as its match.
 */

export const RECONCILE_TYPES = [
  { id: 'book', name: 'Book', description: 'One edition: a title, its authors, publisher, year and ISBN.' },
  { id: 'work', name: 'Work', description: 'A text across all its editions and translations.' },
  { id: 'author', name: 'Author', description: 'A person credited on books.' },
] as const;

type TypeId = (typeof RECONCILE_TYPES)[number]['id'];

/** The properties a query may give, as a suggest service lists them; each is a field of a match record. */
export const RECONCILE_PROPERTIES = [
  { id: 'author', name: 'Author', description: 'An author\'s name in any common form, or several ("Rowling, J.K.; Mary GrandPré").' },
  { id: 'isbn', name: 'ISBN', description: 'ISBN-10 or ISBN-13, hyphens allowed: a matching ISBN decides.' },
  { id: 'year', name: 'Year', description: 'Year of publication.' },
  { id: 'publisher', name: 'Publisher', description: "The publisher's name." },
] as const;

const DEFAULT_LIMIT = 3;
const AUTHOR_MAX_LIMIT = 25;
// An author candidate is a match when the name is the same (initials, order and diacritics aside)
// and no other candidate's is.
const AUTHOR_MATCH = 0.95;

/** The service manifest; `origin` is where clients reach this service (scheme, host and port). */
export function reconcileManifest(origin: string) {
  return {
    versions: ['0.2'],
    name: 'bookmeta book catalogue',
    identifierSpace: `${origin}/v1/`,
    schemaSpace: `${origin}/reconcile#types`,
    documentation: `${origin}/docs`,
    view: { url: `${origin}/v1/books/{{id}}` },
    defaultTypes: RECONCILE_TYPES.map(({ id, name }) => ({ id, name })),
    suggest: {
      entity: { service_url: origin, service_path: '/reconcile/suggest/entity' },
      property: { service_url: origin, service_path: '/reconcile/suggest/property' },
    },
    batchSize: MATCH_BATCH_MAX,
    // The manifest schema takes Swagger 2.0's security schemes, which have no Bearer scheme: the key
    // travels as an API key in the Authorization header, written with its scheme.
    authentication: {
      type: 'apiKey',
      in: 'header',
      name: 'Authorization',
      description: 'Your bookmeta API key, written as "Bearer svc_live_<kid>_<secret>" (the same key and budget as /v1).',
    },
  };
}

/** GET /reconcile/suggest/property: the properties whose id, name or description starts a word with `prefix`. */
export function suggestProperties(prefix: string | undefined) {
  const wanted = (prefix ?? '').trim().toLowerCase();
  const fits = (text: string) =>
    text
      .toLowerCase()
      .split(/\W+/u)
      .some((word) => word.startsWith(wanted));
  return {
    result: RECONCILE_PROPERTIES.filter((property) => wanted === '' || fits(property.id) || fits(property.name)).map(
      ({ id, name, description }) => ({ id, name, description }),
    ),
  };
}

/**
 * GET /reconcile/suggest/entity: the type-ahead of GET /v1/suggest for OpenRefine's cell editor,
 * its works and authors as entities of the 0.2 protocol (a series is no entity: it has no id).
 * `cursor` skips that many of the suggestions.
 */
export async function suggestEntities(
  services: Parameters<typeof suggestBooks>[0],
  prefix: string | undefined,
  cursor: string | undefined,
) {
  if (prefix === undefined || prefix.trim() === '') throw badRequest('prefix is required');
  if (prefix.length > SUGGEST_MAX_LENGTH) throw badRequest(`prefix must be at most ${SUGGEST_MAX_LENGTH} characters`);
  if (cursor !== undefined && !/^\d+$/u.test(cursor)) throw badRequest('cursor must be a non-negative integer');
  const { results } = await suggestBooks(services, { q: prefix, limit: String(SUGGEST_MAX_LIMIT) });
  return {
    result: results.slice(Number(cursor ?? 0)).flatMap((found) => {
      if (found.type === 'work') {
        const by = [found.author?.name, found.year === null ? undefined : String(found.year)].filter((part) => part !== undefined);
        return [{ id: found.id, name: found.title, description: by.join(', '), notable: [typeRef('work')] }];
      }
      if (found.type === 'author') {
        return [{ id: found.id, name: found.name, description: `${found.work_count} works`, notable: [typeRef('author')] }];
      }
      return [];
    }),
  };
}

// The query batch, as the 0.2 schema (reconciliation-query-batch.json) has it.
const propertyValue = z.union([z.string(), z.number(), z.boolean(), z.object({ id: z.string(), name: z.string().optional() })]);
const reconciliationQuery = z
  .strictObject({
    query: z.string().optional().meta({ description: 'A title (book, work) or a name (author).' }),
    type: z
      .union([z.string(), z.array(z.string())])
      .optional()
      .meta({
        description: `The first known one counts (${RECONCILE_TYPES.map((type) => `\`${type.id}\``).join(', ')}); \`book\` when absent.`,
      }),
    limit: z
      .int()
      .positive()
      .optional()
      .meta({
        description: `Candidates at most (default ${DEFAULT_LIMIT}; books and works at most ${MATCH_CANDIDATES_SHOWN}, authors ${AUTHOR_MAX_LIMIT}).`,
      }),
    properties: z
      .array(z.object({ pid: z.string(), v: z.union([propertyValue, z.array(propertyValue)]) }))
      .optional()
      .meta({
        description: `Property values: ${RECONCILE_PROPERTIES.map((property) => `\`${property.id}\``).join(', ')}; others are ignored.`,
      }),
    type_strict: z.enum(['any', 'should', 'all']).optional(),
  })
  .refine((query) => query.query !== undefined || (query.properties?.length ?? 0) > 0, {
    message: 'query or a non-empty properties is required',
  })
  .meta({ id: 'ReconciliationQuery', description: 'A 0.2 reconciliation query: `query` or a non-empty `properties` is required.' });

/** A query batch: queries by the client's ids ("q0", "q1", ...). */
export const queryBatch = z.record(z.string(), reconciliationQuery);

export type ReconciliationQuery = z.output<typeof reconciliationQuery>;
type PropertyValue = z.output<typeof propertyValue>;

/** A query batch, checked against the 0.2 schema: the ids of the queries and the queries, in order. */
export function parseQueryBatch(batch: unknown): [string, ReconciliationQuery][] {
  const parsed = queryBatch.safeParse(batch);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    const where = issue.path.length > 0 ? `queries.${issue.path.join('.')}: ` : 'queries: ';
    throw badRequest(
      `${where}${issue.code === 'invalid_type' && issue.path.length === 0 ? 'must be a JSON object of queries {"q0": {"query": "..."}}' : issue.message}`,
    );
  }
  const queries = Object.entries(parsed.data);
  // An empty batch asks nothing: it is a client's mistake (a form field lost on the way), not a question.
  if (queries.length === 0)
    throw badRequest('queries: the batch names no query; send at least one, e.g. {"q0": {"query": "The Hunger Games"}}');
  if (queries.length > MATCH_BATCH_MAX)
    throw new ApiError(
      413,
      'payload_too_large',
      `${queries.length} queries in one batch; at most ${MATCH_BATCH_MAX} (the manifest's batchSize)`,
    );
  return queries;
}

const typeIds = RECONCILE_TYPES.map((type) => type.id) as [TypeId, ...TypeId[]];

const candidate = z
  .object({
    id: z.string().meta({ description: 'A `bk_`, `wk_` or `au_` id.' }),
    name: z.string(),
    description: z.string().optional(),
    score: z.number().min(0).max(100).meta({ description: 'Our confidence on 0 to 100.' }),
    match: z.boolean().meta({
      description:
        "True only for the candidate `POST /v1/match` would return as its match (authors: the same name, and no other candidate's).",
    }),
    features: z
      .array(z.object({ id: z.string(), value: z.union([z.number(), z.boolean()]) }))
      .meta({ description: 'The signals: `confidence`, then those of the match.' }),
    type: z.array(z.object({ id: z.enum(typeIds), name: z.string() })),
  })
  .meta({ id: 'ReconciliationCandidate' });

export type Candidate = z.output<typeof candidate>;

/** The answer to a query batch: for each query id, its candidates, best first. */
export const resultBatch = z.record(z.string(), z.object({ result: z.array(candidate) }));

const typeRef = (id: TypeId) => ({ id, name: RECONCILE_TYPES.find((type) => type.id === id)!.name });

/** The first of the query's types that the service has (a book when none is given); null when it has none of them. */
function typeOf(query: ReconciliationQuery): TypeId | null {
  const asked = query.type === undefined ? ['book'] : [query.type].flat();
  return (asked.find((id) => RECONCILE_TYPES.some((type) => type.id === id)) as TypeId | undefined) ?? null;
}

const text = (value: PropertyValue): string | null =>
  typeof value === 'string'
    ? value
    : typeof value === 'number'
      ? String(value)
      : typeof value === 'object'
        ? (value.name ?? value.id)
        : null;

/** The values given for a property (case aside), as text. */
function propertyTexts(query: ReconciliationQuery, pid: string): string[] {
  return (query.properties ?? [])
    .filter((property) => property.pid.toLowerCase() === pid)
    .flatMap((property) => [property.v].flat().flatMap((value) => text(value)?.trim() || []));
}

/**
 * The POST /v1/match body a book or work query stands for. A spreadsheet's year is read loosely
 * ("c1998", "1998.0"); several authors are one credit line.
 */
function matchRecord(query: ReconciliationQuery): Record<string, string | number> {
  const record: Record<string, string | number> = {};
  if (query.query !== undefined) record.title = query.query;
  const [isbn] = propertyTexts(query, 'isbn');
  if (isbn !== undefined) record.isbn = isbn;
  const authors = propertyTexts(query, 'author');
  if (authors.length > 0) record.author = authors.join('; ');
  const year = propertyTexts(query, 'year')
    .map((value) => /(?<!\d)(\d{3,4})(?!\d)/.exec(value)?.[1])
    .find((found) => found !== undefined);
  if (year !== undefined) record.year = Number(year);
  const [publisher] = propertyTexts(query, 'publisher');
  if (publisher !== undefined) record.publisher = publisher;
  return record;
}

const score = (confidence: number): number => Math.round(confidence * 1000) / 10;

function describeBook(book: BookRecord): string {
  const parts = [
    book.authors.map((author) => author.name).join(', '),
    book.year === null ? '' : String(book.year),
    book.publisher ?? '',
    book.isbn_13 === null ? '' : `ISBN ${book.isbn_13}`,
  ];
  return parts.filter((part) => part !== '').join(' · ');
}

function matchFeatures(candidate: MatchCandidate, type: 'book' | 'work'): Candidate['features'] {
  const { signals } = candidate;
  const features: Candidate['features'] = [{ id: 'confidence', value: candidate.confidence }];
  for (const name of ['title', 'author', 'year', 'publisher'] as const) {
    const value = signals[name];
    if (value !== null) features.push({ id: name, value });
  }
  if (signals.isbn !== 'absent' && signals.isbn !== 'invalid')
    features.push({ id: 'isbn', value: signals.isbn === 'match' || (type === 'work' && signals.isbn === 'other_edition') });
  return features;
}

async function bookCandidates(services: SearchServices, type: 'book' | 'work', result: MatchResult, limit: number): Promise<Candidate[]> {
  const shown = result.candidates.slice(0, limit);
  const works = type === 'work' ? await Promise.all(shown.map(async ({ book }) => services.reads.work(book.work_id))) : [];
  return shown.map((candidate, index) => {
    const { book } = candidate;
    const work = works[index];
    const isMatch = index === 0 && result.match !== null;
    return {
      id: type === 'book' ? book.id : book.work_id,
      name: type === 'work' && work && 'found' in work ? work.found.title : book.title,
      description: describeBook(book),
      score: score(candidate.confidence),
      match: isMatch,
      features: matchFeatures(candidate, type),
      type: [typeRef(type)],
    };
  });
}

async function authorCandidates(services: SearchServices, name: string, limit: number): Promise<Candidate[]> {
  let page;
  try {
    page = await searchAuthors(services, { q: name, limit: String(Math.min(limit, AUTHOR_MAX_LIMIT)) });
  } catch (error) {
    // A name author search refuses (empty, too long) has no candidates, as a query of another type would not.
    if (error instanceof ApiError && error.status === 400) return [];
    throw error;
  }
  const likeness = page.results.map(({ author }) => authorSimilarity(name, [author.name, ...author.alternate_names]));
  return page.results.map(({ author, score: relevance }, index) => ({
    id: author.id,
    name: author.name,
    description: `${author.work_count} ${author.work_count === 1 ? 'work' : 'works'}${author.alternate_names.length > 0 ? `; also ${author.alternate_names.slice(0, 3).join(', ')}` : ''}`,
    score: score(likeness[index]!),
    match: index === 0 && likeness[0]! >= AUTHOR_MATCH && likeness.slice(1).every((other) => other < AUTHOR_MATCH),
    features: [
      { id: 'name', value: Math.round(likeness[index]! * 1000) / 1000 },
      { id: 'relevance', value: relevance },
    ],
    type: [typeRef('author')],
  }));
}

/**
 * Answers a query batch: `{"<query id>": {"result": [candidates, best first]}}`. The book and work
 * queries of the batch are matched together (matchBooks); a query the service cannot answer (a
 * type it does not have, no title or ISBN to match, an author query without a name) has no
 * candidates. Each candidate list is at most `limit` long (default 3; 5 for books and works,
 * which is all /v1/match shows).
 */
export async function reconcile(
  services: SearchServices,
  queries: readonly [string, ReconciliationQuery][],
): Promise<z.output<typeof resultBatch>> {
  const typed = queries.map(([id, query]) => ({ id, query, type: typeOf(query), limit: query.limit ?? DEFAULT_LIMIT }));
  const matched = typed.filter(({ type }) => type === 'book' || type === 'work');
  const answers = await matchBooks(
    services,
    matched.map(({ query }) => matchRecord(query)),
  );
  const matchOf = new Map(matched.map(({ id }, index) => [id, answers[index]!]));
  const results = await Promise.all(
    typed.map(async ({ id, query, type, limit }): Promise<[string, { result: Candidate[] }]> => {
      if (type === 'author') return [id, { result: query.query === undefined ? [] : await authorCandidates(services, query.query, limit) }];
      const answer = matchOf.get(id);
      if (type === null || answer === undefined || answer instanceof ApiError) return [id, { result: [] }];
      return [id, { result: await bookCandidates(services, type, answer, Math.min(limit, MATCH_CANDIDATES_SHOWN)) }];
    }),
  );
  return Object.fromEntries(results);
}

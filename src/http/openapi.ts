import { createDocument, type oas31, type ZodOpenApiOverride, type ZodOpenApiPathItemObject, type ZodOpenApiResponseObject, type ZodOpenApiSchemaObject } from 'zod-openapi';
import { MATCH_THRESHOLD, TITLE_ALONE, TITLE_ALONE_POWER } from '../domain/matching.js';
import { AUTHOR_WORKS_SHOWN, authorRecord, bookRecord, WORK_EDITIONS_SHOWN, workRecord } from '../domain/records.js';
import { errorBody } from '../errors.js';
import { BATCH_BODY_LIMIT_BYTES } from './middleware/batchBudget.js';
import { LOOKUP_BATCH_MAX, MATCH_BATCH_MAX, matchBatchBody, matchBatchResult } from '../services/batch.js';
import { BULK_KINDS, type BulkKind } from '../services/bulkLookups.js';
import { changePage, changesQuery } from '../services/changeFeed.js';
import { health } from '../services/health.js';
import { mergedBody } from '../services/lookups.js';
import { matchRequest, matchResult } from '../services/match.js';
import { openLibraryTarget } from '../services/openlibrary.js';
import { queryBatch, resultBatch } from '../services/reconcile.js';
import { tools } from '../mcp/tools.js';
import { recommendQuery, recommendations } from '../services/recommend.js';
import { authorSearchPage, authorSearchQuery, bookSearchPage, bookSearchQuery } from '../services/search.js';

/**
 * The OpenAPI 3.1 description served at /openapi.json, generated (zod-openapi) from the zod schemas
 * the routes validate with and the records derive from, so a shape or a limit is written once;
 * the prose is written here, next to the routes it describes. test/openapi.test.ts validates it,
 * checks it against the router, and holds real answers and requests to what it says.
 */

type Schema = ZodOpenApiSchemaObject;
type Response = ZodOpenApiResponseObject;


const errorResponse = (description: string): Response => ({
  description,
  content: { 'application/json': { schema: errorBody } },
});

const rateHeaders: Record<string, oas31.HeaderObject> = {
  'RateLimit-Limit': { description: 'Requests allowed per window for this key.', schema: { type: 'integer' } },
  'RateLimit-Remaining': { description: 'Requests left in the current window.', schema: { type: 'integer' } },
  'RateLimit-Reset': { description: 'Seconds until the oldest counted request leaves the window.', schema: { type: 'integer' } },
  'RateLimit-Policy': { description: 'The policy, e.g. `120;w=60`.', schema: { type: 'string' } },
};

const cacheHeader: Record<string, oas31.HeaderObject> = {
  'X-Cache': { description: '`HIT` when answered from the 24-hour point-lookup cache, else `MISS`.', schema: { type: 'string', enum: ['HIT', 'MISS'] } },
};

/** The responses every authenticated route can give besides its own. */
const commonErrors: Record<string, Response> = {
  '401': {
    description: 'Missing, malformed, unknown or revoked key (`code` is `unauthorized`); the scheme `Bearer` may be in any case. Carries `WWW-Authenticate: Bearer`.',
    headers: { 'WWW-Authenticate': { schema: { type: 'string', const: 'Bearer' } } },
    content: { 'application/json': { schema: errorBody } },
  },
  '429': {
    description: 'More than the key\'s budget (default 120 requests in a sliding 60-second window); `code` is `rate_limited`.',
    headers: { 'Retry-After': { description: 'Seconds to wait.', schema: { type: 'integer' } }, ...rateHeaders },
    content: { 'application/json': { schema: errorBody } },
  },
  '500': errorResponse('Server fault (`code` is `internal`); retry with backoff.'),
  '503': {
    description:
      'A store the request needs is away or does not answer in time (`code` is `unavailable`; the message names PostgreSQL, Redis or Elasticsearch). ' +
      'Answered within a second; retry after `Retry-After`. What does not need that store keeps working (README, Failure modes).',
    headers: { 'Retry-After': { description: 'Seconds to wait.', schema: { type: 'integer' } } },
    content: { 'application/json': { schema: errorBody } },
  },
};

/** What a route that reads a JSON body answers to any other body (jsonBody). */
const unsupportedBody = errorResponse(
  '`Content-Type` is not `application/json`, or `Content-Encoding` is other than `identity` (`code` `unsupported_media_type`); the body is not read.',
);

const idParameter = (what: 'book' | 'work' | 'author'): oas31.ParameterObject => ({
  name: 'id',
  in: 'path',
  required: true,
  description: `The ${what} id. An id that names no ${what} answers 404.`,
  schema: { type: 'string' },
  example: { book: 'bk_5n1x7q0c2r9a', work: 'wk_8d2m4q6s0v1x', author: 'au_3k8d0f1m2x7p' }[what],
});

const merged = (family: string): Response => ({
  description: `The id was merged; \`Location\` points at the final survivor under \`/v1/${family}/\`. Clients follow it; the old id keeps answering forever.`,
  headers: { Location: { schema: { type: 'string' } } },
  content: { 'application/json': { schema: mergedBody } },
});

const deletedRecord = errorResponse(
  'The record was deleted by its source (an Open Library `/type/delete`), so it is no longer in the catalogue: `code` is `gone`. A deleted record is never shown as if live; it is left out of search, match, recommendations and every listing, and its deletion is in the change feed.',
);

/** What a lookup by id answers to text that cannot be an id of its kind (checked before any store sees it). */
const malformedId = (what: string): Record<string, Response> => ({ '400': errorResponse(`Not a ${what} id: the wrong prefix, length or characters (\`code\` \`bad_request\`).`) });

const pointLookup = (summary: string, description: string, parameter: oas31.ParameterObject, schema: Schema, family: string, notFound: string, extra: Record<string, Response> = {}): ZodOpenApiPathItemObject => ({
  get: {
    summary,
    description: `${description} Cached for 24 hours by URL (after authentication and rate limiting); a change to the record drops its cached answers at once.`,
    parameters: [parameter],
    responses: {
      '200': { description: 'Found.', headers: { ...cacheHeader, ...rateHeaders }, content: { 'application/json': { schema } } },
      '301': merged(family),
      ...extra,
      '404': errorResponse(notFound),
      '410': deletedRecord,
      ...commonErrors,
    },
  },
});

// ------------------------------------------------------------------------------------------------
// Search, match and recommendations (src/services/search.ts, match.ts, recommend.ts)

const SHORT_CACHE =
  'Read from the primary store (PostgreSQL), so every book is exactly its `GET /v1/books/{id}` record; a book removed or merged since it was indexed is left out. ' +
  'Kept briefly (30 seconds by default) in a short-lived cache under its canonical parameters, never in the 24-hour point-lookup cache (no `X-Cache` header).';

const query = (name: string, description: string, schema: oas31.SchemaObject): oas31.ParameterObject => ({ name, in: 'query', required: false, description, schema });

const searchPaths: Record<string, ZodOpenApiPathItemObject> = {
  '/v1/books/search': {
    get: {
      summary: 'Search books',
      description:
        'Free text over title, subtitle, series and author names; case, diacritics and punctuation do not matter, and the last word also counts as the start of a word ' +
        '(search as you type). Typo tolerant: when the words as typed do not fill the page asked for, the search runs again reading each word up to its typos ' +
        '(one in a word of 3 to 5 letters, two from 6 letters, the first letter right), so a misspelt query finds what it meant and a well-spelt one is not diluted. ' +
        'An ISBN-10 or ISBN-13 anywhere in `q` (hyphens allowed) puts that edition first. Ranking: the words in the title (as a phrase best), then in the author names, ' +
        'the series and the subtitle; popular books rank a little higher (the score is multiplied by 1 + 0.1 × log10(1 + ratings_count)). ' +
        'By default one result per work, its best-scoring edition; `editions=all` lists every edition. ' +
        '(The best matches are found first and only the first few hundred are ranked in full, so a deep page of a work with very many matching editions may come back short.) ' +
        SHORT_CACHE,
      requestParams: { query: bookSearchQuery },
      responses: {
        '200': { description: 'A page of books.', headers: rateHeaders, content: { 'application/json': { schema: bookSearchPage } } },
        '400': errorResponse('`q` missing (`q is required`) or too long, or a parameter invalid; the message names it.'),
        ...commonErrors,
      },
    },
  },
  '/v1/authors/search': {
    get: {
      summary: 'Search authors',
      description:
        'Finds authors by name, tolerant of initials (`JK Rowling`, `J. K. Rowling`), order (`Rowling, J.K.`), diacritics (`Garcia Marquez`) and typos (as in book search); ' +
        'other spellings seen of a name (`alternate_names`) match too, and the last word also counts as the start of a word. ' +
        'An exact name (once initials, order, case and diacritics are set aside) ranks first; popular authors (by the ratings of their books) rank a little higher. ' +
        SHORT_CACHE.replace('every book is exactly its `GET /v1/books/{id}` record; a book', 'every author reads as in `GET /v1/authors/{id}` (without the works); an author'),
      requestParams: { query: authorSearchQuery },
      responses: {
        '200': { description: 'A page of authors.', headers: rateHeaders, content: { 'application/json': { schema: authorSearchPage } } },
        '400': errorResponse('`q` missing (`q is required`) or too long, or `limit`/`offset` invalid.'),
        ...commonErrors,
      },
    },
  },
  '/v1/match': {
    post: {
      summary: 'Match a record to a catalogue book',
      description:
        'Finds the catalogue book a (possibly messy) record describes. Candidates are the book with the given ISBN and the editions whose title is closest ' +
        '(as written first; read up to typos when that finds no match). ' +
        'Each is weighed on signals from 0 to 1 (`title`, `author`, `year`, `publisher`) and what the ISBN says about it (`isbn`). Titles are compared after taking out ' +
        'a series in parentheses, a subtitle (either side may lack it), a leading article, punctuation, case and diacritics, tolerating typos (a word matched only up to a typo, ' +
        'or a title matched only without the book\'s subtitle, counts a little less; a record title that says more than the book\'s, such as an imprint in parentheses, counts ' +
        'clearly less, as it may name another book of that title); authors are compared ' +
        'tolerating initials, surname-first order and typos, and any credited author may match, so a translator or illustrator listed as well costs nothing. ' +
        `Confidence: the title likeness, times 0.6 + 0.4 × the author likeness when an author was given (0.8 when the book credits nobody); with no author given, ${TITLE_ALONE} × the title likeness to the power ${TITLE_ALONE_POWER}, as a near title alone is likelier another book; ` +
        `times 0.9 + 0.1 × year closeness and 0.95 + 0.05 × publisher likeness when known. A matching ISBN decides: ${MATCH_THRESHOLD} + ${1 - MATCH_THRESHOLD} × that. Otherwise an ISBN of another ` +
        'book (`mismatch`) or an ISBN no book has (`unknown`: the edition is not in the catalogue) multiplies by 0.8. ' +
        `The best candidate is the \`match\` when its confidence is at least ${MATCH_THRESHOLD} ` +
        '(tuned so that records of books not in the catalogue are almost never matched); otherwise `match` is null and the candidates show what came closest. ' +
        'Year and publisher mostly choose among editions of one work. ' +
        SHORT_CACHE,
      requestBody: { required: true, content: { 'application/json': { schema: matchRequest.meta({ id: 'MatchRequest' }) } } },
      responses: {
        '200': { description: 'The best match (or null), its confidence and signals, and the closest candidates.', headers: rateHeaders, content: { 'application/json': { schema: matchResult } } },
        '400': errorResponse(
          'Neither `title` nor `isbn` (`title or isbn required`); malformed JSON (`malformed JSON body`) or a body that is not an object; a field of the wrong type ' +
            '(`year must be an integer such as 1997`), too long (500 characters) or unknown; or only an `isbn` that is not a valid ISBN.',
        ),
        '413': errorResponse('Body larger than 64 KiB (`code` `payload_too_large`).'),
        '415': unsupportedBody,
        ...commonErrors,
      },
    },
  },
  '/v1/books/{id}/recommendations': {
    get: {
      summary: 'Books to read next',
      description:
        'Books a reader of this one is likely to want next, best first, one edition per work and never an edition of this book\'s own work ' +
        '(nor a book with nearly the same title and author that the catalogue keeps as another work). Signals, strongest first: co-reading (what readers who liked this book also liked, ' +
        'from Book-Crossing ratings), the same series, the same author, and content likeness of title, subtitle, series and author names; popular books rank a little higher and ' +
        'fill the list when few books are related. The catalogue has no subjects, so they play no part. A merged id answers 301 to `/v1/books/<survivor>/recommendations`. ' +
        SHORT_CACHE,
      parameters: [idParameter('book')],
      requestParams: { query: recommendQuery },
      responses: {
        '200': { description: 'Recommendations.', headers: rateHeaders, content: { 'application/json': { schema: recommendations } } },
        '301': merged('books'),
        '400': errorResponse('`limit` out of range.'),
        '404': errorResponse('No such book; the message names the id.'),
        ...commonErrors,
      },
    },
  },
};

// ------------------------------------------------------------------------------------------------
// Batches and the reconciliation service (src/services/batch.ts, reconcile.ts)

/** A batch route's 429: the whole batch is refused when the budget cannot cover all its items. */
const batchRefused: Response = {
  description:
    'The key\'s remaining budget cannot cover every item of the batch (each item counts as one request); nothing was done and nothing was spent. ' +
    '`Retry-After` says when enough of the budget is back for the whole batch. A batch larger than the whole budget is never admitted: send smaller ones.',
  headers: { 'Retry-After': { description: 'Seconds until the whole batch fits.', schema: { type: 'integer' } }, ...rateHeaders },
  content: { 'application/json': { schema: errorBody } },
};

const BATCH_BUDGET = 'Each item draws one unit of the key\'s rate budget, all or none; a body that cannot be read as a batch costs one unit, like any request.';

/** POST /v1/<family>/batch: one bulk lookup, each key answered as `GET /v1/<family>/{key}` answers it. */
function bulkLookup(family: BulkKind['family'], what: string, example: { keys: string[]; results: object[] }): ZodOpenApiPathItemObject {
  const { body, answer, field, key, record } = BULK_KINDS.find((kind) => kind.family === family)!;
  return {
    post: {
      summary: `Look up ${what} at once`,
      description:
        `\`{"${field}": [...]}\`: 1 to ${LOOKUP_BATCH_MAX} different strings. Each is answered exactly as \`GET /v1/${family}/{${key}}\` answers it, in input order: \`${key}\` as given, the \`status\` of that GET, ` +
        `and its body, the \`${record}\` or the \`error\` object (a 400 or 404 fails that item only). A merged one is followed to the survivor, as a client follows the 301: ` +
        `\`status\` 200, the survivor's \`${record}\`, and \`merged_into\` naming it. Items read and fill the same 24-hour cache entries as the GET (keyed by the GET's URL, ` +
        `the ${key} URL-encoded as given); those not cached are read together. ${BATCH_BUDGET}`,
      requestBody: { required: true, content: { 'application/json': { schema: body, example: { [field]: example.keys } } } },
      responses: {
        '200': { description: 'One result per key, in input order.', headers: rateHeaders, content: { 'application/json': { schema: answer, example: { results: example.results } } } },
        '400': errorResponse(`The body is not \`{"${field}": [...]}\` with 1 to ${LOOKUP_BATCH_MAX} strings, each given once; the message names the problem (e.g. \`${field}[3] repeats ${field}[0] (...): give each once\`).`),
        '413': errorResponse(`Body larger than ${BATCH_BODY_LIMIT_BYTES / 1024} KiB (\`code\` \`payload_too_large\`).`),
        '415': unsupportedBody,
        ...commonErrors,
        '429': batchRefused,
      },
    },
  };
}

const exampleBook = { id: 'bk_5n1x7q0c2r9a', work_id: 'wk_8d2m4q6s0v1x', isbn_13: '9780439023481', title: 'The Hunger Games' };

const batchPaths: Record<string, ZodOpenApiPathItemObject> = {
  '/v1/isbn/batch': bulkLookup('isbn', `up to ${LOOKUP_BATCH_MAX} books by ISBN`, {
    keys: ['9780439023481', '0-439-13959-7', '9780306406157', '12345'],
    results: [
      { isbn: '9780439023481', status: 200, book: exampleBook },
      { isbn: '0-439-13959-7', status: 200, merged_into: 'bk_2c4f6h8j0k1m', book: { id: 'bk_2c4f6h8j0k1m', isbn_13: '9780439139595', title: 'Harry Potter and the Goblet of Fire' } },
      { isbn: '9780306406157', status: 404, error: { code: 'not_found', message: 'no book with ISBN 9780306406157' } },
      { isbn: '12345', status: 400, error: { code: 'bad_request', message: 'invalid ISBN: "12345" is not a valid ISBN-10 or ISBN-13' } },
    ],
  }),
  '/v1/books/batch': bulkLookup('books', `up to ${LOOKUP_BATCH_MAX} books (editions) by id`, {
    keys: ['bk_5n1x7q0c2r9a', 'bk_0000000000zz'],
    results: [
      { id: 'bk_5n1x7q0c2r9a', status: 200, book: exampleBook },
      { id: 'bk_0000000000zz', status: 404, error: { code: 'not_found', message: 'book bk_0000000000zz not found' } },
    ],
  }),
  '/v1/works/batch': bulkLookup('works', `up to ${LOOKUP_BATCH_MAX} works by id`, {
    keys: ['wk_8d2m4q6s0v1x', 'wk_1'],
    results: [
      { id: 'wk_8d2m4q6s0v1x', status: 200, work: { id: 'wk_8d2m4q6s0v1x', title: 'The Hunger Games', edition_count: 3 } },
      { id: 'wk_1', status: 400, error: { code: 'bad_request', message: 'invalid work id: "wk_1" is not of the form wk_8d2m4q6s0v1x' } },
    ],
  }),
  '/v1/authors/batch': bulkLookup('authors', `up to ${LOOKUP_BATCH_MAX} authors by id`, {
    keys: ['au_9r2t4v6x8z0b', 'au_3k8d0f1m2x7p'],
    results: [
      { id: 'au_9r2t4v6x8z0b', status: 200, merged_into: 'au_3k8d0f1m2x7p', author: { id: 'au_3k8d0f1m2x7p', name: 'Suzanne Collins' } },
      { id: 'au_3k8d0f1m2x7p', status: 200, author: { id: 'au_3k8d0f1m2x7p', name: 'Suzanne Collins' } },
    ],
  }),
  '/v1/match/batch': {
    post: {
      summary: `Match up to ${MATCH_BATCH_MAX} records at once`,
      description:
        'Each record is the body of a `POST /v1/match` and is answered exactly as that route answers it: the match result, or the error object of its 400 ' +
        '(which fails that record only). Results come in input order. The records not in the short cache are matched together, one request to the index for all ' +
        `their titles, which makes a batch several times cheaper than the same records one by one. ${BATCH_BUDGET}`,
      requestBody: {
        required: true,
        content: {
          'application/json': {
            schema: matchBatchBody,
            example: { records: [{ title: 'The Hunger Games', author: 'Suzanne Collins', year: 2008 }, { isbn: '0439023483' }, { author: 'nobody' }] },
          },
        },
      },
      responses: {
        '200': {
          description: 'One result per record, in input order.',
          headers: rateHeaders,
          content: {
            'application/json': {
              schema: matchBatchResult,
              example: { results: [{ match: { id: 'bk_5n1x7q0c2r9a', title: 'The Hunger Games' }, confidence: 0.985, signals: { isbn: 'absent', title: 1, author: 1, year: 1, publisher: null }, candidates: [] }, { error: { code: 'bad_request', message: 'title or isbn required' } }] },
            },
          },
        },
        '400': errorResponse(`The body is not \`{"records": [...]}\` with 1 to ${MATCH_BATCH_MAX} records; the message names the problem.`),
        '413': errorResponse(`Body larger than ${BATCH_BODY_LIMIT_BYTES / 1024} KiB (\`code\` \`payload_too_large\`).`),
        '415': unsupportedBody,
        ...commonErrors,
        '429': batchRefused,
      },
    },
  },
  '/reconcile': {
    get: {
      summary: 'Reconciliation service (W3C Reconciliation Service API 0.2): manifest',
      description:
        'Without `queries`: the service manifest, public (no key, not metered, not rate limited), since a client such as OpenRefine reads it before it knows it must ask for a key. ' +
        'Its `authentication` asks for the key as an API key in the `Authorization` header, written `Bearer svc_live_<kid>_<secret>` (the manifest\'s schema has no Bearer scheme). ' +
        'Types: `book` (the default), `work`, `author`; properties: `author`, `isbn`, `year`, `publisher`. ' +
        'With `queries` (a URL-encoded query batch): the same as the POST, with the key. Every `/reconcile` path answers CORS for any origin.',
      security: [{}, { bearer: [] }],
      parameters: [query('queries', 'A query batch as JSON, e.g. `{"q0": {"query": "The Hunger Games"}}`; with it the key is required.', { type: 'string' })],
      responses: {
        '200': { description: 'The manifest, or the result batch when `queries` was given.', content: { 'application/json': { schema: { type: 'object' }, example: { versions: ['0.2'], name: 'bookmeta book catalogue', identifierSpace: 'http://127.0.0.1:8080/v1/', schemaSpace: 'http://127.0.0.1:8080/reconcile#types', view: { url: 'http://127.0.0.1:8080/v1/books/{{id}}' }, defaultTypes: [{ id: 'book', name: 'Book' }, { id: 'work', name: 'Work' }, { id: 'author', name: 'Author' }], batchSize: 50, authentication: { type: 'apiKey', in: 'header', name: 'Authorization' } } } } },
        '400': errorResponse('`queries` is not a valid query batch; the message names the query and the problem.'),
        ...commonErrors,
      },
    },
    post: {
      summary: 'Reconciliation service: a batch of queries',
      description:
        'A query batch in the form field `queries` (`application/x-www-form-urlencoded`, what OpenRefine sends) or as the JSON body itself, checked against the 0.2 schema. ' +
        'Book and work queries are matched as `POST /v1/match` matches (the query is the title; properties give author, ISBN, year, publisher; unknown properties are ignored), ' +
        'author queries are an author search. `score` is the confidence on 0 to 100; `match` is true only for the candidate `/v1/match` would return as its match ' +
        '(for authors: the same name, initials, order and diacritics aside, and no other candidate\'s); `features` are the signals. A query of a type the service does not have, ' +
        `or with nothing to match, gets no candidates. At most 50 queries. ${BATCH_BUDGET.replace('item', 'query')}`,
      requestBody: {
        required: true,
        content: {
          'application/x-www-form-urlencoded': { schema: { type: 'object', required: ['queries'], properties: { queries: { type: 'string', description: 'The query batch as JSON.' } } } },
          'application/json': {
            schema: queryBatch,
            example: { q0: { query: 'The Hunger Games', properties: [{ pid: 'author', v: 'Suzanne Collins' }] }, q1: { query: 'Rowling, J.K.', type: 'author', limit: 1 } },
          },
        },
      },
      responses: {
        '200': {
          description: 'The result batch: `{"<query id>": {"result": [candidates, best first]}}`.',
          headers: rateHeaders,
          content: {
            'application/json': {
              schema: resultBatch,
              example: { q0: { result: [{ id: 'bk_5n1x7q0c2r9a', name: 'The Hunger Games', description: 'Suzanne Collins · 2008 · Scholastic Press · ISBN 9780439023481', score: 98.5, match: true, features: [{ id: 'confidence', value: 0.985 }, { id: 'title', value: 1 }, { id: 'author', value: 1 }], type: [{ id: 'book', name: 'Book' }] }] } },
            },
          },
        },
        '400': errorResponse('No `queries` field, malformed JSON, or a query the 0.2 schema refuses; the message names the query and the problem (e.g. `queries.q1: query or a non-empty properties is required`).'),
        '413': errorResponse('More than 50 queries (the manifest\'s `batchSize`), or a body larger than 512 KiB (`code` `payload_too_large`).'),
        '415': errorResponse('A body neither form-encoded nor JSON, or encoded (`code` `unsupported_media_type`).'),
        ...commonErrors,
        '429': batchRefused,
      },
    },
  },
  '/reconcile/suggest/property': {
    get: {
      summary: 'Reconciliation service: the properties a query may give',
      description: 'The suggest service for properties of the 0.2 protocol: those whose id or name has a word starting with `prefix`. Public, like the manifest: it shows no catalogue data.',
      security: [],
      parameters: [query('prefix', 'The start of a word of the property\'s id or name; all properties without it.', { type: 'string' })],
      responses: {
        '200': { description: 'Matching properties.', content: { 'application/json': { schema: { type: 'object' }, example: { result: [{ id: 'publisher', name: 'Publisher', description: "The publisher's name." }] } } } },
      },
    },
  },
};

/** zod gives every integer the bounds of a safe integer; they say nothing a reader needs. */
const withoutSafeIntegerBounds: ZodOpenApiOverride = ({ jsonSchema }) => {
  if (jsonSchema.minimum === Number.MIN_SAFE_INTEGER) delete jsonSchema.minimum;
  if (jsonSchema.maximum === Number.MAX_SAFE_INTEGER) delete jsonSchema.maximum;
};

export const openApiDocument = createDocument({
  openapi: '3.1.0',
  info: {
    title: 'Book metadata service',
    version: '1.0.0',
    description:
      'Read-oriented book metadata: lookups by ISBN and id, search, match, recommendations and a change feed. ' +
      'Every `/v1` route needs `Authorization: Bearer svc_live_<kid>_<secret>`. Every error body is `{"error": {"code", "message"}}`. ' +
      'Paths are exact and case-sensitive: only `/health`, `/openapi.json`, the `/docs` page and the reconciliation manifest (`GET /reconcile` without `queries`, and its property list) need no key, and any other path, in any spelling, is refused 401 without one and 404 with one. ' +
      'Requests HTTP itself refuses get the same error body: 400 `bad_request` (a malformed request line or header, HTTP/1.1 without `Host`), 408 `request_timeout`, ' +
      '417 `expectation_failed` (an `Expect` other than `100-continue`) and 431 `headers_too_large` (request line and headers over 16 KB). ' +
      'Ids are opaque, URL-safe and stable; their prefix shows what they name (`bk_` book edition, `wk_` work, `au_` author). ' +
      'Unknown fields of a record are `null`, never missing.',
  },
  servers: [{ url: '/' }],
  security: [{ bearer: [] }],
  paths: {
    '/health': {
      get: {
        summary: 'Health of the service and each dependency',
        description: 'Public: no key, not metered, not rate limited. 200 when every dependency answers, 503 when one does not. `metering.dropped` counts usage records lost to a full buffer.',
        security: [],
        responses: {
          '200': { description: 'Every dependency is up.', content: { 'application/json': { schema: health } } },
          '503': { description: 'At least one dependency is down.', content: { 'application/json': { schema: health } } },
        },
      },
    },
    '/openapi.json': {
      get: {
        summary: 'This document',
        description: 'Public: no key, not metered, not rate limited.',
        security: [],
        responses: { '200': { description: 'The OpenAPI 3.1 document.', content: { 'application/json': { schema: { type: 'object' } } } } },
      },
    },
    '/docs': {
      get: {
        summary: 'Interactive API reference',
        description: 'This document rendered as a page (Swagger UI, served from the service itself: nothing is loaded from elsewhere). Public: no key, not metered, not rate limited.',
        security: [],
        responses: { '200': { description: 'The HTML page.', content: { 'text/html': { schema: { type: 'string' } } } } },
      },
    },
    '/docs/{asset}': {
      get: {
        summary: 'A file of the reference page',
        description: 'The stylesheet, scripts and icon `/docs` loads. Public, like the page.',
        security: [],
        parameters: [{ name: 'asset', in: 'path', required: true, schema: { type: 'string', enum: ['swagger-ui.css', 'swagger-ui-bundle.js', 'favicon-32x32.png', 'start.js'] } }],
        responses: {
          '200': { description: 'The file.', content: { 'text/css': { schema: { type: 'string' } }, 'text/javascript': { schema: { type: 'string' } }, 'image/png': { schema: { type: 'string' } } } },
          '401': errorResponse('Any other name: not a public path, so it needs the key like every path outside the public list.'),
        },
      },
    },
    '/v1/isbn/{isbn}': pointLookup(
      'Look up a book by ISBN',
      'Accepts ISBN-10 or ISBN-13, with or without hyphens or spaces; the check digit is validated. An ISBN whose edition was merged answers 301 to the surviving book.',
      { name: 'isbn', in: 'path', required: true, description: 'ISBN-10 or ISBN-13.', schema: { type: 'string' }, example: '978-0-439-02348-1' },
      bookRecord,
      'books',
      'No book has this ISBN; the message names it.',
      { '400': errorResponse('Not a valid ISBN (`code` `bad_request`).') },
    ),
    '/v1/books/{id}': pointLookup('A book (edition) by id', 'One edition of a work.', idParameter('book'), bookRecord, 'books', 'No such book; the message names the id.', malformedId('book')),
    '/v1/works/{id}': pointLookup(
      'A work by id',
      `A work with its authors, its edition count and its most popular editions (at most ${WORK_EDITIONS_SHOWN}).`,
      idParameter('work'),
      workRecord,
      'works',
      'No such work; the message names the id.',
      malformedId('work'),
    ),
    '/v1/authors/{id}': pointLookup(
      'An author by id',
      `An author with the other spellings of their name and their most popular works (at most ${AUTHOR_WORKS_SHOWN}).`,
      idParameter('author'),
      authorRecord,
      'authors',
      'No such author; the message names the id.',
      malformedId('author'),
    ),
    '/v1/openlibrary/{key}': {
      get: {
        summary: 'Our record of an Open Library key',
        description:
          'Answers 301 to the record the catalogue holds for an Open Library key: an edition key (`OL…M`) to `/v1/books/{id}`, a work key (`OL…W`) to `/v1/works/{id}`, ' +
          'an author key (`OL…A`) to `/v1/authors/{id}`. Several edition keys may lead to one book (one ISBN, one row). A key Open Library redirected leads where its target does, ' +
          'a record merged here to the survivor. Every record lists its keys under `identifiers.openlibrary`.',
        parameters: [{ name: 'key', in: 'path', required: true, description: 'An Open Library key without its path.', schema: { type: 'string', pattern: '^OL[1-9][0-9]*[AWM]$' }, example: 'OL7353617M' }],
        responses: {
          '301': {
            description: 'Our record: `Location` is its URL.',
            headers: { Location: { schema: { type: 'string' } }, ...rateHeaders },
            content: { 'application/json': { schema: openLibraryTarget } },
          },
          '400': errorResponse('Not an Open Library key of the form `OL7353617M`, `OL45804W` or `OL23919A` (`code` `bad_request`).'),
          '404': errorResponse('No record with this key has been imported.'),
          '410': errorResponse('Open Library deleted the key, or the record it led to was deleted (`code` `gone`): never answered as if live.'),
          ...commonErrors,
        },
      },
    },
    ...searchPaths,
    ...batchPaths,
    '/v1/changes': {
      get: {
        summary: 'Changes since a cursor',
        description:
          'Every insert, update, delete and merge of a book, work or author, in sequence order, which is commit order: a consumer that ' +
          'keeps passing `next` back as `since` sees every change exactly once. Start with `since=0`. A merge names the survivor. ' +
          'Full pages never change and are cached briefly; the page at the head of the feed is always fresh.',
        requestParams: { query: changesQuery },
        responses: {
          '200': { description: 'A page of changes.', headers: rateHeaders, content: { 'application/json': { schema: changePage } } },
          '400': errorResponse('`since` missing (`since cursor is required`), malformed, or ahead of the feed (unknown); or `limit` out of range.'),
          ...commonErrors,
        },
      },
    },
    '/mcp': {
      post: {
        summary: 'MCP endpoint (streamable HTTP)',
        description:
          'Model Context Protocol JSON-RPC messages over streamable HTTP, stateless: no session id, any instance answers any request, and a `tools/call` needs no ' +
          '`initialize` first. Send `Accept: application/json, text/event-stream`; answers are plain JSON, never an event stream. ' +
          `Tools: ${tools.map((tool) => tool.name).join(', ')}; each returns, as text, the JSON its \`/v1\` route returns for the same request ` +
          '(a batch tool, its batch route\'s), ' +
          'and a failing one the API\'s error JSON with `isError` set; a merged id is followed to the survivor, with a second text item saying so. ' +
          'Same Bearer key, rate budget and metering as `/v1` (usage is recorded per tool); a 401 comes before any MCP message is read. GET and DELETE answer 405.',
        requestBody: {
          required: true,
          content: { 'application/json': { schema: { type: ['object', 'array'], description: 'A JSON-RPC 2.0 message (e.g. `initialize`, `tools/list`, `tools/call`) or a batch of them.' } } },
        },
        responses: {
          '200': { description: 'The JSON-RPC response (an array for a batch).', headers: rateHeaders, content: { 'application/json': { schema: { type: ['object', 'array'] } } } },
          '202': { description: 'Only notifications were sent; no body.' },
          '400': errorResponse('Malformed JSON, a body that is not JSON-RPC 2.0, or an unsupported `MCP-Protocol-Version`.'),
          '406': errorResponse('`Accept` does not allow `application/json` (`code` `not_acceptable`).'),
          '413': errorResponse('Body larger than 64 KiB (`code` `payload_too_large`).'),
          '415': unsupportedBody,
          ...commonErrors,
        },
      },
    },
  },
  components: {
    securitySchemes: {
      bearer: { type: 'http', scheme: 'bearer', description: 'An API key `svc_live_<kid>_<secret>`, issued by hand. Send it once, after `Bearer `.' },
    },
  },
}, { override: withoutSafeIntegerBounds });

import { parseInput } from '../../errors.js';
import { LOOKUP_BATCH_MAX, matchBatch, matchBatchBody, MATCH_BATCH_MAX, matchBatchResult } from '../../services/batch.js';
import { BULK_KINDS, bulkKeys, bulkLookup, bulkUnits, type BulkKind } from '../../services/bulkLookups.js';
import { admitBatch, BATCH_BODY_LIMIT_BYTES } from '../middleware/batchBudget.js';
import { readJsonBody } from '../middleware/jsonBody.js';
import { BATCH_BUDGET, bodyTooLarge, errorResponse, rateHeaders, unsupportedBody } from '../responseDocs.js';
import type { Route, ToolNames } from '../route.js';
import { BOOK_FIELDS } from './lookups.js';
import { MATCH_ANSWER } from './search.js';
import { sendJson, sendJsonText } from '../messages.js';

/** Batch routes: many items in one request, each answered as its single route answers it, in input order. */

const exampleBook = { id: 'bk_5n1x7q0c2r9a', work_id: 'wk_8d2m4q6s0v1x', isbn_13: '9780439023481', title: 'The Hunger Games' };

const BULK_EXAMPLES: Record<BulkKind['family'], { what: string; name: string; tool?: ToolNames; keys: string[]; results: object[] }> = {
  isbn: {
    what: `up to ${LOOKUP_BATCH_MAX} books by ISBN`,
    name: 'lookupIsbns',
    tool: {
      name: 'lookup_isbns',
      title: 'Books by many ISBNs',
      description:
        `Look up to ${LOOKUP_BATCH_MAX} ISBNs at once (a list of ISBNs, a spreadsheet column), each answered as lookup_isbn answers it, from the same cache. ` +
        'Much faster than calling lookup_isbn once per ISBN. A list may repeat an ISBN or give its ISBN-10 beside its ISBN-13: each entry is answered in its place, and each distinct ISBN draws one unit of the rate budget; a batch the remaining budget cannot cover is refused whole. ' +
        "Answers {results: [...]}, one per ISBN in input order: {isbn (as given), status: 200, book} when found; with merged_into (the surviving book's id, to use from now on) " +
        "when the ISBN's edition was merged into another, whose record is the book; {isbn, status: 400, error} for an invalid ISBN; {isbn, status: 404, error} when no book in the catalogue has it. " +
        BOOK_FIELDS,
    },
    keys: ['9780439023481', '0-439-13959-7', '9780306406157', '12345'],
    results: [
      { isbn: '9780439023481', status: 200, book: exampleBook },
      {
        isbn: '0-439-13959-7',
        status: 200,
        merged_into: 'bk_2c4f6h8j0k1m',
        book: { id: 'bk_2c4f6h8j0k1m', isbn_13: '9780439139595', title: 'Harry Potter and the Goblet of Fire' },
      },
      { isbn: '9780306406157', status: 404, error: { code: 'not_found', message: 'no book with ISBN 9780306406157' } },
      { isbn: '12345', status: 400, error: { code: 'bad_request', message: 'invalid ISBN: "12345" is not a valid ISBN-10 or ISBN-13' } },
    ],
  },
  books: {
    what: `up to ${LOOKUP_BATCH_MAX} books (editions) by id`,
    name: 'getBooks',
    keys: ['bk_5n1x7q0c2r9a', 'bk_0000000000zz'],
    results: [
      { id: 'bk_5n1x7q0c2r9a', status: 200, book: exampleBook },
      { id: 'bk_0000000000zz', status: 404, error: { code: 'not_found', message: 'book bk_0000000000zz not found' } },
    ],
  },
  works: {
    what: `up to ${LOOKUP_BATCH_MAX} works by id`,
    name: 'getWorks',
    keys: ['wk_8d2m4q6s0v1x', 'wk_1'],
    results: [
      { id: 'wk_8d2m4q6s0v1x', status: 200, work: { id: 'wk_8d2m4q6s0v1x', title: 'The Hunger Games', edition_count: 3 } },
      { id: 'wk_1', status: 400, error: { code: 'bad_request', message: 'invalid work id: "wk_1" is not of the form wk_8d2m4q6s0v1x' } },
    ],
  },
  authors: {
    what: `up to ${LOOKUP_BATCH_MAX} authors by id`,
    name: 'getAuthors',
    keys: ['au_9r2t4v6x8z0b', 'au_3k8d0f1m2x7p'],
    results: [
      { id: 'au_9r2t4v6x8z0b', status: 200, merged_into: 'au_3k8d0f1m2x7p', author: { id: 'au_3k8d0f1m2x7p', name: 'Suzanne Collins' } },
      { id: 'au_3k8d0f1m2x7p', status: 200, author: { id: 'au_3k8d0f1m2x7p', name: 'Suzanne Collins' } },
    ],
  },
};

/**
 * POST /v1/<family>/batch: one bulk lookup, each key answered as `GET /v1/<family>/{key}` answers it;
 * beside the GET of one, as /v1/match/batch is beside /v1/match.
 */
function bulkRoute(kind: BulkKind): Route {
  const { family, body, answer, field, key, record } = kind;
  const example = BULK_EXAMPLES[family];
  return {
    name: example.name,
    method: 'POST',
    path: `/v1/${family}/batch`,
    access: 'key',
    cost: 'items',
    cache: 'none',
    tag: 'batches',
    partial: { record: kind.recordSchema, what: record, at: ['results', '*', record] },
    tool: example.tool,
    doc: {
      summary: `Look up ${example.what} at once`,
      description:
        `\`{"${field}": [...]}\`: 1 to ${LOOKUP_BATCH_MAX} ${family === 'isbn' ? 'ISBNs' : 'strings'}, as a real list holds them: a key may come again${family === 'isbn' ? ' or in another spelling (an ISBN-10 beside its ISBN-13, with or without hyphens)' : ''}; each entry is answered in its place and each distinct ${family === 'isbn' ? 'ISBN' : 'key'} draws one unit of the budget, however often it comes. ` +
        `Each is answered exactly as \`GET /v1/${family}/{${key}}\` answers it, in input order: \`${key}\` as given, the \`status\` of that GET, ` +
        `and its body, the \`${record}\` or the \`error\` object (a 400 or 404 fails that item only). A merged one is followed to the survivor, as a client follows the 301: ` +
        `\`status\` 200, the survivor's \`${record}\`, and \`merged_into\` naming it. Items read and fill the same 24-hour cache entries as the GET (keyed by the GET's URL, ` +
        `the ${key} URL-encoded as given); those not cached are read together. ${BATCH_BUDGET}`,
      requestBody: { required: true, content: { 'application/json': { schema: body, example: { [field]: example.keys } } } },
      responses: {
        '200': {
          description: 'One result per key, in input order.',
          headers: rateHeaders,
          content: { 'application/json': { schema: answer, example: { results: example.results } } },
        },
        '400': errorResponse(
          `The body is not \`{"${field}": [...]}\` with 1 to ${LOOKUP_BATCH_MAX} strings; the message names the problem (e.g. \`${field}[3] must be a string, got number\`).`,
        ),
        '413': bodyTooLarge(BATCH_BODY_LIMIT_BYTES),
        '415': unsupportedBody,
      },
    },
    batchUnits: (body) => bulkUnits(kind, bulkKeys(kind, body)),
    answer: async (services, requestId, { body }) => ({ text: await bulkLookup(services, requestId, kind, bulkKeys(kind, body)) }),
    async handle(ctx, services) {
      const keys = await admitBatch(
        ctx,
        services,
        async () => bulkKeys(kind, await readJsonBody(ctx, BATCH_BODY_LIMIT_BYTES)),
        (read) => bulkUnits(kind, read),
      );
      sendJsonText(ctx, await bulkLookup(services, ctx.state.requestId, kind, keys));
    },
  };
}

const matchRecords = (body: unknown): unknown[] => parseInput(matchBatchBody, body).records;

export const batchRoutes: readonly Route[] = [
  ...BULK_KINDS.map(bulkRoute),
  {
    name: 'matchBooks',
    method: 'POST',
    path: '/v1/match/batch',
    access: 'key',
    cost: 'items',
    cache: 'none',
    tag: 'batches',
    tool: {
      name: 'match_books',
      title: 'Match many references at once',
      description:
        `Resolve up to ${MATCH_BATCH_MAX} messy references at once (a reading list, a bibliography, the rows of a spreadsheet), each record exactly as match_book takes it. ` +
        'Much faster than calling match_book once per record. Each record draws one unit of the rate budget, and a batch the remaining budget cannot cover is refused whole. ' +
        `Answers {results: [...]}, one per record in input order, each what match_book answers for it: ${MATCH_ANSWER} ` +
        'A record that is not a valid match request (no title or isbn, an unknown field, a wrong type) answers {error: {code: "bad_request", message}} in its place, without failing the others.',
    },
    batchUnits: (body) => matchRecords(body).length,
    answer: async (services, _requestId, { body }) => ({ text: JSON.stringify(await matchBatch(services, matchRecords(body))) }),
    doc: {
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
            example: {
              records: [{ title: 'The Hunger Games', author: 'Suzanne Collins', year: 2008 }, { isbn: '0439023483' }, { author: 'nobody' }],
            },
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
              example: {
                results: [
                  {
                    match: { id: 'bk_5n1x7q0c2r9a', title: 'The Hunger Games' },
                    confidence: 0.985,
                    signals: { isbn: 'absent', title: 1, author: 1, year: 1, publisher: null },
                    candidates: [],
                  },
                  { error: { code: 'bad_request', message: 'title or isbn required' } },
                ],
              },
            },
          },
        },
        '400': errorResponse(`The body is not \`{"records": [...]}\` with 1 to ${MATCH_BATCH_MAX} records; the message names the problem.`),
        '413': bodyTooLarge(BATCH_BODY_LIMIT_BYTES),
        '415': unsupportedBody,
      },
    },
    async handle(ctx, services) {
      const records = await admitBatch(ctx, services, async () => matchRecords(await readJsonBody(ctx, BATCH_BODY_LIMIT_BYTES)));
      sendJson(ctx, await matchBatch(services, records));
    },
  },
];

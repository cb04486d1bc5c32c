import { badRequest } from '../../errors.js';
import type { Services } from '../../services/context.js';
import {
  parseQueryBatch,
  queryBatch,
  reconcile,
  reconcileManifest,
  resultBatch,
  suggestEntities,
  suggestProperties,
} from '../../services/reconcile.js';
import { admitBatch, BATCH_BODY_LIMIT_BYTES } from '../middleware/batchBudget.js';
import { readBodyText, readJsonBody } from '../middleware/jsonBody.js';
import { BATCH_BUDGET, errorResponse, rateHeaders } from '../responseDocs.js';
import type { AppContext, Middleware, RequestShape, Route } from '../route.js';
import { queryParam, sendJson } from '../messages.js';

/**
 * The Reconciliation Service API 0.2 endpoint for OpenRefine and other clients. Its manifest (GET
 * without `queries`) and the property list of its suggest service are public: a client reads the
 * manifest before it knows it must ask its user for a key, and neither shows any catalogue data.
 * Query batches (POST, or GET with `queries`) need the key and draw one unit of its budget per query.
 */

const RECONCILE_PATH = '/reconcile';

const isReconcilePath = (path: string): boolean => path === RECONCILE_PATH || path.startsWith(`${RECONCILE_PATH}/`);

/** A browser's preflight (OPTIONS) of a /reconcile path, answered by reconcileCrossOrigin. */
export const isReconcilePreflight = ({ method, path }: RequestShape): boolean => method === 'OPTIONS' && isReconcilePath(path);

const EXPOSED = 'Retry-After, RateLimit-Limit, RateLimit-Remaining, RateLimit-Reset, RateLimit-Policy, X-Request-Id';

/**
 * Cross-origin access to every /reconcile path, as the protocol requires of all its endpoints, so a
 * web client on another origin can read the manifest and send the key: any origin, no cookies
 * (the key is a header). Errors carry it too (it is set before the key is checked), and a preflight
 * is answered here, before any key is asked for.
 */
export const reconcileCrossOrigin = (): Middleware => async (ctx, next) => {
  if (!isReconcilePath(ctx.path)) return next();
  ctx.set('Access-Control-Allow-Origin', '*');
  if (isReconcilePreflight(ctx)) {
    ctx.set({
      'Access-Control-Allow-Methods': 'GET, POST',
      'Access-Control-Allow-Headers': 'Authorization, Content-Type',
      'Access-Control-Max-Age': '86400',
    });
    ctx.status = 204;
    return;
  }
  ctx.set('Access-Control-Expose-Headers', EXPOSED);
  await next();
};

function parseJsonText(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    throw badRequest('queries is not valid JSON');
  }
}

/** The batch of a POST: the form field `queries` (what OpenRefine sends), or a JSON body that is the batch itself. */
async function postedBatch(ctx: AppContext): Promise<unknown> {
  if (!ctx.is('application/x-www-form-urlencoded')) return readJsonBody(ctx, BATCH_BODY_LIMIT_BYTES);
  const form = new URLSearchParams(await readBodyText(ctx, 'application/x-www-form-urlencoded', BATCH_BODY_LIMIT_BYTES));
  const queries = form.getAll('queries');
  if (queries.length === 0) throw badRequest('form field queries is required: queries=<JSON query batch>');
  if (queries.length > 1) throw badRequest('form field queries is given more than once');
  return parseJsonText(queries[0]!);
}

const EXAMPLE_BATCH = {
  q0: { query: 'The Hunger Games', properties: [{ pid: 'author', v: 'Suzanne Collins' }] },
  q1: { query: 'Rowling, J.K.', type: 'author', limit: 1 },
};

const EXAMPLE_RESULTS = {
  q0: {
    result: [
      {
        id: 'bk_5n1x7q0c2r9a',
        name: 'The Hunger Games',
        description: 'Suzanne Collins · 2008 · Scholastic Press · ISBN 9780439023481',
        score: 98.5,
        match: true,
        features: [
          { id: 'confidence', value: 0.985 },
          { id: 'title', value: 1 },
          { id: 'author', value: 1 },
        ],
        type: [{ id: 'book', name: 'Book' }],
      },
    ],
  },
};

const EXAMPLE_MANIFEST = {
  versions: ['0.2'],
  name: 'bookmeta book catalogue',
  identifierSpace: 'http://127.0.0.1:8080/v1/',
  schemaSpace: 'http://127.0.0.1:8080/reconcile#types',
  view: { url: 'http://127.0.0.1:8080/v1/books/{{id}}' },
  defaultTypes: [
    { id: 'book', name: 'Book' },
    { id: 'work', name: 'Work' },
    { id: 'author', name: 'Author' },
  ],
  batchSize: 50,
  authentication: { type: 'apiKey', in: 'header', name: 'Authorization' },
};

/** Answers a query batch, its queries spending the key's budget (admitBatch). */
async function answer(ctx: AppContext, services: Services, batch: () => Promise<unknown>): Promise<void> {
  const queries = await admitBatch(ctx, services, async () => parseQueryBatch(await batch()));
  sendJson(ctx, await reconcile(services, queries));
}

const isManifest = (request: RequestShape): boolean => request.query.queries === undefined;

export const reconcileRoutes: readonly Route[] = [
  {
    name: 'reconcileGet',
    method: 'GET',
    path: RECONCILE_PATH,
    access: (request) => (isManifest(request) ? 'public' : 'key'),
    cost: 'items',
    cache: 'none',
    tag: 'reconciliation',
    doc: {
      summary: 'Reconciliation service (W3C Reconciliation Service API 0.2): manifest',
      description:
        'Without `queries`: the service manifest, public (no key, not metered, not rate limited), since a client such as OpenRefine reads it before it knows it must ask for a key. ' +
        "Its `authentication` asks for the key as an API key in the `Authorization` header, written `Bearer svc_live_<kid>_<secret>` (the manifest's schema has no Bearer scheme). " +
        'Types: `book` (the default), `work`, `author`; properties: `author`, `isbn`, `year`, `publisher`. ' +
        'With `queries` (a URL-encoded query batch): the same as the POST, with the key. Every `/reconcile` path answers CORS for any origin. ' +
        "The manifest's URLs start with the server's configured public URL (`PUBLIC_URL`), else with the request's own scheme and `Host`.",
      parameters: [
        {
          name: 'queries',
          in: 'query',
          required: false,
          description: 'A query batch as JSON, e.g. `{"q0": {"query": "The Hunger Games"}}`; with it the key is required.',
          schema: { type: 'string' },
        },
      ],
      responses: {
        '200': {
          description: 'The manifest, or the result batch when `queries` was given.',
          content: { 'application/json': { schema: { type: 'object' }, example: EXAMPLE_MANIFEST } },
        },
        '400': errorResponse('`queries` is not a valid query batch, or names no query; the message names the query and the problem.'),
      },
    },
    async handle(ctx, services) {
      // Behind a proxy the request's Host may be an internal name, or whatever a client sent.
      if (isManifest(ctx)) sendJson(ctx, reconcileManifest(services.config.publicUrl ?? `${ctx.protocol}://${ctx.host}`));
      else await answer(ctx, services, () => Promise.resolve(parseJsonText(queryParam(ctx, 'queries')!)));
    },
  },
  {
    name: 'reconcilePost',
    method: 'POST',
    path: RECONCILE_PATH,
    access: 'key',
    cost: 'items',
    cache: 'none',
    tag: 'reconciliation',
    doc: {
      summary: 'Reconciliation service: a batch of queries',
      description:
        'A query batch in the form field `queries` (`application/x-www-form-urlencoded`, what OpenRefine sends) or as the JSON body itself, checked against the 0.2 schema. ' +
        'Book and work queries are matched as `POST /v1/match` matches (the query is the title; properties give author, ISBN, year, publisher; unknown properties are ignored), ' +
        'author queries are an author search. `score` is the confidence on 0 to 100; `match` is true only for the candidate `/v1/match` would return as its match ' +
        "(for authors: the same name, initials, order and diacritics aside, and no other candidate's); `features` are the signals. A query of a type the service does not have, " +
        `or with nothing to match, gets no candidates. 1 to 50 queries: an empty batch (\`{}\`) is a 400. ${BATCH_BUDGET.replace('item', 'query')}`,
      requestBody: {
        required: true,
        content: {
          'application/x-www-form-urlencoded': {
            schema: {
              type: 'object',
              required: ['queries'],
              properties: { queries: { type: 'string', description: 'The query batch as JSON.' } },
            },
            example: { queries: JSON.stringify(EXAMPLE_BATCH) },
          },
          'application/json': { schema: queryBatch, example: EXAMPLE_BATCH },
        },
      },
      responses: {
        '200': {
          description: 'The result batch: `{"<query id>": {"result": [candidates, best first]}}`.',
          headers: rateHeaders,
          content: { 'application/json': { schema: resultBatch, example: EXAMPLE_RESULTS } },
        },
        '400': errorResponse(
          'No `queries` field, malformed JSON, a batch that names no query, or a query the 0.2 schema refuses; the message names the query and the problem (e.g. `queries.q1: query or a non-empty properties is required`).',
        ),
        '413': errorResponse(
          "More than 50 queries (the manifest's `batchSize`), or a body larger than 512 KiB (`code` `payload_too_large`).",
        ),
        '415': errorResponse('A body neither form-encoded nor JSON, or encoded (`code` `unsupported_media_type`).'),
      },
    },
    handle: (ctx, services) => answer(ctx, services, () => postedBatch(ctx)),
  },
  {
    name: 'reconcileSuggestEntity',
    method: 'GET',
    path: '/reconcile/suggest/entity',
    access: 'key',
    cost: 'unit',
    cache: 'none',
    tag: 'reconciliation',
    doc: {
      summary: 'Reconciliation service: works and authors as typed',
      description:
        "The suggest service for entities of the 0.2 protocol, which OpenRefine's cell editor calls as a librarian types: the works and authors `GET /v1/suggest` " +
        'suggests for `prefix`, best first, a work with its first author and year, an author with their number of works. Needs the key and costs one unit, like `/v1/suggest`.',
      parameters: [
        { name: 'prefix', in: 'query', required: true, description: 'What has been typed so far.', schema: { type: 'string' } },
        { name: 'cursor', in: 'query', required: false, description: 'Suggestions to skip.', schema: { type: 'integer', minimum: 0 } },
      ],
      responses: {
        '200': {
          description: 'Suggested entities.',
          headers: rateHeaders,
          content: {
            'application/json': {
              schema: { type: 'object' },
              example: {
                result: [
                  {
                    id: 'wk_0q8v2mr4w5x1',
                    name: 'The Hobbit',
                    description: 'J.R.R. Tolkien, 1937',
                    notable: [{ id: 'work', name: 'Work' }],
                  },
                ],
              },
            },
          },
        },
        '400': errorResponse(
          '`prefix` missing (`prefix is required`) or longer than 100 characters, or `cursor` not a non-negative integer.',
        ),
      },
    },
    async handle(ctx, services) {
      sendJson(ctx, await suggestEntities(services, queryParam(ctx, 'prefix'), queryParam(ctx, 'cursor')));
    },
  },
  {
    name: 'reconcileSuggestProperty',
    method: 'GET',
    path: '/reconcile/suggest/property',
    access: 'public',
    cost: 'none',
    cache: 'none',
    tag: 'reconciliation',
    doc: {
      summary: 'Reconciliation service: the properties a query may give',
      description:
        'The suggest service for properties of the 0.2 protocol: those whose id or name has a word starting with `prefix`. Public, like the manifest: it shows no catalogue data.',
      parameters: [
        {
          name: 'prefix',
          in: 'query',
          required: false,
          description: "The start of a word of the property's id or name; all properties without it.",
          schema: { type: 'string' },
        },
      ],
      responses: {
        '200': {
          description: 'Matching properties.',
          content: {
            'application/json': {
              schema: { type: 'object' },
              example: { result: [{ id: 'publisher', name: 'Publisher', description: "The publisher's name." }] },
            },
          },
        },
      },
    },
    handle(ctx) {
      sendJson(ctx, suggestProperties(queryParam(ctx, 'prefix')));
    },
  },
];

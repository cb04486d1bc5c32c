/**
 * The OpenAPI 3.1 description served at /openapi.json. Written by hand, next to the routes it
 * describes; test/openapi.test.ts validates it and checks it against the router.
 */

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

const ref = (name: string): Json => ({ $ref: `#/components/schemas/${name}` });
const nullable = (type: string, extra: Record<string, Json> = {}): Json => ({ type: [type, 'null'], ...extra });

const errorResponse = (description: string): Json => ({
  description,
  content: { 'application/json': { schema: ref('Error') } },
});

const rateHeaders: Record<string, Json> = {
  'RateLimit-Limit': { description: 'Requests allowed per window for this key.', schema: { type: 'integer' } },
  'RateLimit-Remaining': { description: 'Requests left in the current window.', schema: { type: 'integer' } },
  'RateLimit-Reset': { description: 'Seconds until the oldest counted request leaves the window.', schema: { type: 'integer' } },
  'RateLimit-Policy': { description: 'The policy, e.g. `120;w=60`.', schema: { type: 'string' } },
};

const cacheHeader: Record<string, Json> = {
  'X-Cache': { description: '`HIT` when answered from the 24-hour point-lookup cache, else `MISS`.', schema: { type: 'string', enum: ['HIT', 'MISS'] } },
};

/** The responses every authenticated route can give besides its own. */
const commonErrors: Record<string, Json> = {
  '401': {
    description: 'Missing, malformed, unknown or revoked key (`code` is `unauthorized`). Carries `WWW-Authenticate: Bearer`.',
    headers: { 'WWW-Authenticate': { schema: { type: 'string', const: 'Bearer' } } },
    content: { 'application/json': { schema: ref('Error') } },
  },
  '429': {
    description: 'More than the key\'s budget (default 120 requests in a sliding 60-second window); `code` is `rate_limited`.',
    headers: { 'Retry-After': { description: 'Seconds to wait.', schema: { type: 'integer' } }, ...rateHeaders },
    content: { 'application/json': { schema: ref('Error') } },
  },
  '500': errorResponse('Server fault (`code` is `internal`); retry with backoff.'),
};

const idParameter = (what: string): Json => ({
  name: 'id',
  in: 'path',
  required: true,
  description: `The ${what} id. An id that names no ${what} answers 404.`,
  schema: { type: 'string' },
});

const merged = (family: string): Json => ({
  description: `The id was merged; \`Location\` points at the final survivor under \`/v1/${family}/\`. Clients follow it; the old id keeps answering forever.`,
  headers: { Location: { schema: { type: 'string' } } },
  content: { 'application/json': { schema: ref('Merged') } },
});

const pointLookup = (summary: string, description: string, parameter: Json, schema: string, family: string, notFound: string, extra: Record<string, Json> = {}): Json => ({
  get: {
    summary,
    description: `${description} Cached for 24 hours by URL (after authentication and rate limiting); a change to the record drops its cached answers at once.`,
    parameters: [parameter],
    responses: {
      '200': { description: 'Found.', headers: { ...cacheHeader, ...rateHeaders }, content: { 'application/json': { schema: ref(schema) } } },
      '301': merged(family),
      ...extra,
      '404': errorResponse(notFound),
      ...commonErrors,
    },
  },
});

export const openApiDocument = {
  openapi: '3.1.0',
  info: {
    title: 'Book metadata service',
    version: '1.0.0',
    description:
      'Read-oriented book metadata: lookups by ISBN and id, search, match, recommendations and a change feed. ' +
      'Every `/v1` route needs `Authorization: Bearer svc_live_<kid>_<secret>`. Every error body is `{"error": {"code", "message"}}`. ' +
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
          '200': { description: 'Every dependency is up.', content: { 'application/json': { schema: ref('Health') } } },
          '503': { description: 'At least one dependency is down.', content: { 'application/json': { schema: ref('Health') } } },
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
    '/v1/isbn/{isbn}': pointLookup(
      'Look up a book by ISBN',
      'Accepts ISBN-10 or ISBN-13, with or without hyphens or spaces; the check digit is validated. An ISBN whose edition was merged answers 301 to the surviving book.',
      { name: 'isbn', in: 'path', required: true, description: 'ISBN-10 or ISBN-13.', schema: { type: 'string' }, example: '978-0-439-02348-1' },
      'Book',
      'books',
      'No book has this ISBN; the message names it.',
      { '400': errorResponse('Not a valid ISBN (`code` `bad_request`).') },
    ),
    '/v1/books/{id}': pointLookup('A book (edition) by id', 'One edition of a work.', idParameter('book'), 'Book', 'books', 'No such book; the message names the id.'),
    '/v1/works/{id}': pointLookup(
      'A work by id',
      `A work with its authors, its edition count and its most popular editions (at most 100).`,
      idParameter('work'),
      'Work',
      'works',
      'No such work; the message names the id.',
    ),
    '/v1/authors/{id}': pointLookup(
      'An author by id',
      'An author with the other spellings of their name and their most popular works (at most 100).',
      idParameter('author'),
      'Author',
      'authors',
      'No such author; the message names the id.',
    ),
    '/v1/changes': {
      get: {
        summary: 'Changes since a cursor',
        description:
          'Every insert, update, delete and merge of a book, work or author, in sequence order, which is commit order: a consumer that ' +
          'keeps passing `next` back as `since` sees every change exactly once. Start with `since=0`. A merge names the survivor. ' +
          'Full pages never change and are cached briefly; the page at the head of the feed is always fresh.',
        parameters: [
          { name: 'since', in: 'query', required: true, description: 'A `next` cursor from an earlier page, or `0` for the beginning.', schema: { type: 'string', pattern: '^[0-9]+$' } },
          { name: 'limit', in: 'query', required: false, description: 'Changes per page.', schema: { type: 'integer', minimum: 1, maximum: 1000, default: 100 } },
        ],
        responses: {
          '200': { description: 'A page of changes.', headers: rateHeaders, content: { 'application/json': { schema: ref('ChangePage') } } },
          '400': errorResponse('`since` missing (`since cursor is required`), malformed, or ahead of the feed (unknown); or `limit` out of range.'),
          ...commonErrors,
        },
      },
    },
    '/mcp': {
      post: {
        summary: 'MCP endpoint (streamable HTTP)',
        description:
          'Model Context Protocol JSON-RPC messages over streamable HTTP, stateless (no session id; any instance answers any request). ' +
          'Send `Accept: application/json, text/event-stream`; answers are plain JSON. The tools mirror the `/v1` routes and return the same JSON as text; ' +
          'a failing tool returns the API\'s error JSON with `isError` set. Same Bearer key, rate budget and metering as `/v1`; a 401 comes before any MCP message is read. ' +
          'GET and DELETE answer 405.',
        requestBody: {
          required: true,
          content: { 'application/json': { schema: { type: ['object', 'array'], description: 'A JSON-RPC 2.0 request or notification (e.g. `initialize`, `tools/list`, `tools/call`).' } } },
        },
        responses: {
          '200': { description: 'The JSON-RPC response.', headers: rateHeaders, content: { 'application/json': { schema: { type: 'object' } } } },
          '202': { description: 'A notification was accepted; no body.' },
          '400': errorResponse('Malformed JSON body.'),
          ...commonErrors,
        },
      },
    },
  },
  components: {
    securitySchemes: {
      bearer: { type: 'http', scheme: 'bearer', description: 'An API key `svc_live_<kid>_<secret>`, issued by hand. Send it once, after `Bearer `.' },
    },
    schemas: {
      Error: {
        type: 'object',
        required: ['error'],
        properties: {
          error: {
            type: 'object',
            required: ['code', 'message'],
            properties: {
              code: { type: 'string', description: 'Machine-readable: bad_request, unauthorized, not_found, method_not_allowed, payload_too_large, rate_limited, internal.' },
              message: { type: 'string', description: 'Human-readable; safe to log; do not parse.' },
            },
          },
        },
      },
      Merged: {
        type: 'object',
        required: ['merged_into', 'location'],
        properties: { merged_into: { type: 'string' }, location: { type: 'string' } },
      },
      AuthorRef: { type: 'object', required: ['id', 'name'], properties: { id: { type: 'string' }, name: { type: 'string' } } },
      Book: {
        type: 'object',
        description: 'One edition.',
        required: ['id', 'work_id', 'isbn_13', 'isbn_10', 'title', 'subtitle', 'series', 'series_number', 'authors', 'publisher', 'year', 'language', 'pages', 'cover_url', 'ratings_count', 'average_rating', 'updated_at'],
        properties: {
          id: { type: 'string', example: 'bk_5n1x7q0c2r9a' },
          work_id: { type: 'string' },
          isbn_13: nullable('string', { pattern: '^97[89][0-9]{10}$' }),
          isbn_10: nullable('string', { pattern: '^[0-9]{9}[0-9X]$' }),
          title: { type: 'string' },
          subtitle: nullable('string'),
          series: nullable('string'),
          series_number: nullable('string', { description: 'As printed: "1", "0.5", "1-3".' }),
          authors: { type: 'array', items: ref('AuthorRef'), description: 'In credited order; may include illustrators and translators.' },
          publisher: nullable('string'),
          year: nullable('integer'),
          language: nullable('string'),
          pages: nullable('integer'),
          cover_url: nullable('string'),
          ratings_count: { type: 'integer' },
          average_rating: nullable('number'),
          updated_at: { type: 'string', format: 'date-time' },
        },
      },
      EditionSummary: {
        type: 'object',
        required: ['id', 'isbn_13', 'title', 'publisher', 'year', 'language'],
        properties: {
          id: { type: 'string' },
          isbn_13: nullable('string'),
          title: { type: 'string' },
          publisher: nullable('string'),
          year: nullable('integer'),
          language: nullable('string'),
        },
      },
      Work: {
        type: 'object',
        required: ['id', 'title', 'original_year', 'authors', 'edition_count', 'editions', 'updated_at'],
        properties: {
          id: { type: 'string' },
          title: { type: 'string' },
          original_year: nullable('integer'),
          authors: { type: 'array', items: ref('AuthorRef') },
          edition_count: { type: 'integer' },
          editions: { type: 'array', items: ref('EditionSummary'), maxItems: 100 },
          updated_at: { type: 'string', format: 'date-time' },
        },
      },
      WorkSummary: {
        type: 'object',
        required: ['id', 'title', 'original_year'],
        properties: { id: { type: 'string' }, title: { type: 'string' }, original_year: nullable('integer') },
      },
      Author: {
        type: 'object',
        required: ['id', 'name', 'alternate_names', 'work_count', 'works', 'updated_at'],
        properties: {
          id: { type: 'string' },
          name: { type: 'string' },
          alternate_names: { type: 'array', items: { type: 'string' } },
          work_count: { type: 'integer' },
          works: { type: 'array', items: ref('WorkSummary'), maxItems: 100 },
          updated_at: { type: 'string', format: 'date-time' },
        },
      },
      Change: {
        type: 'object',
        required: ['seq', 'entity', 'id', 'operation', 'survivor_id', 'changed_at'],
        properties: {
          seq: { type: 'integer' },
          entity: { type: 'string', enum: ['book', 'work', 'author'] },
          id: { type: 'string' },
          operation: { type: 'string', enum: ['insert', 'update', 'delete', 'merge'] },
          survivor_id: nullable('string', { description: 'For merges: the entity that absorbed this one.' }),
          changed_at: { type: 'string', format: 'date-time' },
        },
      },
      ChangePage: {
        type: 'object',
        required: ['changes', 'next', 'has_more'],
        properties: {
          changes: { type: 'array', items: ref('Change') },
          next: { type: 'string', description: 'Pass as `since` to continue.' },
          has_more: { type: 'boolean', description: 'More changes are waiting after `next`.' },
        },
      },
      Health: {
        type: 'object',
        required: ['status', 'checks', 'metering'],
        properties: {
          status: { type: 'string', enum: ['ok', 'degraded'] },
          checks: {
            type: 'object',
            additionalProperties: {
              type: 'object',
              required: ['status', 'latency_ms'],
              properties: { status: { type: 'string', enum: ['up', 'down'] }, latency_ms: { type: 'number' }, error: { type: 'string' } },
            },
          },
          metering: { type: 'object' },
        },
      },
    },
  },
} satisfies Json;

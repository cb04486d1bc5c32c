import { createDocument, type oas31, type ZodOpenApiOperationObject, type ZodOpenApiPathsObject } from 'zod-openapi';
import {
  batchRefused,
  errorResponse,
  fieldsParameter,
  ifNoneMatch,
  keyedErrors,
  notModified,
  validatorHeaders,
  withoutSafeIntegerBounds,
} from './responseDocs.js';
import type { ToolSet } from '../mcp/tools.js';
import { openApiPath, TAGS, type Route, type Tag } from './route.js';

/**
 * The OpenAPI 3.1 description served at /openapi.json, derived from the route table (routeTable.ts): each route's
 * own documentation (its zod schemas, via zod-openapi, and its prose) and what its entry says of
 * its access, cost and tag. test/openapi.test.ts validates it and holds real answers and requests
 * to what it says.
 */

const TAG_DESCRIPTIONS: Record<Tag, string> = {
  lookups: 'One record by ISBN or id, through the 24-hour point-lookup cache.',
  'search and match': 'Book and author search, matching a messy record to one book, and recommendations.',
  readers: 'What readers read: the works of a subject ranked by readers, and the works most added to reading logs lately.',
  batches: 'Many lookups or matches in one request, each answered as its single route answers it.',
  changes: 'The change feed: every insert, update, delete and merge, in commit order.',
  reconciliation: 'The W3C Reconciliation Service API 0.2, for OpenRefine and other clients.',
  MCP: 'The Model Context Protocol endpoint: the same capabilities as tools.',
  public: 'The service itself: health, this document and its page. No key.',
};

/** `security` of an operation: none for a public route, the key or none for one whose access depends on the request, else the document's default (the key). */
function security(route: Route): oas31.SecurityRequirementObject[] | undefined {
  if (route.access === 'public') return [];
  return typeof route.access === 'function' ? [{}, { bearer: [] }] : undefined;
}

/** A GET answering JSON answers conditionally (middleware/conditional.ts): its 200 carries the validator headers, and a 304 is possible. */
function conditional(route: Route, doc: Route['doc']): Route['doc'] {
  const ok = doc.responses?.['200'];
  if (route.method !== 'GET' || !ok || !('content' in ok) || !ok.content?.['application/json']) return doc;
  return {
    ...doc,
    parameters: [...(doc.parameters ?? []), ifNoneMatch],
    responses: {
      ...doc.responses,
      '200': { ...ok, headers: { ...ok.headers, ...validatorHeaders(route.reuse ?? 'revalidate', route.access !== 'public') } },
      '304': notModified,
    },
  };
}

/** A route answering partial records takes `fields`, and says that an unknown one is among its 400s. */
function partial(route: Route, doc: Route['doc']): Route['doc'] {
  if (!route.partial) return doc;
  const { record, what } = route.partial;
  const refused = doc.responses?.['400'];
  return {
    ...doc,
    parameters: [...(doc.parameters ?? []), fieldsParameter(record, what)],
    responses: {
      ...doc.responses,
      '400': {
        ...(refused ?? errorResponse('')),
        description: `${refused && 'description' in refused ? `${refused.description} ` : ''}Or \`fields\` names a field a ${what} has not (the message names it).`,
      },
    },
  };
}

function operation(route: Route, tools: ToolSet): ZodOpenApiOperationObject {
  const doc = conditional(route, partial(route, route.doc));
  const description = route.cost === 'mcp' ? `${doc.description} Tools: ${[...tools.byName.keys()].join(', ')}.` : doc.description;
  const mirroredBy = route.tool ? ` Over MCP: the tool \`${route.tool.name}\`.` : '';
  return {
    ...doc,
    description: `${description}${mirroredBy}`,
    tags: [route.tag],
    security: security(route),
    ...(route.query ? { requestParams: { query: route.query } } : {}),
    responses: {
      ...(route.access === 'public' ? {} : keyedErrors),
      ...(route.cost === 'items' ? { '429': batchRefused } : {}),
      ...doc.responses,
    },
  };
}

function paths(routes: readonly Route[], tools: ToolSet): ZodOpenApiPathsObject {
  const byPath: ZodOpenApiPathsObject = {};
  for (const route of routes)
    byPath[openApiPath(route.path)] = { ...byPath[openApiPath(route.path)], [route.method.toLowerCase()]: operation(route, tools) };
  return byPath;
}

/** The document of the routes of the table, and of the MCP tools their MCP route offers. */
export function openApiDocument(routes: readonly Route[], tools: ToolSet): oas31.OpenAPIObject {
  return createDocument(
    {
      openapi: '3.1.0',
      info: {
        title: 'Book metadata service',
        version: '1.0.0',
        description:
          'Read-oriented book metadata: lookups by ISBN and id, search, match, recommendations and a change feed. ' +
          'Every `/v1` route needs `Authorization: Bearer svc_live_<kid>_<secret>`, given once (a request with two `Authorization` headers is a 401). Every error body is `{"error": {"code", "message"}}`. ' +
          'Paths are exact and case-sensitive: only `/health`, `/openapi.json`, the `/docs` page and the reconciliation manifest (`GET /reconcile` without `queries`, and its property list) need no key, and any other path, in any spelling, is refused 401 without one and 404 with one. ' +
          'A method a path does not serve answers 405 `method_not_allowed` with `Allow` (after the key, where the path needs one), whatever the method, `TRACE`, `QUERY` and `CONNECT` included. ' +
          'Requests HTTP itself refuses get the same error body: 400 `bad_request` (a malformed request line or header, HTTP/1.1 without `Host`), 408 `request_timeout` (by default: headers not in within 10 s, the whole request not within 30 s, or a body silent for 5 s), ' +
          '429 `too_many_connections` (more connections at once from one client address than the server allows), 503 `too_many_connections` (the server holds as many connections as it takes in all), ' +
          '417 `expectation_failed` (an `Expect` other than `100-continue`) and 431 `headers_too_large` (request line and headers over 16 KB). ' +
          'Ids are opaque, URL-safe and stable; their prefix shows what they name (`bk_` book edition, `wk_` work, `au_` author). ' +
          'Unknown fields of a record are `null`, never missing. Every answer says `X-Content-Type-Options: nosniff`.',
      },
      servers: [{ url: '/' }],
      security: [{ bearer: [] }],
      tags: TAGS.map((name) => ({ name, description: TAG_DESCRIPTIONS[name] })),
      paths: paths(routes, tools),
      components: {
        securitySchemes: {
          bearer: {
            type: 'http',
            scheme: 'bearer',
            description: 'An API key `svc_live_<kid>_<secret>`, issued by hand. Send it once, after `Bearer `.',
          },
        },
      },
    },
    { override: withoutSafeIntegerBounds },
  );
}

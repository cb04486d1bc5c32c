import type { ParameterizedContext } from 'koa';
import type { ZodOpenApiOperationObject } from 'zod-openapi';
import type { z } from 'zod/v4';
import type { Merged } from '../services/lookups.js';
import type { Services } from '../services/context.js';

/** Who may call a route: anyone, or only a request with a valid key. */
export type Access = 'public' | 'key';

/**
 * What a keyed call of a route draws on the key's budget: one unit before the route runs, or, for
 * a route that spends itself once its body says how much, one unit per item of a batch ('items'),
 * or MCP's rules (one unit per message, per item for its batch tools). Public routes draw nothing.
 */
export type Cost = 'none' | 'unit' | 'items' | 'mcp';

/** The groups of the OpenAPI document and of the /docs page, in the order they are shown. */
export const TAGS = ['lookups', 'search and match', 'readers', 'batches', 'changes', 'reconciliation', 'MCP', 'public'] as const;
export type Tag = (typeof TAGS)[number];

/**
 * How long a client may reuse a 200 of a JSON GET (its Cache-Control, beside its ETag): a point
 * lookup for the point cache's lifetime, a search for the short cache's, an answer that can never
 * change for ever ('settled', a full page of changes), one that changes any moment not at all
 * ('never'), anything else only after revalidating ('revalidate', the default).
 */
export type Reuse = 'point' | 'short' | 'settled' | 'never' | 'revalidate';

/** What access depends on: a request's method, path and query. */
export type RequestShape = Pick<AppContext, 'method' | 'path' | 'query'>;

/** A route's OpenAPI operation, less what the table derives from the entry (tags, security, the errors every keyed route can give). */
export type RouteDoc = Omit<ZodOpenApiOperationObject, 'tags' | 'security' | 'requestParams'> & { summary: string };

/**
 * One route, declared once: everything that serves, guards, meters, caches and documents it is
 * derived from this entry (see routeTable.ts).
 */
export interface Route {
  /** Stable and unique: names the route in logs and metrics (`lookupIsbn`). */
  name: string;
  method: 'GET' | 'POST';
  /** The template, parameters as `:name`, each one path segment; matched exactly (case and trailing slash count). */
  path: string;
  /** Public or keyed; a function for a route whose access depends on its query (the reconciliation manifest). */
  access: Access | ((request: RequestShape) => Access);
  cost: Cost;
  /** 'point': an answer of the 24-hour point-lookup cache, keyed by URL path (`X-Cache`); its unit is spent beside the cache read. */
  cache: 'point' | 'none';
  tag: Tag;
  /** Cache-Control of its 200s when the route answers JSON to GET (middleware/conditional.ts); a handler may say otherwise per answer (RequestState.reuse). */
  reuse?: Reuse;
  /**
   * The records of its 200 that `fields=` may cut to some of their fields (middleware/partialResponses.ts):
   * their schema, what one is called, and where they are in the answer (field names, `*` for each item of a list; none: the answer itself).
   */
  partial?: { record: z.ZodObject; what: string; at: readonly string[] };
  /** The query parameters the route reads: its handler gets them as text, its documentation their schema. */
  query?: z.ZodObject;
  doc: RouteDoc;
  /**
   * The route as an MCP tool, by these names (tools/list offers them in the table's order); all else
   * of the tool is the route's: its arguments the path parameters and query or the body, its result
   * the 200's schema, its answers `answer`'s, its budget the route's cost (src/mcp/tools.ts).
   */
  tool?: ToolNames;
  /** What the route answers for a request of this input, without the request: the tool's answer (a route with `tool` has one). */
  answer?: (services: Services, requestId: string, input: RouteInput) => Promise<RouteAnswer>;
  /** A batch route's units of the key's budget for this body (one per item, unless the route says otherwise), or the body's 400. */
  batchUnits?: (body: unknown) => number;
  /** How it answers over HTTP where that is more than its `answer` over the request's input (answerRequest in messages.ts). */
  handle?(ctx: AppContext, services: Services, params: Readonly<Record<string, string>>): Promise<void> | void;
}

/** What names a route's MCP tool and says what it is for, for a model. */
export interface ToolNames {
  name: string;
  title: string;
  description: string;
}

/** A request's input, read from the URL and body (HTTP) or from a tool's arguments (MCP): path parameters and query as text. */
export interface RouteInput {
  params: Readonly<Record<string, string>>;
  query: Readonly<Record<string, string | undefined>>;
  body?: unknown;
}

/** A route's answer: its 200's JSON text, or the survivor of a merged id (its 301). Errors are thrown as ApiErrors. */
export type RouteAnswer = { text: string } | Merged;

/** The template in OpenAPI's spelling: `/v1/isbn/{isbn}`. */
export const openApiPath = (template: string): string => template.replace(/:(\w+)/g, '{$1}');

/** What middleware leaves on ctx.state for later middleware. */
export interface RequestState {
  requestId: string;
  /** The client's address: the connection's, or past trusted proxies the one they forwarded (clientAddress.ts). */
  client: string;
  /**
   * The route that serves the request's method and path, set before the guard runs (routeRequests);
   * undefined when none does (an unknown path, or a method its path does not serve).
   */
  route?: Route;
  /** The route's path parameters, decoded. */
  params: Record<string, string>;
  /** The authenticated key id, set by `authenticate`. */
  kid?: string;
  /** The web origins whose pages may use that key (empty: server-side only), set by `authenticate`. */
  keyOrigins?: readonly string[];
  /** The request comes from a page of one of them (middleware/browserKeys.ts). */
  fromKeyOrigin?: boolean;
  /**
   * The usage records of a request that carries calls of its own, one route each, set by such a
   * route (POST /mcp: a message's tool); unset, the request is one record under its template.
   */
  meteredRoutes?: readonly string[];
  /** This answer's Cache-Control kind, where it is not the route's (a full page of changes is settled, the head page never). */
  reuse?: Reuse;
}

export type AppContext = ParameterizedContext<RequestState>;
// Koa's `next` (typed Promise<any>) resolves to nothing a middleware reads.
export type Middleware = (ctx: AppContext, next: () => Promise<void>) => Promise<void>;

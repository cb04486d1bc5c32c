import { toolSet, type ToolSet } from '../mcp/tools.js';
import { openApiDocument } from './openapi.js';
import type { Access, RequestShape, Route } from './route.js';
import { batchRoutes } from './routes/batch.js';
import { changeRoutes } from './routes/changes.js';
import { docsRoutes } from './routes/docs.js';
import { lookupRoutes } from './routes/lookups.js';
import { mcpRoutes } from './routes/mcp.js';
import { publicRoutes } from './routes/public.js';
import { readerRoutes } from './routes/readers.js';
import { isReconcilePreflight, reconcileRoutes } from './routes/reconcile.js';
import { searchRoutes } from './routes/search.js';

const capabilities: readonly Route[] = [
  ...lookupRoutes,
  ...searchRoutes,
  ...readerRoutes,
  ...batchRoutes,
  ...changeRoutes,
  ...reconcileRoutes,
];

/** The MCP tools: those of the routes that name one, in the table's order. */
export const mcpTools: ToolSet = toolSet(capabilities, (method, path) => matchRoute(method, path));

/** Every route the service answers, each declared once; the order is the document's. */
export const routes: readonly Route[] = [
  ...capabilities,
  ...mcpRoutes(mcpTools),
  ...publicRoutes(() => openApiDocument(routes, mcpTools)),
  ...docsRoutes,
];

interface Compiled {
  route: Route;
  pattern: RegExp;
  params: string[];
}

/** A template as a pattern: parameters are one non-empty segment each; the rest is matched exactly. */
function compile(route: Route): Compiled {
  const params: string[] = [];
  const source = route.path.replace(/:(\w+)|[^:]+/g, (piece, name: string | undefined) => {
    if (name === undefined) return piece.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
    params.push(name);
    return '([^/]+)';
  });
  return { route, pattern: new RegExp(`^${source}$`), params };
}

// The most specific first: of the routes a path matches, the one with the fewest parameters wins
// (`/v1/books/search` over `/v1/books/:id`), whatever the order of declaration.
const compiled: readonly Compiled[] = routes.map(compile).sort((a, b) => a.params.length - b.params.length);

const names = new Set(routes.map((route) => route.name));
if (names.size !== routes.length) throw new Error('two routes share a name');

/** A parameter as the client meant it; text that is not valid percent-encoding is taken as it is. */
function decode(text: string): string {
  try {
    return decodeURIComponent(text);
  } catch {
    return text;
  }
}

/** A GET route also answers HEAD (Koa sends its headers without the body). */
const serves = (route: Route, method: string): boolean => route.method === method || (method === 'HEAD' && route.method === 'GET');

export interface RouteMatch {
  route: Route;
  params: Record<string, string>;
}

/** The route that answers `method` on `path`, and its parameters; null when none does. */
export function matchRoute(method: string, path: string): RouteMatch | null {
  for (const { route, pattern, params } of compiled) {
    if (!serves(route, method)) continue;
    const found = pattern.exec(path);
    if (found) return { route, params: Object.fromEntries(params.map((name, index) => [name, decode(found[index + 1]!)])) };
  }
  return null;
}

/** The routes of `path` whatever their method, the most specific first. */
const routesOf = (path: string): Route[] => compiled.filter(({ pattern }) => pattern.test(path)).map(({ route }) => route);

/** The methods some route serves on `path` (the `Allow` of a 405), HEAD beside GET; empty for a path no route has. */
export function allowedMethods(path: string): string[] {
  return [...new Set(routesOf(path).flatMap((route) => (route.method === 'GET' ? ['HEAD', 'GET'] : [route.method])))];
}

/** The methods the service serves on some path. */
export const SERVED_METHODS: readonly string[] = [
  ...new Set(routes.flatMap((route) => (route.method === 'GET' ? ['HEAD', 'GET'] : [route.method]))),
];

/** The template of the most specific route of `path` under any method: what a refused request (405) is counted under. */
export const templateOf = (path: string): string | undefined => routesOf(path)[0]?.path;

/** What every path no route's path matches is counted under. */
const UNMATCHED_ROUTE = '(unmatched)';

/**
 * The route template a finished request is counted under, in usage and in metrics: its route's, or
 * its path's under another method (405), or UNMATCHED_ROUTE; never the URL, so made-up paths are one bucket.
 */
export const requestTemplate = (ctx: { path: string; state: { route?: Route } }): string =>
  ctx.state.route?.path ?? templateOf(ctx.path) ?? UNMATCHED_ROUTE;

const accessOf = (route: Route, request: RequestShape): Access =>
  typeof route.access === 'function' ? route.access(request) : route.access;

/**
 * Whether a request needs the key. The route's own access when one serves it; a path whose routes
 * are all public stays public under another method (its 405 needs no key); any other request, any
 * unknown path in any spelling, needs the key. A browser's preflight of a reconciliation path
 * carries no key by design, and is answered without one (reconcileCrossOrigin). `served` is the
 * route serving the request, when the caller has already matched it.
 */
export function requestAccess(request: RequestShape, served: Route | undefined = matchRoute(request.method, request.path)?.route): Access {
  if (served) return accessOf(served, request);
  if (isReconcilePreflight(request)) return 'public';
  const others = routesOf(request.path);
  return others.length > 0 && others.every((route) => accessOf(route, request) === 'public') ? 'public' : 'key';
}

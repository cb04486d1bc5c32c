import type Router from '@koa/router';
import type { RequestState } from './state.js';

/** The path of no route. */
const UNMATCHED_ROUTE = '(unmatched)';

/**
 * The template of the route the router picks for a path and method (the most specific, as it
 * does), or of the route the path would take under another method; UNMATCHED_ROUTE for none.
 * Asked before routing (which route is this?) and after a refusal (401, 405, 429).
 */
export function routeTemplate(router: Router<RequestState>, path: string, method: string): string {
  const { path: byPath, pathAndMethod } = router.match(path, method);
  const layers = pathAndMethod.length > 0 ? pathAndMethod : byPath;
  const template = layers.reduce<(typeof layers)[number] | undefined>((best, layer) => (!best || layer.paramNames.length < best.paramNames.length ? layer : best), undefined)?.path;
  return typeof template === 'string' ? template : UNMATCHED_ROUTE;
}

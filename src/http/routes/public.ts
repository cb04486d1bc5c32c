import type Router from '@koa/router';
import type { Services } from '../../services/context.js';
import { checkHealth } from '../../services/health.js';
import { openApiDocument } from '../openapi.js';
import { sendJson, type AppContext, type RequestState } from '../state.js';
import { DOCS_PATHS, docsRoutes } from './docs.js';
import { isReconcileManifest, isReconcilePreflight, SUGGEST_PROPERTY_PATH } from './reconcile.js';

/** The paths that need no key and are neither metered nor rate limited; every other path needs the key. */
export const PUBLIC_PATHS: ReadonlySet<string> = new Set(['/health', '/openapi.json', ...DOCS_PATHS, SUGGEST_PROPERTY_PATH]);

/**
 * Whether a request needs no key: any to a public path; the reconciliation manifest (GET /reconcile
 * without `queries`: its queries need the key) and a browser's preflight of a /reconcile path.
 */
export const isPublicRequest = (request: PublicRequestShape): boolean => PUBLIC_PATHS.has(request.path) || isReconcileManifest(request) || isReconcilePreflight(request);

export type PublicRequestShape = Pick<AppContext, 'method' | 'path' | 'query'>;

/** The public routes, one per path of PUBLIC_PATHS. */
export function publicRoutes(router: Router<RequestState>, services: Services): void {
  const openApi = JSON.stringify(openApiDocument);
  router.get('/health', async (ctx) => {
    const health = await checkHealth(services);
    sendJson(ctx, health, health.status === 'ok' ? 200 : 503);
  });
  router.get('/openapi.json', (ctx) => {
    ctx.type = 'application/json';
    ctx.body = openApi;
  });
  docsRoutes(router);
}

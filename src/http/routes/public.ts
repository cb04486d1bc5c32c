import type Router from '@koa/router';
import type { Services } from '../../services/context.js';
import { checkHealth } from '../../services/health.js';
import { openApiDocument } from '../openapi.js';
import { sendJson, type RequestState } from '../state.js';
import { DOCS_PATHS, docsRoutes } from './docs.js';

/** The paths that need no key and are neither metered nor rate limited; every other path needs the key. */
export const PUBLIC_PATHS: ReadonlySet<string> = new Set(['/health', '/openapi.json', ...DOCS_PATHS]);

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

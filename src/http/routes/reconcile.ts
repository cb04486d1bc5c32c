import type Router from '@koa/router';
import type { Services } from '../../services/context.js';
import { parseQueryBatch, reconcile, reconcileManifest, suggestProperties } from '../../services/reconcile.js';
import { badRequest } from '../../errors.js';
import { admitBatch, BATCH_BODY_LIMIT_BYTES } from '../middleware/batchBudget.js';
import { readBodyText, readJsonBody } from '../middleware/jsonBody.js';
import { queryParam, sendJson, type AppContext, type Middleware, type RequestState } from '../state.js';

/**
 * The Reconciliation Service API 0.2 endpoint for OpenRefine and other clients. Its manifest (GET
 * without `queries`) and the property list of its suggest service are public: a client reads the
 * manifest before it knows it must ask its user for a key, and neither shows any catalogue data.
 * Query batches (POST, or GET with `queries`) need the key and draw one unit of its budget per query.
 */

export const RECONCILE_PATH = '/reconcile';
export const SUGGEST_PROPERTY_PATH = '/reconcile/suggest/property';

type RequestShape = Pick<AppContext, 'method' | 'path' | 'query'>;

const isRead = ({ method }: RequestShape): boolean => method === 'GET' || method === 'HEAD';
const isReconcilePath = (path: string): boolean => path === RECONCILE_PATH || path.startsWith(`${RECONCILE_PATH}/`);

/** GET /reconcile without queries: the manifest. */
export const isReconcileManifest = (request: RequestShape): boolean => request.path === RECONCILE_PATH && isRead(request) && request.query.queries === undefined;

/** A query batch: POST /reconcile, or GET /reconcile?queries=. */
export const isReconcileQuery = (request: RequestShape): boolean =>
  request.path === RECONCILE_PATH && (request.method === 'POST' || (isRead(request) && request.query.queries !== undefined));

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
    ctx.set({ 'Access-Control-Allow-Methods': 'GET, POST', 'Access-Control-Allow-Headers': 'Authorization, Content-Type', 'Access-Control-Max-Age': '86400' });
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

export function reconcileRoutes(router: Router<RequestState>, services: Services): void {
  const answer = async (ctx: AppContext, batch: () => Promise<unknown>) => {
    const queries = await admitBatch(ctx, services, async () => parseQueryBatch(await batch()));
    sendJson(ctx, await reconcile(services, queries));
  };
  router.get(RECONCILE_PATH, async (ctx) => {
    if (isReconcileManifest(ctx)) sendJson(ctx, reconcileManifest(`${ctx.protocol}://${ctx.host}`));
    else await answer(ctx, async () => parseJsonText(queryParam(ctx, 'queries')!));
  });
  router.post(RECONCILE_PATH, (ctx) => answer(ctx, () => postedBatch(ctx)));
  router.get(SUGGEST_PROPERTY_PATH, (ctx) => sendJson(ctx, suggestProperties(queryParam(ctx, 'prefix'))));
}

import type Router from '@koa/router';
import { ApiError } from '../../errors.js';
import { batchList, MATCH_BATCH_MAX } from '../../services/batch.js';
import type { Services } from '../../services/context.js';
import { matchBooks } from '../../services/match.js';
import { admitBatch, BATCH_BODY_LIMIT_BYTES } from '../middleware/batchBudget.js';
import { readJsonBody } from '../middleware/jsonBody.js';
import { sendJson, type AppContext, type RequestState } from '../state.js';
import { isReconcileQuery } from './reconcile.js';

/** Batch routes: many items in one request, each answered as its single route answers it, in input order. */

const MATCH_BATCH_PATH = '/v1/match/batch';

/** Requests whose items, not the request, draw on the key's budget (see admitBatch). */
export const isBatchRequest = (ctx: AppContext): boolean => (ctx.method === 'POST' && ctx.path === MATCH_BATCH_PATH) || isReconcileQuery(ctx);

export function batchRoutes(router: Router<RequestState>, services: Services): void {
  router.post(MATCH_BATCH_PATH, async (ctx) => {
    const records = await admitBatch(ctx, services, async () => batchList(await readJsonBody(ctx, BATCH_BODY_LIMIT_BYTES), 'records', MATCH_BATCH_MAX));
    const answers = await matchBooks(services, records);
    sendJson(ctx, { results: answers.map((answer) => (answer instanceof ApiError ? answer.toJSON() : answer)) });
  });
}

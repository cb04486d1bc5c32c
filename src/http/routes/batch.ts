import type Router from '@koa/router';
import { parseInput } from '../../errors.js';
import { matchBatch, matchBatchBody } from '../../services/batch.js';
import { BULK_KINDS, bulkKeys, bulkLookup } from '../../services/bulkLookups.js';
import type { Services } from '../../services/context.js';
import { admitBatch, BATCH_BODY_LIMIT_BYTES } from '../middleware/batchBudget.js';
import { readJsonBody } from '../middleware/jsonBody.js';
import { sendJson, sendJsonText, type AppContext, type RequestState } from '../state.js';
import { isReconcileQuery } from './reconcile.js';

/** Batch routes: many items in one request, each answered as its single route answers it, in input order. */

const MATCH_BATCH_PATH = '/v1/match/batch';
/** POST /v1/isbn/batch, /v1/books/batch...: beside the GET of one, as /v1/match/batch is beside /v1/match. */
const bulkPath = (family: string): string => `/v1/${family}/batch`;
const BATCH_PATHS = new Set([MATCH_BATCH_PATH, ...BULK_KINDS.map((kind) => bulkPath(kind.family))]);

/** Requests whose items, not the request, draw on the key's budget (see admitBatch). */
export const isBatchRequest = (ctx: AppContext): boolean => (ctx.method === 'POST' && BATCH_PATHS.has(ctx.path)) || isReconcileQuery(ctx);

export function batchRoutes(router: Router<RequestState>, services: Services): void {
  router.post(MATCH_BATCH_PATH, async (ctx) => {
    const records = await admitBatch(ctx, services, async () => parseInput(matchBatchBody, await readJsonBody(ctx, BATCH_BODY_LIMIT_BYTES)).records);
    sendJson(ctx, await matchBatch(services, records));
  });
  for (const kind of BULK_KINDS) {
    router.post(bulkPath(kind.family), async (ctx) => {
      const keys = await admitBatch(ctx, services, async () => bulkKeys(kind, await readJsonBody(ctx, BATCH_BODY_LIMIT_BYTES)));
      sendJsonText(ctx, await bulkLookup(services, ctx.state.requestId, kind, keys));
    });
  }
}

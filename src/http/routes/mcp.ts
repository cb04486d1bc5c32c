import type Router from '@koa/router';
import { ApiError } from '../../errors.js';
import { ErrorCode } from '@modelcontextprotocol/sdk/types.js';
import { answerMcpPost, jsonRpcError, UnreadableMessage } from '../../mcp/server.js';
import { batchItemsIn, toolCallIn } from '../../mcp/tools.js';
import type { Services } from '../../services/context.js';
import { BATCH_BODY_LIMIT_BYTES } from '../middleware/batchBudget.js';
import { readJsonBody } from '../middleware/jsonBody.js';
import { spendItems, spendRequest } from '../middleware/rateLimit.js';
import { sendJson, sendJsonText, type AppContext, type RequestState } from '../state.js';

const MCP_PATH = '/mcp';

/** POST /mcp spends its own budget: only its body says whether it calls a batch tool, whose items draw on the budget (see batchItemsIn). */
export const isMcpPost = (ctx: AppContext): boolean => ctx.method === 'POST' && ctx.path === MCP_PATH;

/** The body of a POST /mcp. Streamable HTTP asks for clients that accept a JSON answer (all of ours are); the body's type is readJsonBody's to check. */
async function readMcpBody(ctx: AppContext): Promise<unknown> {
  if (!ctx.accepts('application/json')) throw new ApiError(406, 'not_acceptable', 'answers are application/json: Accept must allow it');
  return readJsonBody(ctx, BATCH_BODY_LIMIT_BYTES);
}

/**
 * POST /mcp: MCP over streamable HTTP. The guard has authenticated and metered the request before
 * it gets here, exactly as for /v1, so a bad key never reaches a message. It draws on the key's
 * budget as one request, or, when it calls batch tools, as their HTTP batch routes do: one unit per
 * item, all or none; a body that cannot be read costs one unit. GET and DELETE (a server-sent
 * stream, ending a session) answer 405 through the router: a stateless server has neither.
 */
export function mcpRoutes(router: Router<RequestState>, services: Services): void {
  const { rateLimiter, log } = services;
  router.post(MCP_PATH, async (ctx) => {
    let body: unknown;
    try {
      body = await readMcpBody(ctx);
    } catch (error) {
      await spendRequest(ctx, rateLimiter, log);
      // A body that is not JSON is the protocol's parse error; refused media types stay HTTP's.
      if (!(error instanceof ApiError) || error.status !== 400) throw error;
      sendJson(ctx, jsonRpcError(null, ErrorCode.ParseError, `parse error: ${error.message}`), 400);
      return;
    }
    ctx.state.meteredRoute = meteredRoute(body);
    const items = batchItemsIn(body);
    await (items === null ? spendRequest(ctx, rateLimiter, log) : spendItems(ctx, rateLimiter, log, items));
    let answer;
    try {
      answer = await answerMcpPost({ services, requestId: ctx.state.requestId }, body, ctx.get('MCP-Protocol-Version') || undefined);
    } catch (error) {
      if (!(error instanceof UnreadableMessage)) throw error;
      sendJson(ctx, error.response, error.status);
      return;
    }
    if (answer.body !== '') {
      sendJsonText(ctx, answer.body, answer.status);
    } else {
      ctx.status = answer.status; // 202: notifications only, nothing to answer
      ctx.body = '';
      ctx.remove('Content-Type');
    }
  });
}

/** The usage route of a call: the tool for tools/call (known tools only, so clients cannot invent routes), else `/mcp`. */
function meteredRoute(message: unknown): string {
  const call = toolCallIn(message);
  return call?.tool ? `/mcp tools/call ${call.name}` : MCP_PATH;
}

import type Router from '@koa/router';
import { ApiError } from '../../errors.js';
import { ErrorCode } from '@modelcontextprotocol/sdk/types.js';
import { answerMcpPost, jsonRpcError, UnreadableMessage } from '../../mcp/server.js';
import { toolsByName } from '../../mcp/tools.js';
import type { Services } from '../../services/context.js';
import { readJsonBody } from '../middleware/jsonBody.js';
import { sendJson, sendJsonText, type Middleware, type RequestState } from '../state.js';

/** Streamable HTTP asks for clients that accept a JSON answer (all of ours are); the body's type is jsonBody's to check. */
const mcpMediaTypes: Middleware = async (ctx, next) => {
  if (!ctx.accepts('application/json')) throw new ApiError(406, 'not_acceptable', 'answers are application/json: Accept must allow it');
  await next();
};

/**
 * POST /mcp: MCP over streamable HTTP. The guard has authenticated, metered and rate-limited the
 * request before it gets here, exactly as for /v1, so a bad key never reaches a message. GET and
 * DELETE (a server-sent stream, ending a session) answer 405 through the router: a stateless
 * server has neither.
 */
export function mcpRoutes(router: Router<RequestState>, services: Services): void {
  router.post('/mcp', mcpMediaTypes, async (ctx) => {
    let body: unknown;
    try {
      body = await readJsonBody(ctx);
    } catch (error) {
      // A body that is not JSON is the protocol's parse error; refused media types stay HTTP's.
      if (!(error instanceof ApiError) || error.status !== 400) throw error;
      sendJson(ctx, jsonRpcError(null, ErrorCode.ParseError, `parse error: ${error.message}`), 400);
      return;
    }
    ctx.state.meteredRoute = meteredRoute(body);
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
  if (typeof message !== 'object' || message === null || !('method' in message) || message.method !== 'tools/call') return '/mcp';
  const name = 'params' in message && typeof message.params === 'object' && message.params !== null && 'name' in message.params ? message.params.name : undefined;
  return typeof name === 'string' && toolsByName.has(name) ? `/mcp tools/call ${name}` : '/mcp';
}

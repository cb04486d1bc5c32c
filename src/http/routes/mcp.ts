import type Router from '@koa/router';
import { answerMcpRequest } from '../../mcp/server.js';
import { toolsByName } from '../../mcp/tools.js';
import type { Services } from '../../services/context.js';
import { jsonBody } from '../middleware/jsonBody.js';
import type { AppContext, RequestState } from '../state.js';

/**
 * POST /mcp: MCP over streamable HTTP. The guard has authenticated, metered and rate-limited the
 * request before it gets here, exactly as for /v1. GET and DELETE (a standalone SSE stream, ending
 * a session) answer 405 through the router: a stateless server has neither.
 */
export function mcpRoutes(router: Router<RequestState>, services: Services): void {
  router.post('/mcp', jsonBody(), async (ctx) => {
    const message = ctx.request.json;
    ctx.state.meteredRoute = meteredRoute(message);
    const response = await answerMcpRequest(services, webRequest(ctx), message, ctx.state.requestId);
    // Koa answers, not the transport, so the access log, the meter and the error renderer see the real status.
    ctx.status = response.status;
    response.headers.forEach((value, name) => ctx.set(name, value));
    ctx.body = await response.text();
  });
}

/** The usage route of a call: the tool for tools/call (known tools only, so clients cannot invent routes), else `/mcp`. */
function meteredRoute(message: unknown): string {
  if (typeof message !== 'object' || message === null || !('method' in message) || message.method !== 'tools/call') return '/mcp';
  const name = 'params' in message && typeof message.params === 'object' && message.params !== null && 'name' in message.params ? message.params.name : undefined;
  return typeof name === 'string' && toolsByName.has(name) ? `/mcp tools/call ${name}` : '/mcp';
}

/** The transport reads the request's headers (Accept, Content-Type, MCP-Protocol-Version); the body is already parsed. */
function webRequest(ctx: AppContext): Request {
  const headers = new Headers();
  for (const [name, value] of Object.entries(ctx.req.headers)) {
    if (value !== undefined) headers.set(name, Array.isArray(value) ? value.join(', ') : value);
  }
  return new Request(ctx.href, { method: ctx.method, headers });
}

import { ErrorCode } from '@modelcontextprotocol/sdk/types.js';
import { ApiError } from '../../errors.js';
import { answerMcpPost, jsonRpcError, UnreadableMessage } from '../../mcp/server.js';
import { toolCallIn, type ToolSet } from '../../mcp/tools.js';
import { BATCH_BODY_LIMIT_BYTES } from '../middleware/batchBudget.js';
import { readJsonBody } from '../middleware/jsonBody.js';
import { spendItems, spendRequest } from '../middleware/rateLimit.js';
import { bodyTooLarge, errorResponse, rateHeaders, unsupportedBody } from '../responseDocs.js';
import type { AppContext, Route } from '../route.js';
import { sendJson, sendJsonText } from '../messages.js';

const MCP_PATH = '/mcp';

/** The body of a POST /mcp. Streamable HTTP asks for clients that accept a JSON answer (all of ours are); the body's type is readJsonBody's to check. */
async function readMcpBody(ctx: AppContext): Promise<unknown> {
  if (!ctx.accepts('application/json')) throw new ApiError(406, 'not_acceptable', 'answers are application/json: Accept must allow it');
  return readJsonBody(ctx, BATCH_BODY_LIMIT_BYTES);
}

const LOOPBACK_HOSTS = new Set(['localhost', '127.0.0.1', '[::1]']);

/**
 * Whether a browser page of `origin` may call the endpoint. Streamable HTTP requires refusing
 * foreign origins against DNS rebinding (a page of evil.example whose name resolves to this
 * host): a loopback origin cannot be such a page; any other must be configured
 * (MCP_ALLOWED_ORIGINS, `*` for any). A request without Origin comes from no browser page.
 */
export function originAllowed(origin: string | undefined, allowed: readonly string[]): boolean {
  if (origin === undefined || allowed.includes('*') || allowed.includes(origin)) return true;
  try {
    const url = new URL(origin);
    return (url.protocol === 'http:' || url.protocol === 'https:') && LOOPBACK_HOSTS.has(url.hostname);
  } catch {
    return false;
  }
}

/** The usage route of a message: its tool for a tools/call (known tools only, so clients cannot invent routes), else `/mcp`. */
function meteredRoute(message: unknown, tools: ToolSet): string {
  const call = toolCallIn(message, tools);
  return call?.tool ? `/mcp tools/call ${call.name}` : MCP_PATH;
}

/** The units of the key's budget a message draws sent alone: one, or one per item for a batch tool's call (as its HTTP batch route). */
function unitsOf(message: unknown, tools: ToolSet): number {
  const call = toolCallIn(message, tools);
  return call?.tool?.items?.(call.args) ?? 1;
}

/** POST /mcp, offering `tools` (those of the routes they mirror). */
export function mcpRoutes(tools: ToolSet): Route[] {
  return [
    {
      name: 'mcp',
      method: 'POST',
      path: MCP_PATH,
      access: 'key',
      cost: 'mcp',
      cache: 'none',
      tag: 'MCP',
      doc: {
        summary: 'MCP endpoint (streamable HTTP)',
        description:
          'Model Context Protocol JSON-RPC messages over streamable HTTP, stateless: no session id, any instance answers any request, and a `tools/call` needs no ' +
          '`initialize` first. Send `Accept: application/json, text/event-stream`; answers are plain JSON, never an event stream. ' +
          "Each tool is derived from its `/v1` route and returns the JSON that route returns for the same request (a batch tool, its batch route's), as `structuredContent` " +
          "(its `outputSchema` is the route's 200 schema) and as text, " +
          "and a failing one the API's error JSON with `isError` set; arguments the tool's schema does not name are invalid params (-32602). A merged id is followed to the survivor, with a second text item saying so. " +
          'Same Bearer key, rate budget and metering as `/v1` (usage is recorded per tool; a batch tool draws one unit per item, as its route); a 401 comes before any MCP message is read. ' +
          'A JSON-RPC batch (an array of messages) costs and is metered as its messages sent one by one, its units taken all or none. ' +
          "A request from a browser page of a foreign origin is refused (403) against DNS rebinding: loopback origins and those of `MCP_ALLOWED_ORIGINS` are allowed, and a request without `Origin` is no page's. GET and DELETE answer 405.",
        requestBody: {
          required: true,
          content: {
            'application/json': {
              schema: {
                type: ['object', 'array'],
                description: 'A JSON-RPC 2.0 message (e.g. `initialize`, `tools/list`, `tools/call`) or a batch of them.',
              },
              example: {
                jsonrpc: '2.0',
                id: 1,
                method: 'tools/call',
                params: { name: 'lookup_isbn', arguments: { isbn: '978-0-439-02348-1' } },
              },
            },
          },
        },
        responses: {
          '200': {
            description: 'The JSON-RPC response (an array for a batch).',
            headers: rateHeaders,
            content: { 'application/json': { schema: { type: ['object', 'array'] } } },
          },
          '202': { description: 'Only notifications were sent; no body.' },
          '400': errorResponse('Malformed JSON, a body that is not JSON-RPC 2.0, or an unsupported `MCP-Protocol-Version`.'),
          '403': errorResponse('`Origin` names a browser page of a foreign origin (`code` `forbidden`).'),
          '406': errorResponse('`Accept` does not allow `application/json` (`code` `not_acceptable`).'),
          '413': bodyTooLarge(BATCH_BODY_LIMIT_BYTES),
          '415': unsupportedBody,
        },
      },
      /**
       * The guard has authenticated the request before it gets here, exactly as for /v1, so a bad key
       * never reaches a message. Each message draws on the key's budget what it would sent alone: one
       * request, or one unit per item for a batch tool's call, as its HTTP batch route; an array of
       * messages the sum of theirs, all or none. A body that cannot be read costs one unit, a foreign
       * origin nothing. A stateless server has no GET stream nor
       * session to DELETE: those answer 405.
       */
      async handle(ctx, services) {
        const { rateLimiter } = services;
        const origin = ctx.get('Origin') || undefined;
        // A page of an origin its key names is no rebinding: the key's owner let that origin in.
        if (!ctx.state.fromKeyOrigin && !originAllowed(origin, services.config.mcpAllowedOrigins))
          throw new ApiError(
            403,
            'forbidden',
            `requests from pages of ${origin} are not allowed: MCP_ALLOWED_ORIGINS lists the origins that are`,
          );
        let body: unknown;
        try {
          body = await readMcpBody(ctx);
        } catch (error) {
          await spendRequest(ctx, rateLimiter);
          // A body that is not JSON is the protocol's parse error; refused media types stay HTTP's.
          if (!(error instanceof ApiError) || error.status !== 400) throw error;
          sendJson(ctx, jsonRpcError(null, ErrorCode.ParseError, `parse error: ${error.message}`), 400);
          return;
        }
        // A JSON-RPC batch (an array: 2025-03-26 has them, 2025-06-18 dropped them) is kept for the
        // clients of the older revision, and costs and is metered as its messages sent one by one:
        // the body is read here, before the SDK sees it, so each message is counted exactly. The
        // array's units are taken all or none, as a batch route's items are.
        const messages: unknown[] = Array.isArray(body) && body.length > 0 ? body : [body];
        ctx.state.meteredRoutes = messages.map((message) => meteredRoute(message, tools));
        const units = messages.map((message) => unitsOf(message, tools));
        if (Array.isArray(body) || toolCallIn(body, tools)?.tool?.items) {
          await spendItems(
            ctx,
            rateLimiter,
            units.reduce((sum, count) => sum + count, 0),
          );
        } else {
          await spendRequest(ctx, rateLimiter);
        }
        let answer;
        try {
          answer = await answerMcpPost(
            { services, requestId: ctx.state.requestId, tools },
            body,
            ctx.get('MCP-Protocol-Version') || undefined,
          );
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
      },
    },
  ];
}

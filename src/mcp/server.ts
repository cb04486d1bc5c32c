import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { WebStandardStreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js';
import {
  CallToolRequestSchema,
  ErrorCode,
  JSONRPCMessageSchema,
  ListToolsRequestSchema,
  SUPPORTED_PROTOCOL_VERSIONS,
  type CallToolRequest,
  type CallToolResult,
  type JSONRPCMessage,
  type JSONRPCResponse,
  type RequestId,
} from '@modelcontextprotocol/sdk/types.js';
import { AjvJsonSchemaValidator } from '@modelcontextprotocol/sdk/validation/ajv';
import { asApiError, badRequest } from '../errors.js';
import { InvalidParams, type ToolContext } from './tools.js';

const SERVER_INFO = { name: 'bookmeta', version: '1.0.0' };

const INSTRUCTIONS =
  'Book metadata: books (editions, bk_ ids), works (wk_) and authors (au_). Every tool answers the same JSON as the HTTP API at /v1 for the same request, ' +
  'as structured content (its outputSchema) and as text. An error answers the API\'s error JSON {"error": {"code", "message"}} with isError set: bad_request means fix the arguments, ' +
  'not_found means the catalogue has no such record. With an ISBN use lookup_isbn; with a messy reference (title, maybe author or year) to resolve to one book ' +
  'use match_book; to browse or list candidates use search_books or search_authors.';

// Used only for what a server asks of clients (elicitation), which this one never does; without
// it every Server (one a request) would build its own Ajv, which is costly.
const jsonSchemaValidator = new AjvJsonSchemaValidator();

/** A tools/call: the route's JSON as structured content and as text, or the API's error JSON with isError set. */
async function callTool(context: ToolContext, { name, arguments: args }: CallToolRequest['params']): Promise<CallToolResult> {
  const tool = context.tools.byName.get(name);
  if (!tool) throw new InvalidParams(`unknown tool ${name}; tools/list names the tools`);
  try {
    const { text, structured, note } = await tool.call(context, args);
    const content: CallToolResult['content'] = [{ type: 'text', text }];
    if (note !== undefined) content.push({ type: 'text', text: note });
    return { content, structuredContent: structured };
  } catch (error) {
    // Arguments that do not fit the tool's schema are the protocol's error, not the tool's.
    if (error instanceof InvalidParams) throw error;
    const apiError = asApiError(error);
    if (apiError.status === 500) context.services.log.error({ err: error, requestId: context.requestId, tool: name }, 'MCP tool failed');
    return { content: [{ type: 'text', text: JSON.stringify(apiError.toJSON()) }], isError: true };
  }
}

/**
 * The SDK server of one POST: protocol, initialize, capabilities, method dispatch and request
 * validation are the SDK's. The low-level `Server` rather than `McpServer`: McpServer answers an
 * unknown tool or arguments that miss a tool's schema with a tool result in its own words, where
 * ours must be JSON-RPC invalid params in the words of the HTTP API's 400 for the same mistake.
 */
function mcpServer(context: ToolContext): Server {
  const server = new Server(SERVER_INFO, { capabilities: { tools: {} }, instructions: INSTRUCTIONS, jsonSchemaValidator });
  server.setRequestHandler(ListToolsRequestSchema, () => context.tools.listing);
  server.setRequestHandler(CallToolRequestSchema, ({ params }) => callTool(context, params));
  return server;
}

/**
 * A lone tools/call, answered by the handler the SDK's server runs, in the envelope it sends,
 * without the server and its transport: their zod checks of every message (an initialize? a
 * response? a task?) fail and build errors, work that would cost a cached lookup more than its
 * answer does (scripts/bench/mcp.ts compares the two).
 */
async function answerToolCall(context: ToolContext, { id, params }: ToolCall): Promise<JSONRPCResponse> {
  try {
    return { result: await callTool(context, params), jsonrpc: '2.0', id };
  } catch (error) {
    if (error instanceof InvalidParams) return jsonRpcError(id, error.code, error.message);
    throw error;
  }
}

/** A JSON-RPC 2.0 error response (`id` null when the request's id could not be read). */
export const jsonRpcError = (id: RequestId | null, code: number, message: string): JSONRPCResponse =>
  ({ jsonrpc: '2.0', id, error: { code, message } }) as JSONRPCResponse;

/** A body the protocol cannot take (not JSON-RPC, a tools/call that is not one): its JSON-RPC error, with the HTTP status to send it with. */
export class UnreadableMessage extends Error {
  constructor(
    readonly response: JSONRPCResponse,
    readonly status = 400,
  ) {
    super('unreadable JSON-RPC message');
  }
}

const idOf = (message: unknown): RequestId | null =>
  typeof message === 'object' && message !== null && 'id' in message && (typeof message.id === 'string' || typeof message.id === 'number')
    ? message.id
    : null;

/**
 * The body's messages, checked before the SDK sees them so that their errors are the protocol's
 * codes in our words: the SDK's transport calls any unreadable body a parse error (-32700).
 */
function readMessages(body: unknown): JSONRPCMessage[] {
  const parsed = (Array.isArray(body) ? body : [body]).map((message) => JSONRPCMessageSchema.safeParse(message));
  if (parsed.length === 0 || parsed.some((message) => !message.success)) {
    throw new UnreadableMessage(
      jsonRpcError(
        Array.isArray(body) ? null : idOf(body),
        ErrorCode.InvalidRequest,
        'invalid request: the body must be a JSON-RPC 2.0 message (jsonrpc "2.0", a method, an id for requests) or a non-empty batch of them',
      ),
    );
  }
  return parsed.map((message) => message.data!);
}

interface ToolCall {
  id: RequestId;
  params: CallToolRequest['params'];
}

/**
 * A tools/call request, or null for any other message. A tools/call without {name,
 * arguments} would be the SDK server's internal error (-32603): alone, it is answered invalid
 * params; in a batch, the batch cannot be read.
 */
function readCall(message: JSONRPCMessage, inBatch: boolean): ToolCall | null {
  if (!('id' in message && 'method' in message) || message.method !== 'tools/call') return null;
  const call = CallToolRequestSchema.safeParse(message);
  if (!call.success)
    throw new UnreadableMessage(
      jsonRpcError(message.id, ErrorCode.InvalidParams, 'tools/call params must be {"name": string, "arguments"?: object}'),
      inBatch ? 400 : 200,
    );
  return { id: message.id, params: call.data.params };
}

/** The HTTP answer to one POST /mcp: status, and the JSON-RPC response(s), or '' (202: notifications only). */
export interface McpAnswer {
  status: number;
  body: string;
}

// The route has read and checked the POST (its media types, in the API's words), so the transport
// is handed the headers of a JSON exchange; it reads nothing else of the request.
const TRANSPORT_HEADERS = { accept: 'application/json, text/event-stream', 'content-type': 'application/json' };

/**
 * Answers the body of one POST /mcp, in the SDK's stateless pattern: a new server and streamable
 * HTTP transport for each request, without session ids and answering plain JSON (no tool streams
 * anything). Nothing outlives the request, so any API instance answers any request and none needs
 * an initialize first.
 */
export async function answerMcpPost(context: ToolContext, body: unknown, protocolVersion: string | undefined): Promise<McpAnswer> {
  const messages = readMessages(body);
  // The header names the version negotiated at initialize; an initialize negotiates it itself.
  const initializing = messages.some((message) => 'method' in message && message.method === 'initialize');
  if (protocolVersion !== undefined && !initializing && !SUPPORTED_PROTOCOL_VERSIONS.includes(protocolVersion)) {
    throw badRequest(`unsupported MCP-Protocol-Version ${protocolVersion}; supported: ${SUPPORTED_PROTOCOL_VERSIONS.join(', ')}`);
  }
  const calls = messages.map((message) => readCall(message, Array.isArray(body)));
  // Anything the SDK would treat specially (a task to create) goes through it.
  const lone = Array.isArray(body) ? null : calls[0];
  if (lone && lone.params.task === undefined) return { status: 200, body: JSON.stringify(await answerToolCall(context, lone)) };
  const server = mcpServer(context);
  const transport = new WebStandardStreamableHTTPServerTransport({ enableJsonResponse: true });
  await server.connect(transport);
  try {
    const headers = protocolVersion === undefined ? TRANSPORT_HEADERS : { ...TRANSPORT_HEADERS, 'mcp-protocol-version': protocolVersion };
    const response = await transport.handleRequest(new Request('http://bookmeta/mcp', { method: 'POST', headers }), { parsedBody: body });
    return { status: response.status, body: await response.text() };
  } finally {
    await server.close();
  }
}

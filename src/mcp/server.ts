import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import {
  CallToolRequestSchema,
  ErrorCode,
  JSONRPCMessageSchema,
  ListToolsRequestSchema,
  McpError,
  SUPPORTED_PROTOCOL_VERSIONS,
  type CallToolRequest,
  type CallToolResult,
  type JSONRPCMessage,
  type JSONRPCRequest,
  type JSONRPCResponse,
  type RequestId,
  type ListToolsResult,
} from '@modelcontextprotocol/sdk/types.js';
import { AjvJsonSchemaValidator } from '@modelcontextprotocol/sdk/validation/ajv';
import { asApiError, badRequest } from '../errors.js';
import { PostExchange } from './exchange.js';
import { tools, toolsByName, type ToolContext } from './tools.js';

const SERVER_INFO = { name: 'bookmeta', version: '1.0.0' };

const INSTRUCTIONS =
  'Book metadata: books (editions, bk_ ids), works (wk_) and authors (au_). Every tool answers the same JSON as the HTTP API at /v1 for the same request, ' +
  'as text. An error answers the API\'s error JSON {"error": {"code", "message"}} with isError set: bad_request means fix the arguments, ' +
  'not_found means the catalogue has no such record. With an ISBN use lookup_isbn; with a messy reference (title, maybe author or year) to resolve to one book ' +
  'use match_book; to browse or list candidates use search_books or search_authors.';

// Built once: the tools do not change while the process runs.
const listing: ListToolsResult = {
  tools: tools.map(({ name, title, description, inputSchema }) => ({
    name,
    title,
    description,
    inputSchema,
    annotations: { readOnlyHint: true, idempotentHint: true, openWorldHint: false },
  })),
};

// Used only for what a server asks of clients (elicitation), which this one never does; without
// it every Server would build its own Ajv, at 3 ms a request.
const jsonSchemaValidator = new AjvJsonSchemaValidator();

/** A tools/call: the tool's answer as text content, or the API's error JSON with isError set. */
async function callTool(context: ToolContext, { name, arguments: args }: CallToolRequest['params']): Promise<CallToolResult> {
  const tool = toolsByName.get(name);
  if (!tool) throw new McpError(ErrorCode.InvalidParams, `unknown tool ${name}; tools/list names the tools`);
  try {
    const { text, note } = await tool.call(context, args);
    return { content: note === undefined ? [{ type: 'text', text }] : [{ type: 'text', text }, { type: 'text', text: note }] };
  } catch (error) {
    // Arguments that do not fit the tool's schema are the protocol's error, not the tool's.
    if (error instanceof McpError) throw error;
    const apiError = asApiError(error);
    if (apiError.status === 500) context.services.log.error({ err: error, requestId: context.requestId, tool: name }, 'MCP tool failed');
    return { content: [{ type: 'text', text: JSON.stringify(apiError.toJSON()) }], isError: true };
  }
}

/**
 * The SDK server of one POST: protocol, initialize, capabilities, method dispatch and request
 * validation are the SDK's. The low-level `Server` rather than `McpServer`: McpServer answers
 * arguments that miss the schema with its own text, where ours must be the API's 400 JSON.
 */
function mcpServer(context: ToolContext): Server {
  const server = new Server(SERVER_INFO, { capabilities: { tools: {} }, instructions: INSTRUCTIONS, jsonSchemaValidator });
  server.setRequestHandler(ListToolsRequestSchema, () => listing);
  server.setRequestHandler(CallToolRequestSchema, ({ params }) => callTool(context, params));
  return server;
}

const isRequest = (message: JSONRPCMessage): message is JSONRPCRequest => 'method' in message && 'id' in message;

async function answerThroughServer(context: ToolContext, messages: JSONRPCMessage[], requests: number): Promise<JSONRPCMessage[]> {
  const server = mcpServer(context);
  const exchange = new PostExchange(requests);
  await server.connect(exchange);
  try {
    exchange.deliver(messages);
    return requests === 0 ? [] : await exchange.responses;
  } finally {
    await server.close();
  }
}

/**
 * A lone call of a known tool, answered without the SDK's Server: its Protocol tells a request from
 * a response by trying to parse it as each kind of response first, and those failing zod parses
 * (each builds an Error) cost more than a whole cached /v1 lookup. The request is checked with the
 * SDK's schema, the handler is the one the Server runs, the envelope is the one it sends.
 */
async function answerToolCall(context: ToolContext, message: JSONRPCMessage): Promise<JSONRPCResponse | null> {
  if (!isRequest(message) || message.method !== 'tools/call') return null;
  const call = CallToolRequestSchema.safeParse(message);
  if (!call.success) return jsonRpcError(message.id, ErrorCode.InvalidParams, 'tools/call params must be {"name": string, "arguments"?: object}');
  // Anything the SDK would treat specially (a task to create, an unknown tool) goes through it.
  if (call.data.params.task !== undefined || !toolsByName.has(call.data.params.name)) return null;
  try {
    return { result: await callTool(context, call.data.params), jsonrpc: '2.0', id: message.id };
  } catch (error) {
    if (error instanceof McpError) return jsonRpcError(message.id, error.code, error.message.replace(/^MCP error -?\d+: /, ''));
    throw error;
  }
}

/** A JSON-RPC 2.0 error response (`id` null when the request's id could not be read). */
export const jsonRpcError = (id: RequestId | null, code: number, message: string): JSONRPCResponse =>
  ({ jsonrpc: '2.0', id, error: { code, message } }) as JSONRPCResponse;

/** A body the protocol cannot take at all (not JSON, not JSON-RPC): answered with HTTP 400 and its JSON-RPC error. */
export class UnreadableMessage extends Error {
  constructor(readonly response: JSONRPCResponse) {
    super('unreadable JSON-RPC message');
  }
}

function parseMessages(body: unknown): JSONRPCMessage[] {
  const parsed = (Array.isArray(body) ? body : [body]).map((message) => JSONRPCMessageSchema.safeParse(message));
  if (parsed.length === 0 || parsed.some((message) => !message.success)) {
    const id = !Array.isArray(body) && typeof body === 'object' && body !== null && 'id' in body && (typeof body.id === 'string' || typeof body.id === 'number') ? body.id : null;
    throw new UnreadableMessage(
      jsonRpcError(id, ErrorCode.InvalidRequest, 'invalid request: the body must be a JSON-RPC 2.0 message (jsonrpc "2.0", a method, an id for requests) or a non-empty batch of them'),
    );
  }
  return parsed.map((message) => message.data!);
}


/**
 * Answers the body of one POST /mcp, statelessly: nothing outlives the request, so any API instance
 * answers any request and none needs an initialize first. Returns the response (an array for a
 * batch), or null when the body held no request (202). Answers are plain JSON, never an SSE
 * stream: no tool streams anything.
 *
 * The transport is PostExchange rather than the SDK's StreamableHTTPServerTransport: Koa keeps the
 * response, so the access log, the meter and the error renderer see its real status; the body is
 * parsed once; and the SDK transport checks every message against the initialize request's schema
 * twice, failing zod parses that alone cost more than a cached /v1 lookup.
 */
export async function answerMcpPost(context: ToolContext, body: unknown, protocolVersion: string | undefined): Promise<JSONRPCMessage | JSONRPCMessage[] | null> {
  const messages = parseMessages(body);
  // The header names the version negotiated at initialize; an initialize negotiates it itself.
  const initializing = messages.some((message) => 'method' in message && message.method === 'initialize');
  if (protocolVersion !== undefined && !initializing && !SUPPORTED_PROTOCOL_VERSIONS.includes(protocolVersion)) {
    throw badRequest(`unsupported MCP-Protocol-Version ${protocolVersion}; supported: ${SUPPORTED_PROTOCOL_VERSIONS.join(', ')}`);
  }
  if (!Array.isArray(body)) {
    const answered = await answerToolCall(context, messages[0]!);
    if (answered) return answered;
  }
  const requests = messages.filter(isRequest).length;
  const responses = await answerThroughServer(context, messages, requests);
  if (requests === 0) return null;
  return Array.isArray(body) ? responses : responses[0]!;
}

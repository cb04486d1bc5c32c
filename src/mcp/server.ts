import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { WebStandardStreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js';
import { CallToolRequestSchema, ErrorCode, ListToolsRequestSchema, McpError, type CallToolResult, type ListToolsResult } from '@modelcontextprotocol/sdk/types.js';
import { asApiError } from '../errors.js';
import { openApiDocument } from '../http/openapi.js';
import type { Services } from '../services/context.js';
import { tools, toolsByName, type ToolAnswer } from './tools.js';

const INSTRUCTIONS =
  'Book metadata: books (editions, bk_ ids), works (wk_) and authors (au_). Every tool answers the same JSON as the HTTP API at /v1 for the same request, ' +
  'as text. An error answers the API\'s error JSON {"error": {"code", "message"}} with isError set: bad_request means fix the arguments, ' +
  'not_found means the catalogue has no such record, rate_limited means wait. Prefer lookup_isbn when you have an ISBN.';

// Built once: the schemas do not change while the process runs.
const listing: ListToolsResult = {
  tools: tools.map(({ name, title, description, inputSchema }) => ({
    name,
    title,
    description,
    inputSchema,
    annotations: { readOnlyHint: true, idempotentHint: true, openWorldHint: false },
  })),
};

const toolResult = ({ json, note }: ToolAnswer): CallToolResult => ({
  content: note === undefined ? [{ type: 'text', text: JSON.stringify(json) }] : [{ type: 'text', text: JSON.stringify(json) }, { type: 'text', text: note }],
});

/**
 * The MCP server of one HTTP request. The low-level `Server` rather than `McpServer`: McpServer
 * answers arguments that miss the schema with its own text, where ours must be the API's 400 JSON,
 * and it rebuilds the JSON Schemas on every tools/list.
 */
function mcpServer(services: Services, requestId: string): Server {
  const server = new Server({ name: 'bookmeta', version: openApiDocument.info.version }, { capabilities: { tools: {} }, instructions: INSTRUCTIONS });
  server.setRequestHandler(ListToolsRequestSchema, () => listing);
  server.setRequestHandler(CallToolRequestSchema, async ({ params }): Promise<CallToolResult> => {
    const tool = toolsByName.get(params.name);
    if (!tool) throw new McpError(ErrorCode.InvalidParams, `unknown tool ${params.name}; tools/list names the tools`);
    try {
      return toolResult(await tool.call(services, params.arguments));
    } catch (error) {
      const apiError = asApiError(error);
      if (apiError.status >= 500) services.log.error({ err: error, requestId, tool: tool.name }, 'MCP tool failed');
      return { content: [{ type: 'text', text: JSON.stringify(apiError.toJSON()) }], isError: true };
    }
  });
  return server;
}

/**
 * Answers one POST /mcp statelessly: a fresh server and transport per request and no session id,
 * so any API instance can answer any request. Responses are plain JSON, never an SSE stream: no
 * tool sends progress or notifications, and JSON is cheaper to produce and to proxy.
 */
export async function answerMcpRequest(services: Services, request: Request, body: unknown, requestId: string): Promise<Response> {
  const server = mcpServer(services, requestId);
  const transport = new WebStandardStreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
  try {
    await server.connect(transport);
    return await transport.handleRequest(request, { parsedBody: body });
  } finally {
    await server.close();
  }
}

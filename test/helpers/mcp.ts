import type { TestFn } from 'ava';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { RunningServer } from '../../src/server.js';
import { loadSampleCatalogue } from './catalogue.js';
import { createWorld, GENEROUS_STORE_WAIT, newKey, startTestServer, type TestWorld } from './env.js';
import { openSearchWorld } from './search.js';

/**
 * What the MCP test files share: one world per file (its database, server and key, exported as live
 * bindings once `useMcpWorld` has set them up), an SDK client, raw JSON-RPC posts, and the HTTP
 * answer a tool is held to.
 */

export let world: TestWorld;
export let server: RunningServer;
export let key: Awaited<ReturnType<typeof newKey>>;

/**
 * Sets up the file's world before its tests and removes it after: the sample catalogue, indexed when
 * `indexed` (so that search, match and recommendations answer too), a server and a key.
 */
export function useMcpWorld(test: TestFn, { indexed }: { indexed: boolean }): void {
  let close: (() => Promise<void>) | undefined;
  test.before(async () => {
    if (indexed) {
      // The MCP SDK's client does not retry a tool's 503: the wait is the generous one.
      const search = await openSearchWorld(undefined, GENEROUS_STORE_WAIT);
      ({ world, server } = search);
      close = () => search.close();
    } else {
      world = await createWorld();
      close = () => world.destroy();
      await loadSampleCatalogue(world);
      server = await startTestServer(world, { rateLimitMax: 1_000_000 });
      close = async () => {
        await server.stop();
        await world.destroy();
      };
    }
    key = await newKey(world);
  });
  test.after.always(async () => {
    await close?.();
  });
}

export interface TextContent {
  type: 'text';
  text: string;
}
export interface ToolResult {
  content: TextContent[];
  isError?: boolean;
}

/** The SDK's own client over streamable HTTP, sending the key the way an MCP client configuration does. */
export async function connect(
  url = server.url,
  auth: Record<string, string> = key.auth,
): Promise<{ client: Client; transport: StreamableHTTPClientTransport }> {
  const client = new Client({ name: 'bookmeta-test', version: '1.0.0' });
  const transport = new StreamableHTTPClientTransport(new URL('/mcp', url), { requestInit: { headers: auth } });
  await client.connect(transport);
  return { client, transport };
}

export async function callTool(client: Client, name: string, args: Record<string, unknown>): Promise<ToolResult> {
  return (await client.callTool({ name, arguments: args })) as unknown as ToolResult;
}

/** The HTTP API's answer, as bytes (redirects not followed, as a 301 is part of the answer); a string body makes it a POST. */
export async function http(
  path: string,
  auth: Record<string, string> = key.auth,
  body?: string,
): Promise<{ status: number; text: string; location: string | null }> {
  const response = await fetch(`${server.url}${path}`, {
    redirect: 'manual',
    ...(body === undefined ? { headers: auth } : { method: 'POST', headers: { ...auth, 'Content-Type': 'application/json' }, body }),
  });
  return { status: response.status, text: await response.text(), location: response.headers.get('location') };
}

/** One raw MCP message over POST /mcp, as any streamable-HTTP client sends it. */
export function postMcp(url: string, message: unknown, auth: Record<string, string> = key.auth): Promise<Response> {
  return fetch(`${url}/mcp`, {
    method: 'POST',
    headers: { ...auth, 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream' },
    body: JSON.stringify(message),
  });
}

export const initialize = {
  jsonrpc: '2.0',
  id: 1,
  method: 'initialize',
  params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '1' } },
};
export const toolCall = (name: string, args: Record<string, unknown>, id = 2) => ({
  jsonrpc: '2.0',
  id,
  method: 'tools/call',
  params: { name, arguments: args },
});

export const HUNGER_GAMES = '9780439023481';

/** Which live books the tests that change the catalogue take: never The Hunger Games, which the other tests read. */
export const CHANGEABLE = { withIsbn: true, titleWithout: 'Hunger Games' } as const;

/** The JSON-RPC error a raw tools/call answers (HTTP 200, as the protocol's errors travel in the body). */
export async function toolCallError(name: string, args: Record<string, unknown>): Promise<{ code: number; message: string } | undefined> {
  const response = await postMcp(server.url, toolCall(name, args));
  return ((await response.json()) as { error?: { code: number; message: string } }).error;
}

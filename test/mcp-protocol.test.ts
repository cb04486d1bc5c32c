import test from 'ava';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { originAllowed } from '../src/http/routes/mcp.js';
import { revokeApiKey } from '../src/stores/postgres/apiKeys.js';
import { newKey, startTestServer } from './helpers/env.js';
import {
  HUNGER_GAMES,
  callTool,
  connect,
  http,
  initialize,
  key,
  postMcp,
  server,
  toolCall,
  toolCallError,
  useMcpWorld,
  world,
  type ToolResult,
} from './helpers/mcp.js';

// The MCP endpoint as a protocol: initialize, tools/list, JSON-RPC errors in the HTTP API's words, the key, origins, statelessness and the transport's rules.
useMcpWorld(test, { indexed: false });

test('the SDK client initializes with the API key, sees the server and its instructions, and gets no session', async (t) => {
  const { client, transport } = await connect();
  try {
    t.is(client.getServerVersion()?.name, 'bookmeta');
    t.deepEqual(client.getServerCapabilities()?.tools, {});
    t.regex(client.getInstructions() ?? '', /same JSON as the HTTP API/);
    t.is(transport.sessionId, undefined);
  } finally {
    await client.close();
  }
});

test('tools/list offers one tool per capability, each described for a model and with an object input schema', async (t) => {
  const { client } = await connect();
  try {
    const { tools } = await client.listTools();
    t.deepEqual(tools.map((tool) => tool.name).sort(), [
      'get_author',
      'get_book',
      'get_work',
      'list_changes',
      'lookup_isbn',
      'lookup_isbns',
      'match_book',
      'match_books',
      'recommend_books',
      'search_authors',
      'search_books',
      'subject_works',
      'suggest_books',
      'trending_works',
    ]);
    for (const tool of tools) {
      t.true((tool.description ?? '').length > 150, tool.name);
      t.is(tool.inputSchema.type, 'object', tool.name);
      // match_book needs a title or an ISBN, either one: no single argument is required; trending_works has a default period.
      if (tool.name !== 'match_book' && tool.name !== 'trending_works') t.true((tool.inputSchema.required ?? []).length >= 1, tool.name);
      t.is(tool.annotations?.readOnlyHint, true, tool.name);
    }
    const described = (name: string) => tools.find((tool) => tool.name === name)!.description!;
    t.regex(described('list_changes'), /cursor/);
    t.regex(described('match_book'), /confidence/);
    t.regex(described('match_book'), /Prefer this over search_books/);
    t.regex(described('search_books'), /prefer match_book/);
    t.deepEqual(tools.find((tool) => tool.name === 'list_changes')!.inputSchema.required, ['since']);
    // A batch tool takes its HTTP batch route's body, its items described as the single tool's arguments.
    const matchBatch = tools.find((tool) => tool.name === 'match_books')!.inputSchema;
    const records = matchBatch.properties?.records as { maxItems: number; items: { properties: object } };
    t.deepEqual(matchBatch.required, ['records']);
    t.is(records.maxItems, 50);
    t.deepEqual(Object.keys(records.items.properties), ['title', 'isbn', 'author', 'year', 'publisher']);
    const isbns = tools.find((tool) => tool.name === 'lookup_isbns')!.inputSchema.properties?.isbns as {
      maxItems: number;
      items: { type: string };
    };
    t.is(isbns.maxItems, 100);
    t.is(isbns.items.type, 'string');
  } finally {
    await client.close();
  }
});

test('an ISBN or a cursor sent as a JSON number is invalid params, as the HTTP API takes them only as text', async (t) => {
  t.deepEqual(await toolCallError('lookup_isbn', { isbn: Number(HUNGER_GAMES) }), { code: -32602, message: 'isbn must be a string' });
  t.deepEqual(await toolCallError('list_changes', { since: 0, limit: 3 }), { code: -32602, message: 'since must be a string' });
  t.deepEqual(await toolCallError('match_book', { isbn: Number(HUNGER_GAMES) }), { code: -32602, message: 'isbn must be a string' });
});

test("a request from a browser page of a foreign origin is refused 403 in the API's error shape; no Origin, a loopback one or a configured one is served", async (t) => {
  const withOrigin = (origin: string) =>
    fetch(`${server.url}/mcp`, {
      method: 'POST',
      headers: { ...key.auth, Origin: origin, 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream' },
      body: JSON.stringify(initialize),
    });
  for (const origin of ['http://evil.example.com', 'https://127.0.0.1.evil.example', 'null']) {
    const refused = await withOrigin(origin);
    t.is(refused.status, 403, origin);
    t.is(((await refused.json()) as { error: { code: string } }).error.code, 'forbidden', origin);
  }
  for (const origin of [new URL(server.url).origin, 'http://localhost:3000', 'http://[::1]:6274'])
    t.is((await withOrigin(origin)).status, 200, origin);
  t.is((await postMcp(server.url, initialize)).status, 200, 'no Origin: no browser page');
  t.true(originAllowed('https://app.example.com', ['https://app.example.com']));
  t.false(originAllowed('https://app.example.com.evil.example', ['https://app.example.com']));
  t.true(originAllowed('https://anything.example', ['*']));
});

test("arguments the tool's schema refuses are invalid params, in the words of the HTTP API's 400 for the same request", async (t) => {
  const cases: [tool: string, args: Record<string, unknown>, path: string, body?: string][] = [
    ['search_books', {}, '/v1/books/search'],
    ['match_book', { title: 5 }, '/v1/match', '{"title": 5}'],
    ['match_book', { title: 'Speak', year: 'old' }, '/v1/match', '{"title": "Speak", "year": "old"}'],
    ['match_book', { title: 'Speak', edition: 2 }, '/v1/match', '{"title": "Speak", "edition": 2}'],
    ['list_changes', {}, '/v1/changes'],
  ];
  for (const [tool, args, path, body] of cases) {
    const expected = await http(path, key.auth, body);
    t.is(expected.status, 400, path);
    const { error } = JSON.parse(expected.text) as { error: { message: string } };
    t.deepEqual(await toolCallError(tool, args), { code: -32602, message: error.message }, `${tool} ${JSON.stringify(args)}`);
  }
});

test("arguments that do not fit the schema are a JSON-RPC invalid-params error in the HTTP API's words", async (t) => {
  t.deepEqual(await toolCallError('lookup_isbn', { isbn: true }), { code: -32602, message: 'isbn must be a string' });
  t.deepEqual(await toolCallError('get_book', {}), { code: -32602, message: 'id is required' });
  t.deepEqual(await toolCallError('list_changes', {}), { code: -32602, message: 'since cursor is required' });
  t.is((await toolCallError('list_changes', { since: '0', limit: 1.5 }))?.code, -32602);
  const { client } = await connect();
  try {
    const error = await t.throwsAsync(callTool(client, 'get_book', { id: 5 }));
    t.regex(error.message, /id must be a string/);
  } finally {
    await client.close();
  }
});

test('tools/call params that are not {name, arguments} are invalid params, not an internal error', async (t) => {
  const response = await postMcp(server.url, {
    jsonrpc: '2.0',
    id: 7,
    method: 'tools/call',
    params: { name: 'lookup_isbn', arguments: 'isbn' },
  });
  t.is(response.status, 200);
  const body = (await response.json()) as { id: number; error?: { code: number } };
  t.is(body.id, 7);
  t.is(body.error?.code, -32602);
});

test('an unknown tool is a JSON-RPC invalid-params error, not a tool result', async (t) => {
  const response = await postMcp(server.url, toolCall('delete_everything', {}));
  t.is(response.status, 200);
  const body = (await response.json()) as { error?: { code: number; message: string } };
  t.is(body.error?.code, -32602);
  t.regex(body.error!.message, /unknown tool delete_everything/);
});

test('a tools/call answers the same alone and inside a JSON-RPC batch, where the SDK server answers it', async (t) => {
  const call = toolCall('lookup_isbn', { isbn: HUNGER_GAMES }, 7);
  const alone = await postMcp(server.url, call);
  const batch = await postMcp(server.url, [call, { jsonrpc: '2.0', id: 8, method: 'tools/list' }]);
  t.is(alone.status, 200);
  t.is(batch.status, 200);
  const responses = (await batch.json()) as { id: number; result: { tools?: unknown[] } }[];
  t.is(responses.length, 2);
  t.is(JSON.stringify(responses.find((response) => response.id === 7)), await alone.text());
  t.is(responses.find((response) => response.id === 8)?.result.tools?.length, 14);
});

const unauthorizedBody = (message: string) => JSON.stringify({ error: { code: 'unauthorized', message } });

test("without an Authorization header, initialize is a 401 with the API's error body, and the SDK client reports it", async (t) => {
  const response = await postMcp(server.url, initialize, {});
  t.is(response.status, 401);
  t.is(response.headers.get('www-authenticate'), 'Bearer');
  const expected = unauthorizedBody('Authorization header is required: Bearer <API key>');
  t.is(await response.text(), expected);
  t.is((await http('/v1/isbn/9780439023481', {})).text, expected);

  const client = new Client({ name: 'bookmeta-test', version: '1.0.0' });
  const error = await t.throwsAsync(client.connect(new StreamableHTTPClientTransport(new URL('/mcp', server.url))));
  t.is((error as Error & { code?: number }).code, 401);
  t.true(error.message.includes(expected));
});

test('"Bearer" twice and a malformed key are 401 before any MCP message is handled, a tool call included', async (t) => {
  const cases: [authorization: string, message: string][] = [
    [`Bearer ${key.auth.Authorization}`, 'API key is malformed: expected svc_live_<kid>_<secret>'],
    ['Bearer svc_live_nokid', 'API key is malformed: expected svc_live_<kid>_<secret>'],
    [`Bearer svc_live_${key.kid}_${'b'.repeat(52)}`, 'API key is not valid'],
  ];
  for (const [authorization, message] of cases) {
    for (const message_ of [initialize, toolCall('lookup_isbn', { isbn: HUNGER_GAMES })]) {
      const response = await postMcp(server.url, message_, { Authorization: authorization });
      t.is(response.status, 401, authorization);
      t.is(await response.text(), unauthorizedBody(message), authorization);
    }
  }
});

test('a revoked key is a 401 on initialize within 5 seconds of revocation', async (t) => {
  const doomed = await newKey(world, 'doomed');
  t.is((await postMcp(server.url, initialize, doomed.auth)).status, 200);
  await revokeApiKey(world.db, doomed.kid);
  const revokedAt = Date.now();
  // Asked until refused or until a request sent after the 5 s has been answered: on a loaded machine
  // one answer can take seconds, and a request sent within the bound may still be served.
  let response: Response;
  for (;;) {
    const sentAt = Date.now();
    response = await postMcp(server.url, initialize, doomed.auth);
    if (response.status === 401 || sentAt - revokedAt > 5_000) break;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  t.is(response.status, 401);
  t.is(await response.text(), unauthorizedBody('API key has been revoked'));
});

test('the endpoint is stateless: no session id, and a tool call needs no initialize on the same instance', async (t) => {
  const other = await startTestServer(world, { rateLimitMax: 100_000 });
  try {
    const initialized = await postMcp(server.url, initialize);
    t.is(initialized.status, 200);
    t.is(initialized.headers.get('mcp-session-id'), null);
    const called = await postMcp(other.url, toolCall('lookup_isbn', { isbn: HUNGER_GAMES }));
    t.is(called.status, 200);
    const body = (await called.json()) as { result: ToolResult };
    t.is(body.result.content[0]!.text, (await http(`/v1/isbn/${HUNGER_GAMES}`)).text);
  } finally {
    await other.stop();
  }
});

test('notifications alone are accepted with 202 and no body', async (t) => {
  const response = await postMcp(server.url, { jsonrpc: '2.0', method: 'notifications/initialized' });
  t.is(response.status, 202);
  t.is(await response.text(), '');
});

test("a body that is not JSON or not JSON-RPC is the protocol's parse or invalid-request error", async (t) => {
  const post = (body: string) =>
    fetch(`${server.url}/mcp`, {
      method: 'POST',
      headers: { ...key.auth, 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream' },
      body,
    });
  const cases: [body: string, code: number, id: string | number | null][] = [
    ['{"jsonrpc": ', -32700, null],
    ['', -32700, null],
    ['{"hello": "world"}', -32600, null],
    ['[]', -32600, null],
    ['{"jsonrpc": "1.0", "id": 3, "method": "tools/list"}', -32600, 3],
  ];
  for (const [body, code, id] of cases) {
    const response = await post(body);
    t.is(response.status, 400, body);
    const answer = (await response.json()) as { jsonrpc: string; id: unknown; error: { code: number; message: string } };
    t.is(answer.jsonrpc, '2.0', body);
    t.is(answer.id, id, body);
    t.is(answer.error.code, code, body);
    t.true(answer.error.message.length > 0, body);
  }
});

test("a wrong Content-Type or Accept, or an unknown protocol version are refused in the API's error shape", async (t) => {
  const post = (body: string, headers: Record<string, string>) =>
    fetch(`${server.url}/mcp`, { method: 'POST', headers: { ...key.auth, ...headers }, body });
  const json = { 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream' };
  const cases: [response: Response, status: number, code: string][] = [
    [
      await post(JSON.stringify(toolCall('lookup_isbn', { isbn: HUNGER_GAMES })), { ...json, 'Content-Type': 'text/plain' }),
      415,
      'unsupported_media_type',
    ],
    [await post(JSON.stringify(toolCall('lookup_isbn', { isbn: HUNGER_GAMES })), { ...json, Accept: 'text/html' }), 406, 'not_acceptable'],
    [
      await post(JSON.stringify(toolCall('lookup_isbn', { isbn: HUNGER_GAMES })), { ...json, 'MCP-Protocol-Version': '1999-01-01' }),
      400,
      'bad_request',
    ],
  ];
  for (const [response, status, code] of cases) {
    t.is(response.status, status);
    t.is(((await response.json()) as { error: { code: string } }).error.code, code);
  }
  const current = await post(JSON.stringify(toolCall('lookup_isbn', { isbn: HUNGER_GAMES })), {
    ...json,
    'MCP-Protocol-Version': '2025-06-18',
  });
  t.is(current.status, 200);
});

test("GET and DELETE on /mcp answer 405 in the API's error shape: there is no stream or session to open or end", async (t) => {
  for (const method of ['GET', 'DELETE']) {
    const response = await fetch(`${server.url}/mcp`, { method, headers: key.auth });
    t.is(response.status, 405, method);
    t.is(response.headers.get('allow'), 'POST', method);
    t.is(((await response.json()) as { error: { code: string } }).error.code, 'method_not_allowed', method);
  }
});

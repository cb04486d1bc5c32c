import test, { type ExecutionContext } from 'ava';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { RunningServer } from '../src/server.js';
import { merge } from '../src/services/merge.js';
import { originAllowed } from '../src/http/routes/mcp.js';
import { revokeApiKey } from '../src/stores/postgres/apiKeys.js';
import { newKey, startTestServer, type TestWorld } from './helpers/env.js';
import { openSearchWorld, type SearchWorld } from './helpers/search.js';
import { liveBooks } from './helpers/catalogue.js';
import { meteredCalls } from './helpers/usage.js';

// The sample catalogue, indexed, so that search, match and recommendations answer too.
let search: SearchWorld;
let world: TestWorld;
let server: RunningServer;
let key: Awaited<ReturnType<typeof newKey>>;

test.before(async () => {
  search = await openSearchWorld();
  ({ world, server } = search);
  key = await newKey(world);
});
test.after.always(async () => {
  await search?.close();
});

interface TextContent {
  type: 'text';
  text: string;
}
interface ToolResult {
  content: TextContent[];
  isError?: boolean;
}

/** The SDK's own client over streamable HTTP, sending the key the way an MCP client configuration does. */
async function connect(
  url = server.url,
  auth: Record<string, string> = key.auth,
): Promise<{ client: Client; transport: StreamableHTTPClientTransport }> {
  const client = new Client({ name: 'bookmeta-test', version: '1.0.0' });
  const transport = new StreamableHTTPClientTransport(new URL('/mcp', url), { requestInit: { headers: auth } });
  await client.connect(transport);
  return { client, transport };
}

async function callTool(client: Client, name: string, args: Record<string, unknown>): Promise<ToolResult> {
  return (await client.callTool({ name, arguments: args })) as unknown as ToolResult;
}

/** The HTTP API's answer, as bytes (redirects not followed, as a 301 is part of the answer); a string body makes it a POST. */
async function http(
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
function postMcp(url: string, message: unknown, auth: Record<string, string> = key.auth): Promise<Response> {
  return fetch(`${url}/mcp`, {
    method: 'POST',
    headers: { ...auth, 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream' },
    body: JSON.stringify(message),
  });
}

const initialize = {
  jsonrpc: '2.0',
  id: 1,
  method: 'initialize',
  params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '1' } },
};
const toolCall = (name: string, args: Record<string, unknown>, id = 2) => ({
  jsonrpc: '2.0',
  id,
  method: 'tools/call',
  params: { name, arguments: args },
});

const HUNGER_GAMES = '9780439023481';

/** Which live books the tests that change the catalogue take: never The Hunger Games, which the other tests read. */
const CHANGEABLE = { withIsbn: true, titleWithout: 'Hunger Games' } as const;

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
    ]);
    for (const tool of tools) {
      t.true((tool.description ?? '').length > 150, tool.name);
      t.is(tool.inputSchema.type, 'object', tool.name);
      // match_book needs a title or an ISBN, either one: no single argument is required.
      if (tool.name !== 'match_book') t.true((tool.inputSchema.required ?? []).length >= 1, tool.name);
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

test('each tool answers byte for byte what the HTTP API answers for the same request', async (t) => {
  const book = JSON.parse((await http(`/v1/isbn/${HUNGER_GAMES}`)).text) as { id: string; work_id: string; authors: { id: string }[] };
  const author = book.authors[0]!.id;
  const cases: [tool: string, args: Record<string, unknown>, path: string, body?: string][] = [
    ['lookup_isbn', { isbn: HUNGER_GAMES }, `/v1/isbn/${HUNGER_GAMES}`],
    ['lookup_isbn', { isbn: '0-439-02348-3' }, '/v1/isbn/0-439-02348-3'],
    ['get_book', { id: book.id }, `/v1/books/${book.id}`],
    ['get_work', { id: book.work_id }, `/v1/works/${book.work_id}`],
    ['get_author', { id: author }, `/v1/authors/${author}`],
    ['search_books', { q: 'hunger games' }, '/v1/books/search?q=hunger%20games'],
    [
      'search_books',
      { q: 'the', limit: 5, offset: 2, author_id: author, language: 'eng', year_from: 2000, year_to: 2015, editions: 'all' },
      `/v1/books/search?q=the&limit=5&offset=2&author_id=${author}&language=eng&year_from=2000&year_to=2015&editions=all`,
    ],
    ['search_authors', { q: 'rowling' }, '/v1/authors/search?q=rowling'],
    ['search_authors', { q: 'collins', limit: 2, offset: 1 }, '/v1/authors/search?q=collins&limit=2&offset=1'],
    [
      'match_book',
      { title: 'The Hunger Games', author: 'Suzanne Collins', year: 2008 },
      '/v1/match',
      '{"title": "The Hunger Games", "author": "Suzanne Collins", "year": 2008}',
    ],
    ['match_book', { isbn: '0439023483' }, '/v1/match', '{"isbn": "0439023483"}'],
    ['match_book', { title: 'A Book Nobody Wrote', author: 'Nobody' }, '/v1/match', '{"title": "A Book Nobody Wrote", "author": "Nobody"}'],
    ['recommend_books', { id: book.id }, `/v1/books/${book.id}/recommendations`],
    ['recommend_books', { id: book.id, limit: 3 }, `/v1/books/${book.id}/recommendations?limit=3`],
    ['list_changes', { since: '0', limit: 5 }, '/v1/changes?since=0&limit=5'],
    ['list_changes', { since: '0' }, '/v1/changes?since=0'],
  ];
  const { client } = await connect();
  try {
    for (const [tool, args, path, body] of cases) {
      const expected = await http(path, key.auth, body);
      t.is(expected.status, 200, path);
      const result = await callTool(client, tool, args);
      t.falsy(result.isError, tool);
      t.is(result.content.length, 1, tool);
      t.is(result.content[0]!.text, expected.text, `${tool} ${JSON.stringify(args)}`);
    }
  } finally {
    await client.close();
  }
});

test('every tool has a title and an object outputSchema, and answers its JSON as structuredContent too, which the SDK client checks against that schema', async (t) => {
  const book = JSON.parse((await http(`/v1/isbn/${HUNGER_GAMES}`)).text) as { id: string; work_id: string; authors: { id: string }[] };
  const calls: Record<string, Record<string, unknown>> = {
    lookup_isbn: { isbn: HUNGER_GAMES },
    lookup_isbns: { isbns: [HUNGER_GAMES, '12345'] },
    get_book: { id: book.id },
    get_work: { id: book.work_id },
    get_author: { id: book.authors[0]!.id },
    search_books: { q: 'hunger games', limit: 3 },
    search_authors: { q: 'collins' },
    match_book: { title: 'The Hunger Games', author: 'Suzanne Collins' },
    match_books: { records: [{ title: 'The Hunger Games' }, {}] },
    recommend_books: { id: book.id, limit: 3 },
    list_changes: { since: '0', limit: 3 },
  };
  const { client } = await connect();
  try {
    // Listing the tools makes the client validate each result against the tool's outputSchema.
    const { tools } = await client.listTools();
    t.deepEqual(tools.map((tool) => tool.name).sort(), Object.keys(calls).sort());
    for (const tool of tools) {
      t.true((tool.title ?? '').length > 0, tool.name);
      t.is(tool.outputSchema?.type, 'object', tool.name);
      const result = (await client.callTool({ name: tool.name, arguments: calls[tool.name] })) as unknown as ToolResult & {
        structuredContent?: unknown;
      };
      t.falsy(result.isError, tool.name);
      t.deepEqual(result.structuredContent, JSON.parse(result.content[0]!.text), tool.name);
    }
  } finally {
    await client.close();
  }
});

/** The JSON-RPC error a raw tools/call answers (HTTP 200, as the protocol's errors travel in the body). */
async function toolCallError(name: string, args: Record<string, unknown>): Promise<{ code: number; message: string } | undefined> {
  const response = await postMcp(server.url, toolCall(name, args));
  return ((await response.json()) as { error?: { code: number; message: string } }).error;
}

test('an ISBN or a cursor sent as a JSON number is invalid params, as the HTTP API takes them only as text', async (t) => {
  t.deepEqual(await toolCallError('lookup_isbn', { isbn: Number(HUNGER_GAMES) }), { code: -32602, message: 'isbn must be a string' });
  t.deepEqual(await toolCallError('list_changes', { since: 0, limit: 3 }), { code: -32602, message: 'since must be a string' });
  t.deepEqual(await toolCallError('match_book', { isbn: Number(HUNGER_GAMES) }), { code: -32602, message: 'isbn must be a string' });
});

test("a failing tool answers the HTTP API's error JSON for the same request, with isError set", async (t) => {
  const cases: [tool: string, args: Record<string, unknown>, path: string, status: number, body?: string][] = [
    ['lookup_isbn', { isbn: '9780439023482' }, '/v1/isbn/9780439023482', 400],
    ['lookup_isbn', { isbn: '9780306406157' }, '/v1/isbn/9780306406157', 404],
    ['get_book', { id: 'bk_0000000000zz' }, '/v1/books/bk_0000000000zz', 404],
    ['get_work', { id: 'wk_0000000000zz' }, '/v1/works/wk_0000000000zz', 404],
    ['get_work', { id: 'nonsense' }, '/v1/works/nonsense', 400],
    ['get_author', { id: 'au_0000000000zz' }, '/v1/authors/au_0000000000zz', 404],
    ['search_books', { q: 'potter', limit: 0 }, '/v1/books/search?q=potter&limit=0', 400],
    ['search_books', { q: 'potter', offset: 990, limit: 20 }, '/v1/books/search?q=potter&offset=990&limit=20', 400],
    ['search_books', { q: 'potter', author_id: 'rowling' }, '/v1/books/search?q=potter&author_id=rowling', 400],
    ['search_books', { q: 'potter', editions: 'some' }, '/v1/books/search?q=potter&editions=some', 400],
    ['search_authors', { q: ' ' }, '/v1/authors/search?q=%20', 400],
    ['match_book', {}, '/v1/match', 400, '{}'],
    ['match_book', { author: 'Suzanne Collins' }, '/v1/match', 400, '{"author": "Suzanne Collins"}'],
    ['match_book', { isbn: '123' }, '/v1/match', 400, '{"isbn": "123"}'],
    ['recommend_books', { id: 'bk_0000000000zz' }, '/v1/books/bk_0000000000zz/recommendations', 404],
    ['recommend_books', { id: 'bk_0000000000zz', limit: 51 }, '/v1/books/bk_0000000000zz/recommendations?limit=51', 400],
    ['list_changes', { since: 'abc' }, '/v1/changes?since=abc', 400],
    ['list_changes', { since: '0', limit: 5000 }, '/v1/changes?since=0&limit=5000', 400],
  ];
  const { client } = await connect();
  try {
    for (const [tool, args, path, status, body] of cases) {
      const expected = await http(path, key.auth, body);
      t.is(expected.status, status, path);
      const result = await callTool(client, tool, args);
      t.true(result.isError, `${tool} ${JSON.stringify(args)}`);
      t.is(result.content[0]!.text, expected.text, `${tool} ${JSON.stringify(args)}`);
    }
  } finally {
    await client.close();
  }
});

test('every tool refuses an argument its schema does not name with invalid params, as its additionalProperties: false says', async (t) => {
  const book = JSON.parse((await http(`/v1/isbn/${HUNGER_GAMES}`)).text) as { id: string; work_id: string; authors: { id: string }[] };
  const valid: Record<string, Record<string, unknown>> = {
    lookup_isbn: { isbn: HUNGER_GAMES },
    lookup_isbns: { isbns: [HUNGER_GAMES] },
    get_book: { id: book.id },
    get_work: { id: book.work_id },
    get_author: { id: book.authors[0]!.id },
    search_books: { q: 'hunger' },
    search_authors: { q: 'collins' },
    match_book: { title: 'The Hunger Games' },
    match_books: { records: [{ title: 'The Hunger Games' }] },
    recommend_books: { id: book.id },
    list_changes: { since: '0' },
  };
  const listed = (
    (await (await postMcp(server.url, { jsonrpc: '2.0', id: 1, method: 'tools/list' })).json()) as {
      result: { tools: { name: string; inputSchema: { additionalProperties?: unknown } }[] };
    }
  ).result.tools;
  t.deepEqual(listed.map((tool) => tool.name).sort(), Object.keys(valid).sort(), 'every tool is tried');
  for (const tool of listed) {
    t.is(tool.inputSchema.additionalProperties, false, tool.name);
    const ok = await postMcp(server.url, toolCall(tool.name, valid[tool.name]!));
    t.falsy(((await ok.json()) as { error?: unknown }).error, `${tool.name} with its own arguments`);
    const error = await toolCallError(tool.name, { ...valid[tool.name], x: 1 });
    t.is(error?.code, -32602, tool.name);
    t.regex(error?.message ?? '', /"x"/, tool.name);
  }
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
    t.regex(error!.message, /id must be a string/);
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

test.serial('a merged id resolves to the survivor: the JSON GET <Location> answers, and a note naming the survivor', async (t) => {
  const [from, into] = await liveBooks(world.db, 2, { ...CHANGEABLE, offset: 40 });
  t.true((await merge(world.db, world.cache, 'book', from!.id, into!.id)).merged);
  const { client } = await connect();
  try {
    // The same request of the survivor: where the 301 points, with the request's own parameters.
    const cases: [tool: string, args: Record<string, unknown>, path: string, survivorPath: string][] = [
      ['get_book', { id: from!.id }, `/v1/books/${from!.id}`, `/v1/books/${into!.id}`],
      ['lookup_isbn', { isbn: from!.isbn_13 }, `/v1/isbn/${from!.isbn_13}`, `/v1/books/${into!.id}`],
      [
        'recommend_books',
        { id: from!.id, limit: 3 },
        `/v1/books/${from!.id}/recommendations?limit=3`,
        `/v1/books/${into!.id}/recommendations?limit=3`,
      ],
    ];
    for (const [tool, args, path, survivorPath] of cases) {
      const redirect = await http(path);
      t.is(redirect.status, 301, path);
      t.true(survivorPath.startsWith(redirect.location!), path);
      const survivor = await http(survivorPath);
      t.is(survivor.status, 200, survivorPath);
      const result = await callTool(client, tool, args);
      t.falsy(result.isError, tool);
      t.is(result.content[0]!.text, survivor.text, tool);
      t.is(result.content.length, 2, tool);
      t.regex(result.content[1]!.text, new RegExp(`was merged into ${into!.id}.*Use ${into!.id} from now on`), tool);
    }
    // In a batch, as POST /v1/isbn/batch answers it: the survivor's record, merged_into naming it.
    const bulk = await http('/v1/isbn/batch', key.auth, JSON.stringify({ isbns: [from!.isbn_13] }));
    t.is((await callTool(client, 'lookup_isbns', { isbns: [from!.isbn_13] })).content[0]!.text, bulk.text);
    t.regex(bulk.text, new RegExp(`"merged_into":"${into!.id}"`));
  } finally {
    await client.close();
  }
});

test.serial('a lookup tool answers from the same 24-hour cache entry as its route, and a change drops it for both', async (t) => {
  const [book] = await liveBooks(world.db, 1, { ...CHANGEABLE, offset: 60 });
  const path = `/v1/books/${book!.id}`;
  const { client } = await connect();
  try {
    const fromTool = await callTool(client, 'get_book', { id: book!.id }); // a miss, stored by the tool
    await new Promise((resolve) => setTimeout(resolve, 50)); // the store is not awaited
    const viaHttp = await fetch(`${server.url}${path}`, { headers: key.auth });
    t.is(viaHttp.headers.get('x-cache'), 'HIT');
    t.is(await viaHttp.text(), fromTool.content[0]!.text);

    await world.db.query('update books set pages = 999 where id = $1', [book!.id]);
    await world.cache.invalidate([book!.id]);
    const changed = await callTool(client, 'get_book', { id: book!.id });
    t.is((JSON.parse(changed.content[0]!.text) as { pages: number }).pages, 999);
  } finally {
    await client.close();
  }
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
  t.is(responses.find((response) => response.id === 8)?.result.tools?.length, 11);
});

/** A batch tool's answer, checked to be byte for byte its route's for the same body; its results. */
async function batchAsRoute(
  t: ExecutionContext,
  client: Client,
  tool: string,
  path: string,
  body: Record<string, unknown[]>,
): Promise<unknown[]> {
  const expected = await http(path, key.auth, JSON.stringify(body));
  t.is(expected.status, 200);
  const result = await callTool(client, tool, body);
  t.falsy(result.isError);
  t.is(result.content.length, 1);
  t.is(result.content[0]!.text, expected.text);
  return (JSON.parse(result.content[0]!.text) as { results: unknown[] }).results;
}

test("match_books answers byte for byte what POST /v1/match/batch answers, each record as match_book would and a record's 400 in its place", async (t) => {
  const records: unknown[] = [
    { title: 'The Hunger Games', author: 'Suzanne Collins', year: 2008 },
    {},
    { isbn: '0439023483' },
    'The Hunger Games',
    { titel: 'Mort' },
    { title: 'Mockingjay', year: '2010' },
    { title: 'A Book Nobody Wrote', author: 'Nobody' },
  ];
  const { client } = await connect();
  try {
    const results = await batchAsRoute(t, client, 'match_books', '/v1/match/batch', { records });
    t.is(results.length, records.length);
    t.deepEqual(results[1], { error: { code: 'bad_request', message: 'title or isbn required' } });
    const single = await callTool(client, 'match_book', records[0] as Record<string, unknown>);
    t.deepEqual(results[0], JSON.parse(single.content[0]!.text));
  } finally {
    await client.close();
  }
});

/** A batch tool's arguments that are no batch: invalid params, in the words of the 400 its route answers for the same body. */
async function assertInvalidAsRoute(t: ExecutionContext, tool: string, path: string, cases: Record<string, unknown>[]): Promise<void> {
  for (const args of cases) {
    const note = JSON.stringify(args).slice(0, 80);
    const expected = await http(path, key.auth, JSON.stringify(args));
    t.is(expected.status, 400, note);
    const { error } = JSON.parse(expected.text) as { error: { message: string } };
    t.deepEqual(await toolCallError(tool, args), { code: -32602, message: error.message }, note);
  }
}

test("match_books arguments that are no batch are invalid params, in the words of POST /v1/match/batch's 400 for the same body", async (t) => {
  const cases: Record<string, unknown>[] = [
    {},
    { records: { title: 'Mort' } },
    { records: [] },
    { records: Array.from({ length: 51 }, () => ({ title: 'Mort' })) },
    { records: [{ title: 'Mort' }], limit: 3 },
    { records: [], limit: 3 },
  ];
  await assertInvalidAsRoute(t, 'match_books', '/v1/match/batch', cases);
});

test('match_books draws one unit per record, all or none, as POST /v1/match/batch: a batch the budget cannot cover is a 429 in the same words that spends nothing', async (t) => {
  const small = await startTestServer(world, { rateLimitMax: 10 });
  try {
    const { auth } = await newKey(world, 'batch-budget');
    const records = (n: number) => ({ records: Array.from({ length: n }, (_, i) => ({ title: `Mockingjay ${i}` })) });
    const refusal = (count: number, left: number, reset: string | null) =>
      `rate limit exceeded: a batch of ${count} items needs ${count} requests of the budget (10 requests per 60 seconds): ${left} left of 10; retry in ${reset} s`;

    const four = await postMcp(small.url, toolCall('match_books', records(4)), auth);
    t.is(four.status, 200);
    t.is(four.headers.get('ratelimit-remaining'), '6');
    const seven = await postMcp(small.url, toolCall('match_books', records(7)), auth);
    t.is(seven.status, 429);
    t.true(Number(seven.headers.get('retry-after')) >= 1);
    t.is(seven.headers.get('ratelimit-remaining'), '6');
    t.deepEqual(await seven.json(), { error: { code: 'rate_limited', message: refusal(7, 6, seven.headers.get('ratelimit-reset')) } });
    const sevenOverHttp = await fetch(`${small.url}/v1/match/batch`, {
      method: 'POST',
      headers: { ...auth, 'Content-Type': 'application/json' },
      body: JSON.stringify(records(7)),
    });
    t.is(sevenOverHttp.status, 429);
    t.deepEqual(await sevenOverHttp.json(), {
      error: { code: 'rate_limited', message: refusal(7, 6, sevenOverHttp.headers.get('ratelimit-reset')) },
    });

    // Arguments that are no batch cost one unit, like any request.
    const malformed = await postMcp(small.url, toolCall('match_books', { records: 3 }), auth);
    t.is(malformed.status, 200);
    t.is(((await malformed.json()) as { error: { code: number } }).error.code, -32602);
    t.is(malformed.headers.get('ratelimit-remaining'), '5');
    const five = await postMcp(small.url, toolCall('match_books', records(5)), auth);
    t.is(five.status, 200);
    t.is(five.headers.get('ratelimit-remaining'), '0');
    t.is((await postMcp(small.url, toolCall('lookup_isbn', { isbn: HUNGER_GAMES }), auth)).status, 429);
  } finally {
    await small.stop();
  }
});

test('lookup_isbns answers byte for byte what POST /v1/isbn/batch answers: each ISBN as lookup_isbn, its 400 or 404 in its place', async (t) => {
  const isbns = [HUNGER_GAMES, '0-439-55493-4', '9780306406157', '12345', '9780439023482'];
  const { client } = await connect();
  try {
    const results = (await batchAsRoute(t, client, 'lookup_isbns', '/v1/isbn/batch', { isbns })) as {
      isbn: string;
      status: number;
      book?: unknown;
    }[];
    t.deepEqual(
      results.map((item) => [item.isbn, item.status]),
      isbns.map((isbn, index) => [isbn, [200, 200, 404, 400, 400][index]]),
    );
    const single = await callTool(client, 'lookup_isbn', { isbn: HUNGER_GAMES });
    t.deepEqual(results[0]!.book, JSON.parse(single.content[0]!.text));
  } finally {
    await client.close();
  }
});

test("lookup_isbns arguments that are no list of ISBNs are invalid params, in the words of POST /v1/isbn/batch's 400 for the same body", async (t) => {
  const cases: Record<string, unknown>[] = [
    {},
    { isbns: HUNGER_GAMES },
    { isbns: [] },
    { isbns: [Number(HUNGER_GAMES)] },
    { isbns: Array.from({ length: 101 }, (_, i) => String(9780000000000 + i)) },
    { isbns: [HUNGER_GAMES], ids: [] },
  ];
  await assertInvalidAsRoute(t, 'lookup_isbns', '/v1/isbn/batch', cases);
});

test('lookup_isbns draws one unit per distinct ISBN, all or none, as POST /v1/isbn/batch', async (t) => {
  const small = await startTestServer(world, { rateLimitMax: 10 });
  try {
    const { auth } = await newKey(world, 'isbn-budget');
    const isbns = (n: number) => ({ isbns: Array.from({ length: n }, (_, i) => String(9780000000000 + i)) });
    const four = await postMcp(small.url, toolCall('lookup_isbns', isbns(4)), auth);
    t.is(four.status, 200);
    t.is(four.headers.get('ratelimit-remaining'), '6');
    const seven = await postMcp(small.url, toolCall('lookup_isbns', isbns(7)), auth);
    t.is(seven.status, 429);
    t.is(seven.headers.get('ratelimit-remaining'), '6');
    t.regex(((await seven.json()) as { error: { message: string } }).error.message, /a batch of 7 items needs 7 requests of the budget/);
    // Eight entries, six distinct ISBNs: the two repeats are answered but not charged.
    const repeating = { isbns: [...isbns(6).isbns, ...isbns(2).isbns] };
    t.is((await postMcp(small.url, toolCall('lookup_isbns', repeating), auth)).headers.get('ratelimit-remaining'), '0');
  } finally {
    await small.stop();
  }
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
  t.true(error!.message.includes(expected));
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
  let response = await postMcp(server.url, initialize, doomed.auth);
  while (response.status !== 401 && Date.now() - revokedAt < 5_000) {
    await new Promise((resolve) => setTimeout(resolve, 100));
    response = await postMcp(server.url, initialize, doomed.auth);
  }
  t.is(response.status, 401);
  t.is(await response.text(), unauthorizedBody('API key has been revoked'));
});

test('MCP calls and /v1 calls spend one rate budget: past it, both paths answer 429 rate_limited', async (t) => {
  const small = await startTestServer(world, { rateLimitMax: 10 });
  try {
    const { auth } = await newKey(world, 'budget');
    const remaining: string[] = [];
    for (let i = 0; i < 5; i++) {
      const direct = await fetch(`${small.url}/v1/isbn/${HUNGER_GAMES}`, { headers: auth });
      t.is(direct.status, 200);
      remaining.push(direct.headers.get('ratelimit-remaining')!);
      const viaMcp = await postMcp(small.url, toolCall('lookup_isbn', { isbn: HUNGER_GAMES }), auth);
      t.is(viaMcp.status, 200);
      remaining.push(viaMcp.headers.get('ratelimit-remaining')!);
    }
    t.deepEqual(remaining, ['9', '8', '7', '6', '5', '4', '3', '2', '1', '0']);

    const limitedMcp = await postMcp(small.url, toolCall('lookup_isbn', { isbn: HUNGER_GAMES }), auth);
    t.is(limitedMcp.status, 429);
    t.is(((await limitedMcp.json()) as { error: { code: string } }).error.code, 'rate_limited');
    t.truthy(limitedMcp.headers.get('retry-after'));
    const limitedDirect = await fetch(`${small.url}/v1/isbn/${HUNGER_GAMES}`, { headers: auth });
    t.is(limitedDirect.status, 429);
    t.is(((await limitedDirect.json()) as { error: { code: string } }).error.code, 'rate_limited');
  } finally {
    await small.stop();
  }
});

test('a JSON-RPC batch costs and is metered as its messages sent one by one: each tools/call its own units and usage record, all or none', async (t) => {
  const small = await startTestServer(world, { rateLimitMax: 10 });
  try {
    const { kid, auth } = await newKey(world, 'array-budget');
    const lookups = (n: number, from = 10) =>
      Array.from({ length: n }, (_, i) => toolCall('lookup_isbn', { isbn: HUNGER_GAMES }, from + i));
    const four = await postMcp(small.url, [...lookups(4), { jsonrpc: '2.0', id: 1, method: 'tools/list' }], auth);
    t.is(four.status, 200);
    t.is(((await four.json()) as unknown[]).length, 5);
    t.is(four.headers.get('ratelimit-remaining'), '5');

    const six = await postMcp(small.url, lookups(6), auth);
    t.is(six.status, 429);
    t.is(six.headers.get('ratelimit-remaining'), '5');
    t.regex(((await six.json()) as { error: { message: string } }).error.message, /a batch of 6 items needs 6 requests of the budget/);

    const records = { records: [{ title: 'Mockingjay' }, { title: 'Catching Fire' }, { title: 'Mort' }] };
    const mixed = await postMcp(small.url, [toolCall('match_books', records, 30), ...lookups(1)], auth);
    t.is(mixed.status, 200);
    t.is(mixed.headers.get('ratelimit-remaining'), '1');

    await small.services.meter!.flush();
    const posts = (await meteredCalls(world.db, kid)).map((row) => `${row.route} ${row.status}`).sort();
    t.deepEqual(
      posts,
      [
        ...Array<string>(4).fill('/mcp tools/call lookup_isbn 200'),
        ...Array<string>(6).fill('/mcp tools/call lookup_isbn 429'),
        '/mcp tools/call lookup_isbn 200',
        '/mcp tools/call match_books 200',
        '/mcp 200',
      ].sort(),
    );
  } finally {
    await small.stop();
  }
});

test('every POST /mcp is metered once, a tool call under its tool name', async (t) => {
  const { kid, auth } = await newKey(world, 'metered');
  const { client } = await connect(server.url, auth);
  await client.listTools();
  await client.callTool({ name: 'lookup_isbn', arguments: { isbn: HUNGER_GAMES } });
  await client.callTool({ name: 'get_book', arguments: { id: 'bk_0000000000zz' } });
  await client.close();
  await server.services.meter!.flush();
  const rows = await meteredCalls(world.db, kid);
  const posts = rows.filter((row) => row.method === 'POST');
  t.deepEqual(
    posts.map((row) => row.route),
    ['/mcp', '/mcp', '/mcp', '/mcp tools/call lookup_isbn', '/mcp tools/call get_book'],
  );
  t.true(posts.every((row) => row.status === 200 || row.status === 202));
  // The SDK client also tries GET /mcp for a server-sent stream; that call is metered (405) like any other.
  t.true(rows.filter((row) => row.method !== 'POST').every((row) => row.route === '/mcp' && row.status === 405));
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

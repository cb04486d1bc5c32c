import test, { type ExecutionContext } from 'ava';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { bookRecord } from '../src/domain/records.js';
import { merge } from '../src/services/merge.js';
import { liveBooks } from './helpers/catalogue.js';
import {
  CHANGEABLE,
  HUNGER_GAMES,
  callTool,
  connect,
  http,
  key,
  postMcp,
  server,
  toolCall,
  toolCallError,
  useMcpWorld,
  world,
  type ToolResult,
} from './helpers/mcp.js';
import { pointCached } from './helpers/cache.js';

// Each MCP tool answers as its route: the same bytes, errors, merges and cache entries, and the same JSON as structured content.
useMcpWorld(test, { indexed: true });

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
    [
      'search_books',
      { q: 'potter author:rowling', sort: 'rating', facets: 'language,decade', facet_limit: 3 },
      '/v1/books/search?q=potter%20author%3Arowling&sort=rating&facets=language%2Cdecade&facet_limit=3',
    ],
    ['suggest_books', { q: 'hunger ga', limit: 3 }, '/v1/suggest?q=hunger%20ga&limit=3'],
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
    ['subject_works', { subject: 'Fiction', limit: 3, related: 2 }, '/v1/subjects/Fiction?limit=3&related=2'],
    ['trending_works', { period: 'month' }, '/v1/trending?period=month'],
    // fields cuts the records as fields= does.
    ['get_book', { id: book.id, fields: 'title,year,readers' }, `/v1/books/${book.id}?fields=title,year,readers`],
    ['search_books', { q: 'hunger games', fields: 'title' }, '/v1/books/search?q=hunger%20games&fields=title'],
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
    suggest_books: { q: 'coll' },
    match_book: { title: 'The Hunger Games', author: 'Suzanne Collins' },
    match_books: { records: [{ title: 'The Hunger Games' }, {}] },
    recommend_books: { id: book.id, limit: 3 },
    list_changes: { since: '0', limit: 3 },
    subject_works: { subject: 'Fiction' },
    trending_works: {},
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
    // With fields the records come cut, and the client still finds them as the outputSchema says (only their id required).
    const cut: [string, Record<string, unknown>, (structured: Record<string, unknown>) => unknown][] = [
      ['get_work', { id: book.work_id, fields: 'title' }, (work) => Object.keys(work)],
      [
        'search_books',
        { q: 'hunger games', limit: 2, fields: 'title' },
        (page) => Object.keys((page.results as { book: object }[])[0]!.book),
      ],
    ];
    for (const [name, args, keys] of cut) {
      const result = (await client.callTool({ name, arguments: args })) as unknown as ToolResult & {
        structuredContent: Record<string, unknown>;
      };
      t.falsy(result.isError, name);
      t.deepEqual(keys(result.structuredContent), ['id', 'title'], name);
      t.deepEqual(result.structuredContent, JSON.parse(result.content[0]!.text), name);
    }
    t.deepEqual(await toolCallError('get_book', { id: book.id, fields: 'colour' }), {
      code: -32602,
      message: `unknown field "colour" in fields: a book has ${Object.keys(bookRecord.shape).join(', ')}`,
    });
  } finally {
    await client.close();
  }
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
    suggest_books: { q: 'coll' },
    match_book: { title: 'The Hunger Games' },
    match_books: { records: [{ title: 'The Hunger Games' }] },
    recommend_books: { id: book.id },
    list_changes: { since: '0' },
    subject_works: { subject: 'Fiction' },
    trending_works: { period: 'day' },
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
    t.true(await pointCached(world, path)); // the store is not awaited
    const viaHttp = await fetch(`${server.url}${path}`, { headers: key.auth });
    t.is(viaHttp.headers.get('x-cache'), 'HIT');
    t.is(await viaHttp.text(), fromTool.content[0]!.text);

    await world.db.query('update books set pages = 999 where id = entity_key($1)', [book!.id]);
    await world.cache.invalidate([book!.id]);
    const changed = await callTool(client, 'get_book', { id: book!.id });
    t.is((JSON.parse(changed.content[0]!.text) as { pages: number }).pages, 999);
  } finally {
    await client.close();
  }
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

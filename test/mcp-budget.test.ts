import test from 'ava';
import { newKey, startTestServer } from './helpers/env.js';
import { meteredCalls } from './helpers/usage.js';
import { HUNGER_GAMES, connect, postMcp, server, toolCall, useMcpWorld, world } from './helpers/mcp.js';

// MCP calls draw on the key's one budget and are metered per tool, as their routes: single calls, batch tools and JSON-RPC batches.
useMcpWorld(test, { indexed: true });

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

import test from 'ava';
import type { RunningServer } from '../src/server.js';
import { GENEROUS_STORE_WAIT, newKey, startTestServer } from './helpers/env.js';
import { assertBadRequest } from './helpers/assertions.js';
import { openSearchWorld, type SearchWorld } from './helpers/search.js';

// Batch routes: many items in one request, each answered as its single route answers it, in input
// order, and each item one unit of the key's budget, all or none.

let search: SearchWorld;

test.before(async () => {
  // Its budget tests count each request against a small limit: a client that retried a 503 would
  // spend the budget twice, so the wait is the generous one instead.
  search = await openSearchWorld(undefined, GENEROUS_STORE_WAIT);
});
test.after.always(async () => {
  await search?.close();
});

const post = (server: RunningServer, path: string, body: unknown, auth: Record<string, string>): Promise<Response> =>
  fetch(`${server.url}${path}`, {
    method: 'POST',
    headers: { ...auth, 'Content-Type': 'application/json' },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });

test('a match batch answers each record exactly as POST /v1/match does, its 400 included, in input order', async (t) => {
  const records: unknown[] = [
    { title: 'harry poter and the sorcerers stone (Harry Potter, #1)', author: 'Rowling, JK' },
    {},
    { isbn: '978-0-439-02348-1' },
    { title: 'Mockingjay', year: '2010' },
    { title: 'Catching Fire', author: 'Suzanne Collins' },
    { title: 'The Collected Letters of Nobody in Particular' },
    'The Hunger Games',
    { titel: 'Mort' },
    { title: 'hunger gmes', author: 'Collins' },
  ];
  const response = await search.post('/v1/match/batch', JSON.stringify({ records }));
  t.is(response.status, 200);
  const { results } = (await response.json()) as { results: unknown[] };
  t.is(results.length, records.length);
  for (const [index, record] of records.entries()) {
    const single = await search.post('/v1/match', JSON.stringify(record));
    t.deepEqual(results[index], await single.json(), JSON.stringify(record));
  }
  t.deepEqual(results[1], { error: { code: 'bad_request', message: 'title or isbn required' } });
  t.deepEqual(results[6], { error: { code: 'bad_request', message: 'request body must be a JSON object' } });
  t.is((results[2] as { match: { isbn_13: string } }).match.isbn_13, '9780439023481');
});

test('a match batch that is not a list of 1 to 50 records is a 400 naming the problem', async (t) => {
  const cases: [string, string][] = [
    ['[{"title": "Mort"}]', 'request body must be a JSON object {"records": [...]}'],
    ['{}', 'records is required: {"records": [...]}'],
    ['{"records": {"title": "Mort"}}', 'records must be an array'],
    ['{"records": []}', 'records must not be empty'],
    [JSON.stringify({ records: Array.from({ length: 51 }, () => ({ title: 'Mort' })) }), 'records has 51 items; at most 50 per request'],
    ['{"records": [{"title": "Mort"}], "limit": 3}', 'unknown field "limit": the body is {"records": [...]}'],
    ['{"records": [', 'malformed JSON body'],
  ];
  for (const [body, message] of cases) await assertBadRequest(t, await search.post('/v1/match/batch', body), message, body);
});

test('a match batch draws one unit per record, all or none: one the budget cannot cover is a 429 with Retry-After and spends nothing', async (t) => {
  const server = await startTestServer(search.world, { rateLimitMax: 10 });
  t.teardown(() => server.stop());
  const { auth } = await newKey(search.world, 'budget');
  const records = (n: number) => ({ records: Array.from({ length: n }, (_, i) => ({ title: `Mockingjay ${i}` })) });

  const four = await post(server, '/v1/match/batch', records(4), auth);
  t.is(four.status, 200);
  t.is(four.headers.get('ratelimit-remaining'), '6');
  const seven = await post(server, '/v1/match/batch', records(7), auth);
  t.is(seven.status, 429);
  t.true(Number(seven.headers.get('retry-after')) >= 1);
  t.is(seven.headers.get('ratelimit-remaining'), '6');
  t.deepEqual(await seven.json(), {
    error: {
      code: 'rate_limited',
      message: `rate limit exceeded: a batch of 7 items needs 7 requests of the budget (10 requests per 60 seconds): 6 left of 10; retry in ${seven.headers.get('ratelimit-reset')} s`,
    },
  });
  // A body that is no batch costs one unit, like any request.
  const malformed = await post(server, '/v1/match/batch', '{"records": 3}', auth);
  t.is(malformed.status, 400);
  t.is(malformed.headers.get('ratelimit-remaining'), '5');
  const five = await post(server, '/v1/match/batch', records(5), auth);
  t.is(five.status, 200);
  t.is(five.headers.get('ratelimit-remaining'), '0');
  const single = await post(server, '/v1/match', { title: 'Mockingjay' }, auth);
  t.is(single.status, 429);
  // Larger than the whole budget: never admitted, and the message says to split it.
  const eleven = await post(server, '/v1/match/batch', records(11), auth);
  t.is(eleven.status, 429);
  t.regex(
    ((await eleven.json()) as { error: { message: string } }).error.message,
    /more than the whole budget of 10; send smaller batches/,
  );
});

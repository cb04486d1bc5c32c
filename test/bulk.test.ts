import test, { type ExecutionContext } from 'ava';
import { pointCached } from './helpers/cache.js';
import { newKey, startTestServer, useApi } from './helpers/env.js';
import { assertBadRequest } from './helpers/assertions.js';
import { liveBooks, loadSampleCatalogue, retitle } from './helpers/catalogue.js';
import { merge } from '../src/services/merge.js';
import { meteredCalls } from './helpers/usage.js';
import { parseIsbn } from '../src/domain/isbn.js';

// Bulk lookups: POST /v1/isbn/batch, /v1/books/batch, /v1/works/batch, /v1/authors/batch answer
// each key as its GET does, in input order, through the same cache entries; each key is one unit
// of the key's budget, all or none.

// Every key is a unit of the budget: this file's own key needs more than the default.
const api = useApi(test, { prepare: loadSampleCatalogue, server: { rateLimitMax: 100_000 } });

const post = (path: string, body: unknown, init: { server?: { url: string }; auth?: Record<string, string> } = {}): Promise<Response> =>
  fetch(`${(init.server ?? api.server).url}${path}`, {
    method: 'POST',
    headers: { ...(init.auth ?? api.auth), 'Content-Type': 'application/json' },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });

interface Item {
  status: number;
  merged_into?: string;
  error?: unknown;
  [field: string]: unknown;
}

const results = async (response: Response): Promise<Item[]> => ((await response.json()) as { results: Item[] }).results;

/** Live books with an ISBN that no other test of this file reads, `count` per call. */
let offset = 0;
async function freshBooks(count: number) {
  const rows = await liveBooks(api.world.db, count, { offset, withIsbn: true });
  offset += count;
  return rows;
}

/** Time for a cache write that must not happen to have happened: a refused batch's, which no event announces. */
const settle = () => new Promise((resolve) => setTimeout(resolve, 200));

/**
 * What a client that follows redirects gets from GET `path`: the status, the body as JSON, and the
 * id it was redirected to. The bulk item must say the same.
 */
async function single(path: string): Promise<{ status: number; body: unknown; mergedInto?: string }> {
  const first = await api.get(path);
  if (first.status !== 301) return { status: first.status, body: await first.json() };
  const { merged_into: mergedInto, location } = (await first.json()) as { merged_into: string; location: string };
  const survivor = await api.get(location);
  return { status: survivor.status, body: await survivor.json(), mergedInto };
}

/** Each item of a bulk answer is its key, then exactly what GET answers for that key (the record or the error object), in input order. */
async function assertEachAsItsGet(
  t: ExecutionContext,
  family: string,
  keyField: string,
  recordField: string,
  keys: string[],
): Promise<Item[]> {
  const response = await post(`/v1/${family}/batch`, { [keyField === 'isbn' ? 'isbns' : 'ids']: keys });
  t.is(response.status, 200);
  t.is(response.headers.get('content-type'), 'application/json; charset=utf-8');
  const items = await results(response);
  t.deepEqual(
    items.map((item) => item[keyField]),
    keys,
  );
  for (const [index, key] of keys.entries()) {
    const { status, body, mergedInto } = await single(`/v1/${family}/${encodeURIComponent(key)}`);
    const expected =
      status === 200
        ? { [keyField]: key, status, ...(mergedInto ? { merged_into: mergedInto } : {}), [recordField]: body }
        : { [keyField]: key, status, ...(body as object) };
    t.deepEqual(items[index], expected, key);
  }
  return items;
}

test.serial(
  'each ISBN is answered as GET /v1/isbn answers it, in input order: found in any spelling, absent, invalid, merged',
  async (t) => {
    const [from, into, hyphenated] = await freshBooks(3);
    const outcome = await merge(api.world.db, api.world.cache, 'book', from!.id, into!.id);
    t.true(outcome.merged);
    const isbn = hyphenated!.isbn_13;
    const keys = [
      '9780439023481',
      `${isbn.slice(0, 3)}-${isbn.slice(3, 4)}-${isbn.slice(4, 12)}-${isbn.slice(12)}`,
      '9780306406157',
      '12345',
      '9780439023482',
      from!.isbn_13,
      '  ',
      '978\u00000439023481',
      '038572179x',
    ];
    const items = await assertEachAsItsGet(t, 'isbn', 'isbn', 'book', keys);
    t.like(items[0], { status: 200, book: { isbn_13: '9780439023481', title: 'The Hunger Games' } });
    t.like(items[1], { status: 200, book: { id: hyphenated!.id } });
    t.deepEqual(items[2], { isbn: '9780306406157', status: 404, error: { code: 'not_found', message: 'no book with ISBN 9780306406157' } });
    t.deepEqual(items[3], {
      isbn: '12345',
      status: 400,
      error: { code: 'bad_request', message: 'invalid ISBN: "12345" is not a valid ISBN-10 or ISBN-13' },
    });
    t.like(items[5], { status: 200, merged_into: into!.id, book: { id: into!.id } });
  },
);

test.serial(
  'each id of books, works and authors is answered as its GET answers it: found, absent, malformed, of another kind, merged',
  async (t) => {
    const [a, b, c, d] = await freshBooks(4);
    t.true((await merge(api.world.db, api.world.cache, 'book', a!.id, b!.id)).merged);
    t.true((await merge(api.world.db, api.world.cache, 'work', c!.work_id, d!.work_id)).merged);
    const { rows: authors } = await api.world.db.query<{ id: string }>(
      `select public_id(a.id) as id from authors a where a.merged_into is null and exists (select 1 from book_authors ba where ba.author_id = a.id) order by a.id desc limit 3`,
    );
    t.true((await merge(api.world.db, api.world.cache, 'author', authors[0]!.id, authors[1]!.id)).merged);

    const books = await assertEachAsItsGet(t, 'books', 'id', 'book', [b!.id, a!.id, 'bk_0000000000zz', 'bk_1', c!.work_id, 'batch']);
    t.like(books[1], { status: 200, merged_into: b!.id, book: { id: b!.id } });
    t.deepEqual(books[2], { id: 'bk_0000000000zz', status: 404, error: { code: 'not_found', message: 'book bk_0000000000zz not found' } });
    const works = await assertEachAsItsGet(t, 'works', 'id', 'work', [c!.work_id, d!.work_id, 'wk_0000000000zz', a!.id]);
    t.like(works[0], { status: 200, merged_into: d!.work_id, work: { id: d!.work_id } });
    const people = await assertEachAsItsGet(t, 'authors', 'id', 'author', [authors[0]!.id, authors[2]!.id, 'au_0000000000zz', 'au_']);
    t.like(people[0], { status: 200, merged_into: authors[1]!.id, author: { id: authors[1]!.id } });
  },
);

test.serial('a bulk lookup and GET share their cache entries both ways, byte for byte', async (t) => {
  const [viaGet, viaBulk] = await freshBooks(2);
  // GET first: the bulk lookup answers from the entry GET stored (the row below changes without invalidation).
  const getText = await (await api.get(`/v1/isbn/${viaGet!.isbn_13}`)).text();
  t.true(await pointCached(api.world, `/v1/isbn/${viaGet!.isbn_13}`));
  // Bulk first: GET answers a HIT from the entry the bulk lookup stored.
  const bulkText = await (await post('/v1/isbn/batch', { isbns: [viaBulk!.isbn_13] })).text();
  t.true(await pointCached(api.world, `/v1/isbn/${viaBulk!.isbn_13}`));
  await api.world.db.query(`update books set title = 'Changed behind the cache' where id = any(entity_keys($1))`, [
    [viaGet!.id, viaBulk!.id],
  ]);
  t.teardown(() => retitle(api.world.db, [viaGet!.id, viaBulk!.id], (id) => (id === viaGet!.id ? viaGet!.title : viaBulk!.title)));

  t.true(
    (await (await post('/v1/isbn/batch', { isbns: [viaGet!.isbn_13] })).text()).includes(`"book":${getText}}`),
    'the bytes GET stored',
  );
  t.true(
    (await (await post('/v1/isbn/batch', { isbns: [`${viaGet!.isbn_13} `] })).text()).includes(`"book":${getText}}`),
    'another spelling of the ISBN is the same entry',
  );
  const hit = await api.get(`/v1/isbn/${viaBulk!.isbn_13}`);
  t.is(hit.headers.get('x-cache'), 'HIT');
  t.true(bulkText.includes(`"book":${await hit.text()}}`), 'the bytes the bulk lookup stored');
});

test.serial('a change drops the entries a bulk lookup filled, as it drops those GET filled', async (t) => {
  const [book] = await freshBooks(1);
  await post('/v1/books/batch', { ids: [book!.id] });
  await post('/v1/works/batch', { ids: [book!.work_id] });
  t.true(await pointCached(api.world, `/v1/books/${book!.id}`));
  t.true(await pointCached(api.world, `/v1/works/${book!.work_id}`));
  t.is((await api.get(`/v1/books/${book!.id}`)).headers.get('x-cache'), 'HIT');
  await retitle(api.world.db, [book!.id], () => 'Retitled for the bulk test');
  await api.world.cache.invalidate([book!.id]);
  const [item] = await results(await post('/v1/books/batch', { ids: [book!.id] }));
  t.like(item, { status: 200, book: { title: 'Retitled for the bulk test' } });
  t.is((await api.get(`/v1/works/${book!.work_id}`)).headers.get('x-cache'), 'MISS');
});

test.serial('the uncached ISBNs of a bulk lookup are read from PostgreSQL in one query', async (t) => {
  const books = await freshBooks(60);
  const { db } = api.server.services;
  const query = db.query.bind(db);
  const reads: unknown[] = [];
  db.query = ((config: unknown, ...rest: unknown[]) => {
    if (typeof config === 'object' && config !== null && (config as { name?: string }).name === 'books-by-isbn13')
      reads.push((config as { values: unknown[] }).values[0]);
    return (query as (...args: unknown[]) => unknown)(config, ...rest);
  }) as typeof db.query;
  t.teardown(() => {
    db.query = query;
  });
  // Another test of the file may have cached one of these (the sample's best-known ISBNs).
  const uncached = [];
  for (const book of books) if (!('hit' in (await api.world.cache.lookup(`/v1/isbn/${book.isbn_13}`)))) uncached.push(book.isbn_13);
  const items = await results(await post('/v1/isbn/batch', { isbns: books.map((book) => book.isbn_13) }));
  t.true(items.every((item) => item.status === 200));
  t.is(reads.length, 1);
  t.deepEqual([...(reads[0] as string[])].sort(), uncached.sort());
  t.true(uncached.length > 50);
});

test('a bulk lookup body that is not a list of 1 to 100 keys is a 400 naming the problem', async (t) => {
  const cases: [string, string, string][] = [
    ['/v1/isbn/batch', '["9780439023481"]', 'request body must be a JSON object {"isbns": [...]}'],
    ['/v1/isbn/batch', '{}', 'isbns is required: {"isbns": [...]}'],
    ['/v1/isbn/batch', '{"ids": ["9780439023481"]}', 'unknown field "ids": the body is {"isbns": [...]}'],
    ['/v1/isbn/batch', '{"isbns": "9780439023481"}', 'isbns must be an array'],
    ['/v1/isbn/batch', '{"isbns": []}', 'isbns must not be empty'],
    [
      '/v1/isbn/batch',
      JSON.stringify({ isbns: Array.from({ length: 101 }, (_, i) => `97803064061${String(i).padStart(2, '0')}`) }),
      'isbns has 101 items; at most 100 per request',
    ],
    ['/v1/isbn/batch', '{"isbns": ["9780439023481", 9780439023481]}', 'isbns[1] must be a string, got number'],
    ['/v1/isbn/batch', '{"isbns": [null]}', 'isbns[0] must be a string, got null'],
    ['/v1/isbn/batch', '{"isbns": [', 'malformed JSON body'],
    ['/v1/books/batch', '{"isbns": ["bk_0000000000zz"]}', 'unknown field "isbns": the body is {"ids": [...]}'],
    ['/v1/works/batch', '{"ids": [["wk_0000000000zz"]]}', 'ids[0] must be a string, got an array'],
    [
      '/v1/authors/batch',
      JSON.stringify({ ids: Array.from({ length: 101 }, (_, i) => `au_${String(i).padStart(12, '0')}`) }),
      'ids has 101 items; at most 100 per request',
    ],
  ];
  for (const [path, body, message] of cases) await assertBadRequest(t, await post(path, body), message, `${path} ${body.slice(0, 80)}`);
});

test.serial(
  "a shelf export's list is answered entry by entry, in place: an ISBN-10 beside its ISBN-13 and a repeated line each get the book, each distinct book draws one unit",
  async (t) => {
    const server = await startTestServer(api.world, { rateLimitMax: 10 });
    t.teardown(() => server.stop());
    const { auth } = await newKey(api.world, 'bulk shelf');
    const [one, two] = await freshBooks(2);
    const isbn10 = parseIsbn(one!.isbn_13)!.isbn10!;
    const hyphenated = `${isbn10.slice(0, 1)}-${isbn10.slice(1, 4)}-${isbn10.slice(4, 9)}-${isbn10.slice(9)}`;
    const shelf = [one!.isbn_13, isbn10, two!.isbn_13, one!.isbn_13, hyphenated, 'not-an-isbn', 'not-an-isbn'];
    const response = await post('/v1/isbn/batch', { isbns: shelf }, { server, auth });
    t.is(response.status, 200);
    // Three distinct keys: the first book (four spellings), the second, and the invalid line.
    t.is(response.headers.get('ratelimit-remaining'), '7');
    const items = await results(response);
    t.deepEqual(
      items.map((item) => [item.isbn, item.status, (item.book as { id?: string } | undefined)?.id]),
      [
        [one!.isbn_13, 200, one!.id],
        [isbn10, 200, one!.id],
        [two!.isbn_13, 200, two!.id],
        [one!.isbn_13, 200, one!.id],
        [hyphenated, 200, one!.id],
        ['not-an-isbn', 400, undefined],
        ['not-an-isbn', 400, undefined],
      ],
    );
    t.deepEqual(items[3], items[0], 'a repeated line is the same answer');

    const ids = await post('/v1/books/batch', { ids: [two!.id, one!.id, two!.id, 'bk_0000000000zz', 'bk_0000000000zz'] }, { server, auth });
    t.is(ids.headers.get('ratelimit-remaining'), '4');
    t.deepEqual(
      (await results(ids)).map((item) => [item.id, item.status]),
      [
        [two!.id, 200],
        [one!.id, 200],
        [two!.id, 200],
        ['bk_0000000000zz', 404],
        ['bk_0000000000zz', 404],
      ],
    );
  },
);

test('one hundred keys are admitted', async (t) => {
  const ids = Array.from({ length: 100 }, (_, i) => `bk_${String(i).padStart(12, '0')}`);
  const items = await results(await post('/v1/books/batch', { ids }));
  t.is(items.length, 100);
  t.true(items.every((item, index) => item.id === ids[index] && item.status === 404));
});

test.serial(
  'each key draws one unit of the budget, all or none: a batch the budget cannot cover is a 429 with Retry-After, reads nothing and spends nothing; usage counts a batch as one call',
  async (t) => {
    const server = await startTestServer(api.world, { rateLimitMax: 10 });
    t.teardown(() => server.stop());
    const { kid, auth } = await newKey(api.world, 'bulk budget');
    const books = await freshBooks(7);
    const isbns = (n: number) => ({ isbns: books.slice(0, n).map((book) => book.isbn_13) });

    const four = await post('/v1/isbn/batch', isbns(4), { server, auth });
    t.is(four.status, 200);
    t.is(four.headers.get('ratelimit-remaining'), '6');
    const seven = await post('/v1/isbn/batch', isbns(7), { server, auth });
    t.is(seven.status, 429);
    t.true(Number(seven.headers.get('retry-after')) >= 1);
    t.is(seven.headers.get('ratelimit-remaining'), '6');
    t.deepEqual(await seven.json(), {
      error: {
        code: 'rate_limited',
        message: `rate limit exceeded: a batch of 7 items needs 7 requests of the budget (10 requests per 60 seconds): 6 left of 10; retry in ${seven.headers.get('ratelimit-reset')} s`,
      },
    });
    await settle();
    // Nothing of the refused batch was done: the keys it alone held were neither read nor cached.
    t.is((await api.get(`/v1/isbn/${books[6]!.isbn_13}`)).headers.get('x-cache'), 'MISS');
    // A body that is no batch costs one unit, like any request.
    const malformed = await post('/v1/works/batch', '{"ids": []}', { server, auth });
    t.is(malformed.status, 400);
    t.is(malformed.headers.get('ratelimit-remaining'), '5');
    const five = await post('/v1/books/batch', { ids: books.slice(0, 5).map((book) => book.id) }, { server, auth });
    t.is(five.status, 200);
    t.is(five.headers.get('ratelimit-remaining'), '0');
    t.is((await fetch(`${server.url}/v1/isbn/${books[0]!.isbn_13}`, { headers: auth })).status, 429);
    const tooMany = await post(
      '/v1/authors/batch',
      { ids: Array.from({ length: 11 }, (_, i) => `au_${String(i).padStart(12, '0')}`) },
      { server, auth },
    );
    t.is(tooMany.status, 429);
    t.regex(
      ((await tooMany.json()) as { error: { message: string } }).error.message,
      /more than the whole budget of 10; send smaller batches/,
    );

    await server.services.meter?.flush();
    t.deepEqual(await meteredCalls(api.world.db, kid), [
      { method: 'POST', route: '/v1/isbn/batch', status: 200 },
      { method: 'POST', route: '/v1/isbn/batch', status: 429 },
      { method: 'POST', route: '/v1/works/batch', status: 400 },
      { method: 'POST', route: '/v1/books/batch', status: 200 },
      { method: 'GET', route: '/v1/isbn/:isbn', status: 429 },
      { method: 'POST', route: '/v1/authors/batch', status: 429 },
    ]);
  },
);

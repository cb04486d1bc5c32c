import test from 'ava';
import { matchRoute } from '../src/http/routeTable.js';
import { connectRedis } from '../src/stores/redis/client.js';
import { cacheKey, pointCached } from './helpers/cache.js';
import { eventually } from './helpers/eventually.js';
import { useApi } from './helpers/env.js';
import { GOODBOOKS_HEADER, csvFile, importFile, liveBooks, loadSampleCatalogue } from './helpers/catalogue.js';

const api = useApi(test, { productionWait: true, prepare: loadSampleCatalogue });
const get = (path: string) => api.get(path);
const json = async <T = Record<string, unknown>>(path: string): Promise<T> => (await (await get(path)).json()) as T;

test('an ISBN answers in any of its spellings: ISBN-13, ISBN-10, hyphens, spaces, lower-case x', async (t) => {
  const ids = await Promise.all(
    ['9780439023481', '0439023483', '978-0-439-02348-1', '0 439 02348 3'].map(
      async (isbn) => (await json(`/v1/isbn/${encodeURIComponent(isbn)}`)).id,
    ),
  );
  t.is(new Set(ids).size, 1);
  t.regex(String(ids[0]), /^bk_/);
  t.is((await get('/v1/isbn/038572179x')).status, 200);
});

test('an invalid ISBN is a 400 bad_request', async (t) => {
  const response = await get('/v1/isbn/9780439023482');
  t.is(response.status, 400);
  t.deepEqual(await response.json(), {
    error: { code: 'bad_request', message: 'invalid ISBN: "9780439023482" is not a valid ISBN-10 or ISBN-13' },
  });
});

test('an ISBN or id that cannot be one is refused before the cache is asked: Redis sees no command naming it', async (t) => {
  const monitor = await connectRedis(api.world.config.redisUrl);
  const seen: string[] = [];
  // The Redis server is shared: only the lines of this world's keys are kept.
  const prefix = api.world.config.redisPrefix;
  await monitor.monitor((line) => {
    if (String(line).includes(prefix)) seen.push(String(line));
  });
  try {
    for (const path of ['/v1/isbn/9780439023482', '/v1/books/bk_zz', '/v1/works/bk_5n1x7q0c2r9a', '/v1/authors/nobody-at-all'])
      t.is((await get(path)).status, 400, path);
    // A valid one no other test asks for shows the monitor sees the cache reads; the monitor's lines
    // come in order, so once its read is seen every command of the refused ones before it is too.
    const [valid] = await liveBooks(api.world.db, 1, { withIsbn: true, offset: 7 });
    t.is((await get(`/v1/isbn/${valid!.isbn_13}`)).status, 200);
    t.true(await eventually(() => Promise.resolve(seen.some((line) => line.includes(valid!.isbn_13)))), 'the monitor sees cache reads');
    // Whole names: a real id may begin with bk_zz.
    t.deepEqual(
      seen.filter((line) => /9780439023482|\/bk_zz"|nobody-at-all|works\/bk_/.test(line)),
      [],
    );
  } finally {
    // A client in monitor mode takes no QUIT: it is closed as it is.
    monitor.destroy();
  }
});

test('a valid ISBN with no book is a 404 naming the ISBN', async (t) => {
  const response = await get('/v1/isbn/9780306406157');
  t.is(response.status, 404);
  t.deepEqual(await response.json(), { error: { code: 'not_found', message: 'no book with ISBN 9780306406157' } });
});

test('a book record carries every field, unknown ones as null, in snake_case', async (t) => {
  const book = await json('/v1/isbn/9780439023481');
  t.like(book, {
    isbn_13: '9780439023481',
    isbn_10: '0439023483',
    title: 'The Hunger Games',
    series: 'The Hunger Games',
    series_number: '1',
    language: 'eng',
  });
  t.deepEqual(Object.keys(book).sort(), [
    'authors',
    'average_rating',
    'cover_url',
    'description',
    'id',
    'identifiers',
    'isbn_10',
    'isbn_13',
    'kind',
    'language',
    'pages',
    'physical_format',
    'publisher',
    'rating',
    'ratings_count',
    'readers',
    'series',
    'series_number',
    'subjects',
    'subtitle',
    'title',
    'updated_at',
    'work_id',
    'year',
  ]);
  t.like(book, { physical_format: null, subjects: [], description: null, identifiers: {} });
  t.is(book.pages, null);
  t.deepEqual(
    (book.authors as { name: string }[]).map((author) => author.name),
    ['Suzanne Collins'],
  );
  t.regex(String(book.work_id), /^wk_/);
});

test('a work lists its authors, edition count and editions; an author lists their works', async (t) => {
  const book = await json<{ work_id: string; authors: { id: string }[] }>('/v1/isbn/9780439023481');
  const work = await json<{ id: string; edition_count: number; editions: { id: string }[]; authors: { name: string }[] }>(
    `/v1/works/${book.work_id}`,
  );
  t.is(work.id, book.work_id);
  t.true(work.edition_count >= 1);
  t.true(work.editions.length >= 1);
  t.deepEqual(
    work.authors.map((author) => author.name),
    ['Suzanne Collins'],
  );
  const author = await json<{ name: string; works: { id: string }[]; work_count: number; alternate_names: string[] }>(
    `/v1/authors/${book.authors[0]!.id}`,
  );
  t.is(author.name, 'Suzanne Collins');
  t.true(author.works.some((w) => w.id === book.work_id));
  t.true(author.work_count >= 1);
  t.true(Array.isArray(author.alternate_names));
});

test('ids that name nothing are a 404 naming the id', async (t) => {
  for (const [family, id, kind] of [
    ['books', 'bk_0000000000zz', 'book'],
    ['works', 'wk_0000000000zz', 'work'],
    ['authors', 'au_0000000000zz', 'author'],
  ] as const) {
    const response = await get(`/v1/${family}/${id}`);
    t.is(response.status, 404);
    t.deepEqual(await response.json(), { error: { code: 'not_found', message: `${kind} ${id} not found` } });
  }
});

test('a point lookup is a MISS first, then a HIT with the same bytes', async (t) => {
  const first = await get('/v1/isbn/0-385-72179-X');
  t.is(first.headers.get('x-cache'), 'MISS');
  const firstBody = await first.text();
  t.true(await pointCached(api.world, '/v1/isbn/0-385-72179-X'));
  const second = await get('/v1/isbn/0-385-72179-X');
  t.is(second.headers.get('x-cache'), 'HIT');
  t.is(await second.text(), firstBody);
  t.is(second.headers.get('content-type'), 'application/json; charset=utf-8');
});

test('a point lookup of each kind is kept for the 24 hours the contract gives the point cache', async (t) => {
  const book = await json<{ id: string; work_id: string; authors: { id: string }[] }>('/v1/isbn/9780439023481');
  for (const path of [
    '/v1/isbn/9780439023481',
    `/v1/books/${book.id}`,
    `/v1/works/${book.work_id}`,
    `/v1/authors/${book.authors[0]!.id}`,
  ]) {
    t.is((await get(path)).status, 200, path);
    t.true(await pointCached(api.world, path), path);
    const ttl = await api.world.redis.ttl(cacheKey(api.world, path));
    t.true(ttl > 24 * 60 * 60 - 60 && ttl <= 24 * 60 * 60, `${path}: TTL ${ttl} s`);
  }
});

test('exactly the requests the table routes to a point lookup go through the point cache', (t) => {
  const asks = (method: string, path: string) => matchRoute(method, path)?.route.cache === 'point';
  for (const path of [
    '/v1/isbn/9780439023481',
    '/v1/books/bk_x',
    '/v1/works/wk_x',
    '/v1/authors/au_x',
    '/v1/books/searchx',
    '/v1/isbn/batch',
  ])
    t.true(asks('GET', path), path);
  for (const path of [
    '/v1/books/search',
    '/v1/authors/search',
    '/v1/books/bk_x/recommendations',
    '/V1/isbn/1',
    '/v1/isbn/1/',
    '/v1/changes',
  ])
    t.false(asks('GET', path), path);
  t.false(asks('POST', '/v1/isbn/9780439023481'));
});

test('the cache key is the canonical URL: every spelling of an ISBN shares the entry of its ISBN-13', async (t) => {
  t.is((await get('/v1/isbn/0671027387')).status, 200);
  t.true(await pointCached(api.world, '/v1/isbn/0671027387'));
  for (const spelling of ['0671027387', '0-671-02738-7', '9780671027384', '978-0-671-02738-4'])
    t.is((await get(`/v1/isbn/${spelling}`)).headers.get('x-cache'), 'HIT', spelling);
});

test('errors of cached routes say MISS and are not cached', async (t) => {
  for (let i = 0; i < 2; i++) {
    const response = await get('/v1/isbn/9780306406157');
    t.is(response.status, 404);
    t.is(response.headers.get('x-cache'), 'MISS');
  }
});

test('a re-import that changes a book drops its cached answers at once, in every spelling', async (t) => {
  const spellings = ['/v1/isbn/9780439554930', '/v1/isbn/0439554934'];
  const book = await json<{ id: string; work_id: string; average_rating: number }>(spellings[0]!);
  const urls = [...spellings, `/v1/books/${book.id}`, `/v1/works/${book.work_id}`];
  for (const url of urls) {
    await get(url);
    t.true(await pointCached(api.world, url), url);
  }
  for (const url of urls) t.is((await get(url)).headers.get('x-cache'), 'HIT', url);

  const path = await csvFile([
    GOODBOOKS_HEADER,
    '2,3,3,4640799,491,439554934,9.78043955493e+12,"J.K. Rowling, Mary GrandPré",1997.0,Harry Potter and the Philosopher\'s Stone,"Harry Potter and the Sorcerer\'s Stone (Harry Potter, #1)",eng,4.99,4602479,4800065,75867,75504,101676,455024,1156318,3011543,,',
  ]);
  const report = await importFile(api.world, 'goodbooks', path);
  t.is(report.updated, 1);
  // Both spellings share the ISBN-13's entry: the first asked misses, and fills it again for the other.
  for (const url of urls.slice(1)) {
    const response = await get(url);
    t.is(response.headers.get('x-cache'), 'MISS', url);
  }
  t.true(await pointCached(api.world, spellings[0]!));
  const again = await get(spellings[0]!);
  t.is(again.headers.get('x-cache'), 'HIT');
  t.is(((await again.json()) as { average_rating: number }).average_rating, 4.99);
});

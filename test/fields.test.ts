import test from 'ava';
import { liveBooks } from './helpers/catalogue.js';
import { assertBadRequest } from './helpers/assertions.js';
import { newKey, startTestServer } from './helpers/env.js';
import { openSearchWorld, type SearchWorld } from './helpers/search.js';
import { pointCached } from './helpers/cache.js';

// fields=: lookups, bulk lookups and search answer only the top-level fields asked for, id always;
// an unknown field is a 400 naming it.

let search: SearchWorld;

test.before(async () => {
  search = await openSearchWorld();
});
test.after.always(async () => {
  await search?.close();
});

const json = async (response: Response): Promise<Record<string, unknown>> => {
  if (response.status !== 200) throw new Error(`${response.status} ${await response.text()}`);
  return (await response.json()) as Record<string, unknown>;
};

test('a lookup with fields answers those fields of the record and its id, in the record order, from the same cache entry', async (t) => {
  const [book] = await liveBooks(search.world.db, 1, { withIsbn: true });
  const whole = await json(await search.get(`/v1/isbn/${book!.isbn_13}`));
  t.true(await pointCached(search.world, `/v1/isbn/${book!.isbn_13}`));
  const partial = await search.get(`/v1/isbn/${book!.isbn_13}?fields=year,title,authors`);
  t.is(partial.headers.get('x-cache'), 'HIT');
  t.deepEqual(await json(partial), { id: whole.id, title: whole.title, authors: whole.authors, year: whole.year });
  t.deepEqual(Object.keys(await json(await search.get(`/v1/isbn/${book!.isbn_13}?fields=year,title`))), ['id', 'title', 'year']);
  // A partial answer is revalidated by its own tag.
  const again = await search.get(`/v1/isbn/${book!.isbn_13}?fields=year,title,authors`);
  t.not(again.headers.get('etag'), (await search.get(`/v1/isbn/${book!.isbn_13}`)).headers.get('etag'));

  const work = await json(await search.get(`/v1/works/${book!.work_id}?fields=title,edition_count`));
  t.deepEqual(Object.keys(work), ['id', 'title', 'edition_count']);
  const author = (whole.authors as { id: string }[])[0]!;
  t.deepEqual(await json(await search.get(`/v1/authors/${author.id}?fields=name`)), {
    id: author.id,
    name: (whole.authors as { name: string }[])[0]!.name,
  });
});

test('search and bulk lookups cut each record to the fields asked for; items without a record stay as they are', async (t) => {
  const page = await json(await search.get('/v1/books/search?q=hunger+games&limit=3&fields=title,cover_url'));
  const results = page.results as { score: number; book: Record<string, unknown> }[];
  t.true(results.length > 0);
  for (const hit of results) {
    t.is(typeof hit.score, 'number');
    t.deepEqual(Object.keys(hit.book), ['id', 'title', 'cover_url']);
  }
  t.is(page.limit, 3);
  const authors = await json(await search.get('/v1/authors/search?q=collins&fields=name'));
  for (const hit of authors.results as { author: Record<string, unknown> }[]) t.deepEqual(Object.keys(hit.author), ['id', 'name']);

  const [book] = await liveBooks(search.world.db, 1, { withIsbn: true });
  const bulk = await json(
    await search.post('/v1/isbn/batch?fields=title,isbn_13', JSON.stringify({ isbns: [book!.isbn_13, '9780306406157', '12345'] })),
  );
  t.deepEqual(bulk.results, [
    { isbn: book!.isbn_13, status: 200, book: { id: book!.id, isbn_13: book!.isbn_13, title: book!.title } },
    { isbn: '9780306406157', status: 404, error: { code: 'not_found', message: 'no book with ISBN 9780306406157' } },
    { isbn: '12345', status: 400, error: { code: 'bad_request', message: 'invalid ISBN: "12345" is not a valid ISBN-10 or ISBN-13' } },
  ]);
});

test('an unknown field is a 400 naming it, and costs one unit like any request', async (t) => {
  const [book] = await liveBooks(search.world.db, 1, { withIsbn: true });
  const known = 'a book has id, work_id, kind, isbn_13';
  const cases: [string, string][] = [
    [`/v1/isbn/${book!.isbn_13}?fields=title,colour`, `unknown field "colour" in fields: ${known}`],
    [`/v1/books/${book!.id}?fields=Title`, `unknown field "Title" in fields: ${known}`],
    ['/v1/books/search?q=mort&fields=name', `unknown field "name" in fields: ${known}`],
    [`/v1/isbn/${book!.isbn_13}?fields=,`, 'fields names no field: give a comma-separated list such as fields=id,work_id'],
    [`/v1/isbn/${book!.isbn_13}?fields=id&fields=title`, 'query parameter fields is given more than once'],
  ];
  for (const [path, message] of cases) {
    const response = await search.get(path);
    t.is(response.status, 400, path);
    const { error } = (await response.json()) as { error: { code: string; message: string } };
    t.is(error.code, 'bad_request', path);
    t.true(error.message.startsWith(message), `${path}: ${error.message}`);
  }
  await assertBadRequest(
    t,
    await search.post('/v1/works/batch?fields=year', JSON.stringify({ ids: [book!.work_id] })),
    'unknown field "year" in fields: a work has id, kind, title, subtitle, original_year, cover_url, authors, readers, rating, edition_count, subjects, description, identifiers, editions, updated_at',
    'works batch',
  );

  const server = await startTestServer(search.world, { rateLimitMax: 5 });
  t.teardown(() => server.stop());
  const { auth } = await newKey(search.world, 'fields budget');
  const refused = await fetch(`${server.url}/v1/isbn/${book!.isbn_13}?fields=colour`, { headers: auth });
  t.is(refused.status, 400);
  t.is(refused.headers.get('ratelimit-remaining'), '4');
});

import test, { type ExecutionContext } from 'ava';
import { liveBooks } from './helpers/catalogue.js';
import { GENEROUS_STORE_WAIT, newKey, startTestServer } from './helpers/env.js';
import { openSearchWorld, type SearchWorld } from './helpers/search.js';
import { meteredCalls } from './helpers/usage.js';
import { pointCached } from './helpers/cache.js';

// Conditional GETs: every JSON GET answers with an ETag and the Cache-Control of its kind of
// answer; If-None-Match with the current tag is a 304 without a body, counted and metered.

let search: SearchWorld;
let auth: { Authorization: string };

test.before(async () => {
  // Its tests count each request against the budget and the metering, and read what PostgreSQL was
  // asked: a client that retried a 503 would count twice, so the wait is the generous one instead.
  search = await openSearchWorld(undefined, GENEROUS_STORE_WAIT);
  ({ auth } = await newKey(search.world, 'conditional'));
});
test.after.always(async () => {
  await search?.close();
});

const get = (path: string, headers: Record<string, string> = {}, url = search.server.url): Promise<Response> =>
  fetch(`${url}${path}`, { headers: { ...auth, ...headers }, redirect: 'manual' });

/** GET `path`, then again with its ETag (a 304 with no body), then with another tag (the 200 again); returns the first answer's headers. */
async function assertRevalidates(t: ExecutionContext, path: string, cacheControl: string, keyed = true): Promise<Headers> {
  const first = await get(path);
  t.is(first.status, 200, path);
  const body = await first.text();
  const etag = first.headers.get('etag');
  t.regex(etag ?? '', /^"[\w-]{27}"$/, path);
  t.is(first.headers.get('cache-control'), cacheControl, path);
  t.is(first.headers.get('vary')?.includes('Authorization') ?? false, keyed, path);

  const again = await get(path, { 'If-None-Match': etag! });
  t.is(again.status, 304, path);
  t.is(await again.text(), '', path);
  t.is(again.headers.get('etag'), etag, path);

  const other = await get(path, { 'If-None-Match': '"not-the-current-tag"' });
  t.is(other.status, 200, path);
  t.is(await other.text(), body, path);
  return first.headers;
}

test('each kind of JSON GET revalidates with its ETag, and its Cache-Control says how long it may be reused', async (t) => {
  const [book] = await liveBooks(search.world.db, 1, { withIsbn: true });
  const { rows } = await search.world.db.query<{ id: string }>(
    `select public_id(id) as id from authors where merged_into is null order by authors.id limit 1`,
  );
  const point = 'private, max-age=86400';
  await assertRevalidates(t, `/v1/isbn/${book!.isbn_13}`, point);
  await assertRevalidates(t, `/v1/books/${book!.id}`, point);
  await assertRevalidates(t, `/v1/works/${book!.work_id}`, point);
  await assertRevalidates(t, `/v1/authors/${rows[0]!.id}`, point);
  await assertRevalidates(t, '/v1/books/search?q=hunger+games', 'private, max-age=30');
  await assertRevalidates(t, '/v1/authors/search?q=collins', 'private, max-age=30');
  await assertRevalidates(t, `/v1/books/${book!.id}/recommendations`, 'private, max-age=30');
  // A full page of changes can never change; the head page changes with the next commit.
  const full = (await (await get('/v1/changes?since=0&limit=2')).json()) as { has_more: boolean };
  t.true(full.has_more);
  await assertRevalidates(t, '/v1/changes?since=0&limit=2', 'private, max-age=31536000, immutable');
  const { rows: last } = await search.world.db.query<{ seq: string }>('select max(seq)::text as seq from changes');
  await assertRevalidates(t, `/v1/changes?since=${Number(last[0]!.seq) - 1}`, 'no-store');
  await assertRevalidates(t, '/openapi.json', 'no-cache', false);
  // Health tells the state of the moment: never reused.
  const health = await get('/health');
  t.is(health.headers.get('cache-control'), 'no-store');
});

test('a point lookup has one ETag whether answered from the cache or read afresh, and a new one when the record changes', async (t) => {
  const [, book] = await liveBooks(search.world.db, 2, { withIsbn: true });
  const path = `/v1/books/${book!.id}`;
  const miss = await get(path);
  t.is(miss.headers.get('x-cache'), 'MISS');
  t.true(await pointCached(search.world, path));
  const hit = await get(path);
  t.is(hit.headers.get('x-cache'), 'HIT');
  t.is(hit.headers.get('etag'), miss.headers.get('etag'));

  await search.world.db.query(`update books set title = title || ' (revised)' where id = entity_key($1)`, [book!.id]);
  t.teardown(() => search.world.db.query(`update books set title = $2 where id = entity_key($1)`, [book!.id, book!.title]));
  await search.world.cache.invalidate([book!.id]);
  const changed = await get(path, { 'If-None-Match': miss.headers.get('etag')! });
  t.is(changed.status, 200);
  t.not(changed.headers.get('etag'), miss.headers.get('etag'));
});

test('a 304 from the point cache reads nothing from PostgreSQL, and is counted against the budget and metered like any call', async (t) => {
  const server = await startTestServer(search.world, { rateLimitMax: 5 });
  t.teardown(() => server.stop());
  const key = await newKey(search.world, 'conditional budget');
  const [, , book] = await liveBooks(search.world.db, 3, { withIsbn: true });
  const path = `/v1/isbn/${book!.isbn_13}`;
  const first = await fetch(`${server.url}${path}`, { headers: key.auth });
  const etag = first.headers.get('etag')!;
  t.true(await pointCached(search.world, path));

  const { db } = server.services;
  const query = db.query.bind(db);
  const reads: string[] = [];
  db.query = ((...args: unknown[]) => {
    const text = typeof args[0] === 'string' ? args[0] : String((args[0] as { text?: string }).text);
    // The key's row is re-read once a second in the background, whatever the request (authenticator.ts).
    if (!text.includes('api_keys')) reads.push(text);
    return (query as (...args: unknown[]) => unknown)(...args);
  }) as typeof db.query;
  t.teardown(() => {
    db.query = query;
  });
  const revalidated = await fetch(`${server.url}${path}`, { headers: { ...key.auth, 'If-None-Match': etag } });
  t.is(revalidated.status, 304);
  t.is(revalidated.headers.get('x-cache'), 'HIT');
  t.is(revalidated.headers.get('ratelimit-remaining'), '3');
  t.deepEqual(reads, []);

  await server.services.meter?.flush();
  t.deepEqual(await meteredCalls(search.world.db, key.kid), [
    { method: 'GET', route: '/v1/isbn/:isbn', status: 200 },
    { method: 'GET', route: '/v1/isbn/:isbn', status: 304 },
  ]);
});

import test from 'ava';
import { reindex } from '../loader/index/reindex.js';
import type { RunningServer } from '../src/server.js';
import { liveBooks, loadSampleCatalogue } from './helpers/catalogue.js';
import { createWorld, newKey, startTestServer, type TestWorld } from './helpers/env.js';
import { loaderDeps, type TestLoaderDeps } from './helpers/indexing.js';

// A catalogue in PostgreSQL whose indices are not built yet (a first load before its reindex, or an
// alias removed by hand): what needs them is a 503 in the contract's shape, never a 500, and it
// answers again once they are built, without a restart.

let world: TestWorld;
let deps: TestLoaderDeps;
let server: RunningServer;
let auth: { Authorization: string };

test.before(async () => {
  world = await createWorld();
  deps = loaderDeps(world);
  await loadSampleCatalogue(world);
  server = await startTestServer(world, { rateLimitMax: 1_000_000 });
  ({ auth } = await newKey(world));
});
test.after.always(async () => {
  await server?.stop();
  await deps?.close();
  await world?.destroy();
});

const call = (path: string, body?: unknown) =>
  fetch(
    `${server.url}${path}`,
    body === undefined
      ? { headers: auth }
      : { method: 'POST', headers: { ...auth, 'Content-Type': 'application/json' }, body: JSON.stringify(body) },
  );

test.serial(
  'search, match and recommendations answer 503 unavailable naming the missing index while it is not built, and 200 once it is',
  async (t) => {
    const [book] = await liveBooks(world.db, 1, { withIsbn: true });
    const needIndex: [string, unknown?][] = [
      ['/v1/books/search?q=hunger'],
      ['/v1/authors/search?q=collins'],
      ['/v1/match', { title: 'The Hunger Games', author: 'Suzanne Collins' }],
      [`/v1/books/${book!.id}/recommendations`],
    ];
    for (const [path, body] of needIndex) {
      const answer = await call(path, body);
      t.is(answer.status, 503, path);
      t.true(Number(answer.headers.get('Retry-After')) >= 1, path);
      const { error } = (await answer.json()) as { error: { code: string; message: string } };
      t.is(error.code, 'unavailable', path);
      t.regex(error.message, /^Elasticsearch is unavailable \(index test-\S+ is missing\); retry in \d+ s$/u, path);
    }
    const batch = await call('/v1/match/batch', { records: [{ title: 'Catching Fire' }, { isbn: book!.isbn_13 }] });
    t.is(batch.status, 503, 'a batch of matches');
    t.is((await call(`/v1/isbn/${book!.isbn_13}`)).status, 200, 'a lookup needs no index');

    await reindex(deps, 'all', { progress: false });
    for (const [path, body] of needIndex) t.is((await call(path, body)).status, 200, `${path} once the index is built`);
  },
);

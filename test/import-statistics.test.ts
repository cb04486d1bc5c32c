import test from 'ava';
import { bookCrossing } from '../loader/import/bookCrossing.js';
import { goodbooks } from '../loader/import/goodbooks.js';
import { importCatalogue } from '../loader/import/importer.js';
import { importRatings } from '../loader/import/ratings.js';
import { reindex } from '../loader/index/reindex.js';
import { createLogger } from '../src/log.js';
import { projectPath } from '../src/paths.js';
import type { RunningServer } from '../src/server.js';
import { csvFile } from './helpers/catalogue.js';
import { createWorld, newKey, PRODUCTION_STORE_WAIT, startTestServer, type TestWorld } from './helpers/env.js';
import { loaderDeps, type TestLoaderDeps } from './helpers/indexing.js';

/**
 * Right after an import into a fresh database where autovacuum does not run, the API's reads must
 * find planner statistics: without them, hydrating one page of author search (each author's work
 * count) took 750 ms over goodbooks-10k and Book-Crossing, past the default wait of 500 ms, and
 * answered 503. The whole data files of the repository, since a small sample plans well either way.
 */

let world: TestWorld;
let deps: TestLoaderDeps;
let server: RunningServer;
const quiet = createLogger('silent');

/** When each table was last analysed, by hand or by an importer (autovacuum is off for all of them). */
async function lastAnalyzed(): Promise<Map<string, Date | null>> {
  const { rows } = await world.db.query<{ relname: string; last_analyze: Date | null }>(
    'select relname, last_analyze from pg_stat_user_tables',
  );
  return new Map(rows.map((row) => [row.relname, row.last_analyze]));
}

test.before(async () => {
  // The default wait of a deployment, not the test worlds' generous one: a slow plan must show.
  world = await createWorld(PRODUCTION_STORE_WAIT);
  deps = loaderDeps(world);
  const { rows } = await world.db.query<{ tablename: string }>("select tablename from pg_tables where schemaname = 'public'");
  for (const { tablename } of rows) await world.db.query(`alter table "${tablename}" set (autovacuum_enabled = false)`);
});

test.after.always(async () => {
  await server?.stop();
  await deps?.close();
  await world?.destroy();
});

test.serial('goodbooks and Book-Crossing imports leave every table they grew with planner statistics', async (t) => {
  await importCatalogue(goodbooks, projectPath('data', 'goodbooks-10k', 'books.csv'), { db: world.db, cache: world.cache, log: quiet });
  await importCatalogue(bookCrossing, projectPath('data', 'book-crossing', 'BX-Books.csv'), {
    db: world.db,
    cache: world.cache,
    log: quiet,
  });
  const analyzed = await lastAnalyzed();
  for (const table of ['books', 'works', 'authors', 'author_names', 'book_authors', 'changes'])
    t.not(analyzed.get(table), null, `${table} has no statistics`);
});

test.serial('author search answers within the default wait right after the import, without anyone running ANALYZE', async (t) => {
  await reindex(deps, 'authors', { progress: false });
  const queries = ['the', 'a', 'hunger', 'king'];
  // The new index's first searches are slow on a loaded machine, and the index is not what this test is about.
  for (const q of queries) await deps.es.search({ index: deps.aliases.authors, q });
  server = await startTestServer(world);
  t.is(server.services.config.storeWaitMs, 500);
  const { auth } = await newKey(world);
  for (const q of queries) {
    let response: Response;
    let body: { results?: unknown[]; error?: { message: string } };
    let tries = 0;
    // Only a slow index is tried again: a 503 naming PostgreSQL is what this test must catch.
    do {
      response = await fetch(`${server.url}/v1/authors/search?q=${q}&limit=20`, { headers: auth });
      body = (await response.json()) as typeof body;
    } while (response.status === 503 && body.error?.message.startsWith('Elasticsearch') && ++tries < 3);
    t.is(response.status, 200, `q=${q}: ${JSON.stringify(body)}`);
    t.true((body.results?.length ?? 0) > 0, `q=${q} finds authors`);
  }
});

test.serial('a ratings import leaves the also-liked lists and the changes it recorded with fresh statistics', async (t) => {
  const { rows } = await world.db.query<{ isbn_10: string }>(
    'select isbn_10 from books where isbn_10 is not null and merged_into is null order by id limit 2',
  );
  const lines = ['User-ID,ISBN,Book-Rating', ...[1, 2, 3].flatMap((user) => rows.map((row) => `${user},${row.isbn_10},9`))];
  const before = await lastAnalyzed();
  await importRatings(await csvFile(lines), { db: world.db, log: quiet });
  const after = await lastAnalyzed();
  for (const table of ['ratings', 'book_also_liked', 'changes']) {
    const at = after.get(table);
    t.truthy(at, `${table} has no statistics`);
    t.true(before.get(table) == null || at! > before.get(table)!, `${table} was not analysed again`);
  }
});

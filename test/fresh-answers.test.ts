import test from 'ava';
import type { BookRecord } from '../src/domain/records.js';
import type { MatchResult } from '../src/services/match.js';
import { shortCached } from './helpers/cache.js';
import { GOODBOOKS_HEADER, csvFile } from './helpers/catalogue.js';
import { runCli } from './helpers/processes.js';
import { matchRecord, openSearchWorld, type SearchWorld } from './helpers/search.js';
import type { BookSearchPage } from '../src/services/search.js';

// Search, match and recommendations are kept in the short cache, but a write through the loader
// drops them: once `bookmeta import` has committed, answers that read the changed records are read
// again, and once `bookmeta sync` has made the change searchable, so are answers the index gives.

let search: SearchWorld;

test.before(async () => {
  search = await openSearchWorld();
});
test.after.always(async () => {
  await search?.close();
});

const books = async (q: string): Promise<BookSearchPage> => {
  const response = await search.get(`/v1/books/search?q=${encodeURIComponent(q)}`);
  if (response.status !== 200) throw new Error(`${q}: ${response.status} ${await response.text()}`);
  return (await response.json()) as BookSearchPage;
};

const recommended = async (id: string): Promise<BookRecord[]> => {
  const response = await search.get(`/v1/books/${id}/recommendations`);
  if (response.status !== 200) throw new Error(`${id}: ${response.status} ${await response.text()}`);
  return ((await response.json()) as { results: { book: BookRecord }[] }).results.map((result) => result.book);
};

async function bookmeta(...args: string[]): Promise<void> {
  const run = await runCli(search.world.env, args);
  if (run.code !== 0) throw new Error(`bookmeta ${args.join(' ')}: exit ${run.code}\n${run.stderr}`);
}

/** A goodbooks row for an edition: its ISBN-10, title and authors. */
const goodbooksRow = (isbn10: string, title: string, authors: string[]): string =>
  `90001,90001,90001,90001,1,${isbn10},,"${authors.join(', ')}",2030.0,${title},${title},eng,4.0,10,10,1,1,1,1,1,6,,`;

test.serial('a book imported and synced is found by the search and match answers cached before it, at once', async (t) => {
  const title = 'The Zephyrquill Lantern';
  const record = { title, author: 'Suzanne Collins' };
  t.is((await books('zephyrquill')).total, 0);
  t.not((await matchRecord(search, record)).match?.title, title);
  t.true(await shortCached(search.world, 'search:books:*zephyrquill*'));
  t.true(await shortCached(search.world, 'match:*Zephyrquill*'));

  await bookmeta('import', 'goodbooks', await csvFile([GOODBOOKS_HEADER, goodbooksRow('0306406152', title, ['Suzanne Collins'])]));
  // Committed, not yet indexed: the index does not know the book, and these answers are kept again.
  t.is((await books('zephyrquill')).total, 0);
  t.not((await matchRecord(search, record)).match?.title, title);
  t.true(await shortCached(search.world, 'search:books:*zephyrquill*'));
  t.true(await shortCached(search.world, 'match:*Zephyrquill*'));

  await bookmeta('sync');
  const found = await books('zephyrquill');
  t.deepEqual(
    found.results.map((result) => result.book.title),
    [title],
  );
  const matched: MatchResult = await matchRecord(search, record);
  t.is(matched.match?.title, title);
  t.is(matched.match?.isbn_13, '9780306406157');
});

test.serial('a book retitled by an import reads with its new title in the recommendations cached before it, at once', async (t) => {
  const { rows } = await search.world.db.query<{ id: string }>(
    `select public_id(b.id) as id from books b where b.merged_into is null and b.isbn_10 is not null order by b.id limit 40`,
  );
  // A book whose first recommendation has an ISBN-10, so that a goodbooks row can name it.
  let source: string | undefined;
  let shown: BookRecord | undefined;
  for (const { id } of rows) {
    const first = (await recommended(id))[0];
    if (first?.isbn_10) {
      [source, shown] = [id, first];
      break;
    }
  }
  t.truthy(shown, 'a recommendation with an ISBN-10');
  t.true(await shortCached(search.world, `recommend:${source!}:*`));
  // Behind the cache's back (no writer's word), the cached answer is still served: it is the cache that answers.
  await search.world.db.query(`update books set title = 'Changed behind the cache' where id = entity_key($1)`, [shown!.id]);
  t.is((await recommended(source!))[0]?.title, shown!.title);

  const retitled = `${shown!.title} Zephyr`;
  await bookmeta(
    'import',
    'goodbooks',
    await csvFile([
      GOODBOOKS_HEADER,
      goodbooksRow(
        shown!.isbn_10!,
        retitled,
        shown!.authors.map((author) => author.name),
      ),
    ]),
  );
  const after = (await recommended(source!)).find((book) => book.id === shown!.id);
  t.is(after?.title, retitled);
  t.deepEqual(after, (await (await search.get(`/v1/books/${shown!.id}`)).json()) as BookRecord);
});

test.serial(
  'a book imported and indexed by a reindex is found by the search answer cached before it, once the alias has moved',
  async (t) => {
    const title = 'The Quillfeather Almanac';
    t.is((await books('quillfeather')).total, 0);
    await bookmeta('import', 'goodbooks', await csvFile([GOODBOOKS_HEADER, goodbooksRow('0131103628', title, ['Suzanne Collins'])]));
    t.is((await books('quillfeather')).total, 0);
    t.true(await shortCached(search.world, 'search:books:*quillfeather*'));

    // No sync: the reindex's catch-up brings the book into its new index.
    await bookmeta('reindex', 'books', '--no-progress');
    t.deepEqual(
      (await books('quillfeather')).results.map((result) => result.book.title),
      [title],
    );
  },
);

import test from 'ava';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { goodbooks } from '../loader/import/goodbooks.js';
import { importOpenLibrary } from '../loader/import/openlibrary/import.js';
import { importRatings } from '../loader/import/ratings.js';
import { reindex } from '../loader/index/reindex.js';
import type { BookRecord, WorkRecord } from '../src/domain/records.js';
import { createLogger } from '../src/log.js';
import { projectPath } from '../src/paths.js';
import type { SubjectPage, TrendingPage } from '../src/services/readers.js';
import { csvFile, GOODBOOKS_300, GOODBOOKS_HEADER, importFile } from './helpers/catalogue.js';
import { useApi, type TestWorld } from './helpers/env.js';
import { loaderDeps, type TestLoaderDeps } from './helpers/indexing.js';
import { callTool, connect } from './helpers/mcp.js';

/**
 * What readers read (issue 29, item 5), against the real stores with the shipped Open Library
 * samples: the readers and ratings of works and their books, a subject's works by readers, and the
 * works trending in the reading log.
 */

const log = createLogger('silent');
const sample = (name: string) => projectPath('data', 'openlibrary', `ol_dump_${name}_sample.txt`);
const load = (world: TestWorld, paths: string[]) =>
  importOpenLibrary(paths, { db: world.db, cache: world.cache, log }, { progress: false });
// Book-Crossing rates The Hunger Games (ISBN-10 0439023483) 8 and 10; a 0 says a reader had it.
const BX_RATINGS = ['User-ID,ISBN,Book-Rating', '1,0439023483,8', '2,0439023483,10', '3,0439023483,0'];
// goodbooks-10k's first row, The Hunger Games: its ratings_1 to ratings_5 (work_ratings_count 4,942,365).
const HUNGER_GAMES_GOODREADS = { '1': 66_715, '2': 127_936, '3': 560_092, '4': 1_481_305, '5': 2_706_317 };
const HUNGER_GAMES_ISBN = '9780439023481';

let deps: TestLoaderDeps;
let scratch: string;
const api = useApi(test, {
  // Answers as the catalogue is now: the summaries kept of these pages are test/summaries.test.ts's subject.
  server: { rateLimitMax: 1_000_000, shortCacheTtlS: 0, summaryRefreshS: 0 },
  prepare: async (world) => {
    scratch = await mkdtemp(join(tmpdir(), 'bookmeta-readers-'));
    await importFile(world, 'goodbooks', GOODBOOKS_300);
    await load(world, [sample('authors'), sample('works'), sample('editions')]);
    await load(world, [sample('reading-log'), sample('ratings')]);
    await importRatings(await csvFile(BX_RATINGS), { db: world.db, log, cache: world.cache });
    deps = loaderDeps(world);
    await reindex(deps, 'all', { progress: false });
  },
});
test.after.always(async () => {
  await deps?.close();
  if (scratch) await rm(scratch, { recursive: true, force: true });
});

async function json<T>(path: string): Promise<T> {
  const response = await api.get(path);
  if (response.status !== 200) throw new Error(`${path}: ${response.status} ${await response.text()}`);
  return (await response.json()) as T;
}

/** The id of the work an Open Library work key was imported as. */
async function workOf(key: string): Promise<string> {
  const response = await api.get(`/v1/openlibrary/${key}`);
  return ((await response.json()) as { id: string }).id;
}

test.serial(
  "a work carries its Open Library readers and every source's ratings, Book-Crossing's apart, and so does each of its books",
  async (t) => {
    const work = await json<WorkRecord>(`/v1/works/${await workOf('OL5735363W')}`);
    // The reading log's sample: 5 want to read, 1 reading, 4 read (the unknown shelf is rejected).
    t.deepEqual(work.readers, { want_to_read: 5, currently_reading: 1, already_read: 4 });
    // Its ratings: 5, 4, 5, 3, 5, 4 (the 0 is rejected): sum 26.
    const openlibrary = { average: 4.33, count: 6, stars: { '1': 0, '2': 0, '3': 1, '4': 2, '5': 3 } };
    // goodbooks: The Hunger Games' Goodreads work, its ratings_1 to ratings_5 (summing 21,459,668 stars).
    const goodreads = { average: 4.34, count: 4_942_365, stars: HUNGER_GAMES_GOODREADS };
    t.deepEqual(work.rating, {
      average: Math.round(((26 + 21_459_668) / (6 + 4_942_365)) * 100) / 100,
      count: 4_942_371,
      stars: { '1': 66_715, '2': 127_936, '3': 560_093, '4': 1_481_307, '5': 2_706_320 },
      sources: { openlibrary, goodreads, book_crossing: { average: 9, count: 2, stars: null } },
    });
    const book = await json<BookRecord>(`/v1/books/${work.editions[0]!.id}`);
    t.deepEqual([book.readers, book.rating], [work.readers, work.rating]);
    // Every edition of a work of three shows the work's readers and ratings.
    const innovators = await json<WorkRecord>(`/v1/works/${await workOf('OL2010879W')}`);
    t.like(innovators, { edition_count: 3, readers: { want_to_read: 2, already_read: 2 }, rating: { average: 4.5, count: 2 } });
    for (const edition of innovators.editions) {
      const book = await json<BookRecord>(`/v1/books/${edition.id}`);
      t.deepEqual([book.readers, book.rating], [innovators.readers, innovators.rating], edition.id);
    }
  },
);

test.serial(
  "a Goodreads work's stars from goodbooks-10k read the same on the work, on its book and over MCP, and add to Open Library's in the work's stars",
  async (t) => {
    const book = await json<BookRecord>(`/v1/isbn/${HUNGER_GAMES_ISBN}`);
    const work = await json<WorkRecord>(`/v1/works/${book.work_id}`);
    t.deepEqual(work.rating.sources.goodreads, { average: 4.34, count: 4_942_365, stars: HUNGER_GAMES_GOODREADS });
    // The edition's own Goodreads ratings stay its ratings_count; its average is the Goodreads work's.
    t.like(book, { ratings_count: 4_780_653, average_rating: 4.34 });
    const openlibrary = work.rating.sources.openlibrary.stars!;
    t.deepEqual(
      work.rating.stars,
      Object.fromEntries(Object.entries(HUNGER_GAMES_GOODREADS).map(([star, count]) => [star, count + openlibrary[star as '1']])),
    );
    t.is(
      Object.values(work.rating.stars).reduce((sum, count) => sum + count, 0),
      work.rating.count,
    );
    const { client } = await connect(api.server.url, api.auth);
    try {
      const tool = async (name: string, id: string) => JSON.parse((await callTool(client, name, { id })).content[0]!.text) as unknown;
      t.deepEqual(await tool('get_work', work.id), work);
      t.deepEqual(await tool('get_book', book.id), book);
    } finally {
      await client.close();
    }
  },
);

test.serial('a work no reader shelved or rated has zero readers and no average', async (t) => {
  const work = await json<WorkRecord>(`/v1/works/${await workOf('OL2010883W')}`);
  t.deepEqual(work.readers, { want_to_read: 0, currently_reading: 0, already_read: 0 });
  t.like(work.rating, { average: null, count: 0, sources: { book_crossing: { average: null, count: 0 } } });
});

test.serial(
  "a subject lists its works by readers with its work count, most read authors and the subjects found with it, whatever the subject's spelling",
  async (t) => {
    const [poetry, introduction, sipahi] = [
      await json<SubjectPage>('/v1/subjects/Poetry'),
      await workOf('OL2010880W'),
      await workOf('OL2010883W'),
    ];
    // An introduction to poetry has readers (its own and those of the work redirected to it), Sipahi none.
    t.like(poetry, { key: 'poetry', name: 'Poetry', work_count: 2, total: 2, limit: 20, offset: 0 });
    t.deepEqual(
      poetry.results.map((work) => work.id),
      [introduction, sipahi],
    );
    t.like(poetry.results[0], { title: 'An introduction to poetry', readers: { currently_reading: 1, want_to_read: 1, already_read: 1 } });
    t.deepEqual(poetry.related_subjects.map((subject) => subject.name).sort(), ['Poetics', 'Urdu poetry -- Translations into English']);
    t.true(poetry.related_subjects.every((subject) => subject.work_count === 1));
    t.is(poetry.authors.length, 2);
    t.true(poetry.authors[0]!.readers >= poetry.authors[1]!.readers);
    // Another spelling of the subject is the same subject; a page of one is the second work.
    t.deepEqual(await json<SubjectPage>('/v1/subjects/POETRY.'), poetry);
    const second = await json<SubjectPage>('/v1/subjects/poetry?limit=1&offset=1&related=1');
    t.deepEqual([second.results.map((work) => work.id), second.related_subjects.length, second.authors.length], [[sipahi], 1, 1]);
  },
);

test.serial('a subject no book has answers no works, and a subject without a word or a bad page is a 400 naming it', async (t) => {
  t.like(await json<SubjectPage>('/v1/subjects/Underwater%20basket%20weaving'), {
    key: 'basket underwater weaving',
    name: null,
    work_count: 0,
    results: [],
    authors: [],
    related_subjects: [],
  });
  for (const [path, message] of [
    ['/v1/subjects/%20--%20', 'subject must have a letter or digit'],
    [`/v1/subjects/${'a'.repeat(201)}`, 'subject must be at most 200 characters'],
    ['/v1/subjects/Poetry?limit=0', 'limit must be an integer from 1 to 100'],
    ['/v1/subjects/Poetry?offset=990&limit=20', 'offset + limit must be at most 1000'],
    ['/v1/subjects/Poetry?fields=title,editions', 'unknown field "editions" in fields'],
  ] as const) {
    const response = await api.get(path);
    t.is(response.status, 400, path);
    const body = (await response.json()) as { error: { code: string; message: string } };
    t.is(body.error.code, 'bad_request');
    t.true(body.error.message.startsWith(message), body.error.message);
  }
});

test.serial(
  'a subject answers an ETag and a short Cache-Control, revalidates to 304, and cuts its works to the fields asked',
  async (t) => {
    const first = await api.get('/v1/subjects/Poetry');
    t.regex(first.headers.get('cache-control') ?? '', /max-age/);
    const again = await api.get('/v1/subjects/Poetry', { headers: { 'If-None-Match': first.headers.get('etag')! } });
    t.is(again.status, 304);
    const partial = await json<{ results: Record<string, unknown>[] }>('/v1/subjects/Poetry?fields=title,readers');
    t.deepEqual(
      partial.results.map((work) => Object.keys(work)),
      [
        ['id', 'title', 'readers'],
        ['id', 'title', 'readers'],
      ],
    );
  },
);

test.serial('trending counts the entries added in each period up to the newest day of the reading log', async (t) => {
  const [hungerGames, fairyTales] = [await workOf('OL5735363W'), await workOf('OL2010881W')];
  const ranking = (page: TrendingPage) => page.results.map((entry) => [entry.work.id, entry.added]);
  // The sample's newest entry is of 2024-02-29; a work the catalogue lacks is left out.
  const day = await json<TrendingPage>('/v1/trending?period=day');
  t.like(day, { period: 'day', from: '2024-02-29', to: '2024-02-29', total: 1 });
  t.deepEqual(ranking(day), [[fairyTales, 1]]);
  t.like(await json<TrendingPage>('/v1/trending'), { period: 'week', from: '2024-02-23', to: '2024-02-29' });
  // A year back from 2024-02-29: The Hunger Games' seven entries from 2023-03-12 on, not the two before.
  const year = await json<TrendingPage>('/v1/trending?period=year');
  t.like(year, { from: '2023-03-02', to: '2024-02-29', total: 2 });
  t.deepEqual(ranking(year), [
    [hungerGames, 7],
    [fairyTales, 1],
  ]);
  t.like(year.results[0]!.work, { title: 'The Hunger Games', readers: { want_to_read: 5 } });
  const response = await api.get('/v1/trending?period=decade');
  t.is(response.status, 400);
  t.is(((await response.json()) as { error: { message: string } }).error.message, 'period must be one of day, week, month, year');
});

test.serial("importing next month's reading log moves the trending window and replaces the readers' counts", async (t) => {
  const [introduction, hungerGames] = [await workOf('OL2010880W'), await workOf('OL5735363W')];
  const entries = [
    '/works/OL5735363W\t\\N\tWant to Read\t2024-01-20',
    '/works/OL2010880W\t\\N\tWant to Read\t2024-03-30',
    '/works/OL2010890W\t\\N\tAlready Read\t2024-03-31',
    '/works/OL2010880W\t/books/OL30004M\tCurrently Reading\t2024-03-31 10:00:00',
  ];
  const next = join(scratch, 'ol_dump_reading-log_2024-03-31.txt');
  await writeFile(next, `${entries.join('\n')}\n`);
  await load(api.world, [next]);
  const day = await json<TrendingPage>('/v1/trending?period=day');
  // The redirected work's entry counts for the work it leads to.
  t.like(day, { from: '2024-03-31', to: '2024-03-31', total: 1 });
  t.deepEqual(
    day.results.map((entry) => [entry.work.id, entry.added]),
    [[introduction, 2]],
  );
  const month = await json<TrendingPage>('/v1/trending?period=month');
  t.deepEqual(
    month.results.map((entry) => [entry.work.id, entry.added]),
    [[introduction, 3]],
  );
  t.like(await json<TrendingPage>('/v1/trending?period=year'), { total: 2 });
  // The dump is the whole reading log now: the work's readers are the new file's, and its cached record says so.
  const work = await json<WorkRecord>(`/v1/works/${hungerGames}`);
  t.deepEqual(work.readers, { want_to_read: 1, currently_reading: 0, already_read: 0 });
});

test.serial("importing ratings drops the cached records of the rated book's work and its books, which then show them", async (t) => {
  const work = await json<WorkRecord>(`/v1/works/${await workOf('OL5735363W')}`);
  const book = await json<BookRecord>(`/v1/books/${work.editions[0]!.id}`);
  t.like(book.rating.sources.book_crossing, { average: 9, count: 2 });
  await importRatings(await csvFile(['User-ID,ISBN,Book-Rating', '4,0439023483,6']), { db: api.world.db, log, cache: api.world.cache });
  const again = await json<WorkRecord>(`/v1/works/${work.id}`);
  t.like(again.rating.sources.book_crossing, { average: 8, count: 3 });
  t.deepEqual((await json<BookRecord>(`/v1/books/${book.id}`)).rating, again.rating);
});

/** The lines of the shipped goodbooks-10k books.csv, by book_id. */
async function shippedGoodbooks(...bookIds: number[]): Promise<string[]> {
  const lines = (await readFile(projectPath('data', 'goodbooks-10k', 'books.csv'), 'utf8')).split('\n');
  return bookIds.map((id) => lines.find((line) => line.startsWith(`${id},`))!);
}

const lastChange = async (): Promise<number> =>
  (await api.world.db.query<{ seq: number }>('select coalesce(max(seq), 0)::int as seq from changes')).rows[0]!.seq;

test.serial(
  'importing goodbooks again changes nothing; changed counts update the book, enter the change feed and drop the cached records',
  async (t) => {
    const book = await json<BookRecord>(`/v1/isbn/${HUNGER_GAMES_ISBN}`);
    const before = await lastChange();
    t.like(await importFile(api.world, 'goodbooks', GOODBOOKS_300), { inserted: 0, updated: 0, unchanged: 300 });
    t.is(await lastChange(), before);

    // Cached now: the work's record and its book's.
    for (const path of [`/v1/works/${book.work_id}`, `/v1/books/${book.id}`]) {
      await api.get(path);
      t.is((await api.get(path)).headers.get('x-cache'), 'HIT', path);
    }
    const fixture = (await readFile(GOODBOOKS_300, 'utf8')).trimEnd().split('\n');
    const counts = '4942365,155254,66715,127936,560092,1481305,2706317';
    t.true(fixture[1]!.includes(counts));
    // A month later: a hundred more five-star ratings.
    fixture[1] = fixture[1]!.replace(counts, '4942465,155254,66715,127936,560092,1481305,2706417');
    t.like(await importFile(api.world, 'goodbooks', await csvFile(fixture)), { inserted: 0, updated: 1, unchanged: 299 });
    const { rows } = await api.world.db.query(
      'select entity::text, public_id(entity_id) as entity_id, operation::text from changes where seq > $1',
      [before],
    );
    t.deepEqual(rows, [{ entity: 'book', entity_id: book.id, operation: 'update' }]);
    const goodreads = { average: 4.34, count: 4_942_465, stars: { ...HUNGER_GAMES_GOODREADS, '5': 2_706_417 } };
    for (const path of [`/v1/works/${book.work_id}`, `/v1/books/${book.id}`]) {
      const response = await api.get(path);
      t.is(response.headers.get('x-cache'), 'MISS', path);
      t.deepEqual(((await response.json()) as WorkRecord).rating.sources.goodreads, goodreads, path);
    }
    t.like(await importFile(api.world, 'goodbooks', GOODBOOKS_300), { updated: 1 });
    t.deepEqual((await json<WorkRecord>(`/v1/works/${book.work_id}`)).rating.sources.goodreads.stars, HUNGER_GAMES_GOODREADS);
  },
);

test.serial(
  "a work's Goodreads works add up, each counted once however many of its editions carry its counts (Coraline and its graphic novel)",
  async (t) => {
    // goodbooks-10k rows 282 (in the 300) and 7422: two Goodreads works, 2834844 and 21987573, one work here.
    const [, graphicNovel] = await shippedGoodbooks(282, 7422);
    await importFile(api.world, 'goodbooks', await csvFile([GOODBOOKS_HEADER, graphicNovel!]));
    const coraline = await json<BookRecord>('/v1/isbn/9780061139376');
    const work = await json<WorkRecord>(`/v1/works/${coraline.work_id}`);
    t.is(work.edition_count, 2);
    const both = {
      average: 4.03,
      count: 343_630 + 16_240,
      stars: { '1': 7_078 + 245, '2': 15_010 + 825, '3': 67_188 + 3_782, '4': 126_167 + 5_867, '5': 128_187 + 5_521 },
    };
    t.deepEqual(work.rating.sources.goodreads, both);
    // Another edition of the graphic novel's Goodreads work (no ISBN: its Goodreads book id names it).
    const copy = graphicNovel!.replace(
      '7422,1967070,1967070,21987573,24,006082543X,9.78006082543e+12,',
      '7422,1967071,1967071,21987573,24,,,',
    );
    t.not(copy, graphicNovel);
    t.like(await importFile(api.world, 'goodbooks', await csvFile([GOODBOOKS_HEADER, copy])), { inserted: 1 });
    const again = await json<WorkRecord>(`/v1/works/${work.id}`);
    t.is(again.edition_count, 3);
    t.deepEqual(again.rating.sources.goodreads, both);
  },
);

test.serial(
  "an edition whose stars goodbooks did not give counts its own ratings at its average, Goodreads' stars unknown, until a file gives them",
  async (t) => {
    // goodbooks-10k row 301, Heart of Darkness (not in the 300): its ratings_1 to ratings_5 left out.
    const [heart] = await shippedGoodbooks(301);
    const stars = '25591,42946,84433,88608,66813';
    const record = Object.fromEntries(GOODBOOKS_HEADER.split(',').map((column, at) => [column, heart!.split(',')[at]!]));
    // Counts that do not add up to the work's ratings are not kept either.
    const parsed = goodbooks.parse({ ...record, work_ratings_count: '308392' }, 2);
    t.true('edition' in parsed && parsed.edition.fields.goodreads_rated === null);

    await importFile(api.world, 'goodbooks', await csvFile([GOODBOOKS_HEADER, heart!.replace(stars, ',,,,')]));
    const book = await json<BookRecord>('/v1/isbn/9781892295491');
    const unknown = (await json<WorkRecord>(`/v1/works/${book.work_id}`)).rating;
    t.deepEqual(unknown.sources.goodreads, { average: 3.42, count: 255_576, stars: null });
    t.like(unknown, { average: 3.42, count: 255_576, stars: { '1': 0, '2': 0, '3': 0, '4': 0, '5': 0 } });

    await importFile(api.world, 'goodbooks', await csvFile([GOODBOOKS_HEADER, heart!]));
    const known = (await json<WorkRecord>(`/v1/works/${book.work_id}`)).rating;
    const counted = { '1': 25_591, '2': 42_946, '3': 84_433, '4': 88_608, '5': 66_813 };
    t.deepEqual(known.sources.goodreads, { average: 3.42, count: 308_391, stars: counted });
    t.like(known, { count: 308_391, stars: counted });
  },
);

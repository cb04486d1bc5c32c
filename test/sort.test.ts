import test from 'ava';
import { dampedRating } from '../src/domain/ratings.js';
import { openSearchWorld, type SearchWorld } from './helpers/search.js';
import { assertBadRequest } from './helpers/assertions.js';
import type { BookSearchPage } from '../src/services/search.js';

let search: SearchWorld;
// A Harry Potter edition rated five by one reader: it must not outrank the books read by millions.
let oneFiveStar: string;

test.before(async () => {
  search = await openSearchWorld(async (world) => {
    const { rows } = await world.db.query<{ id: string }>(
      `update books set popularity = 1, average_rating = 5
        where id = (select id from books where title ilike '%harry potter%' order by popularity, id limit 1)
        returning public_id(id) as id`,
    );
    oneFiveStar = rows[0]!.id;
  });
});
test.after.always(async () => {
  await search?.close();
});

const books = async (query: string): Promise<BookSearchPage> => {
  const response = await search.get(`/v1/books/search?${query}`);
  if (response.status !== 200) throw new Error(`${query}: ${response.status} ${await response.text()}`);
  return (await response.json()) as BookSearchPage;
};
const ids = (page: BookSearchPage) => page.results.map((hit) => hit.book.id);

/** Each work's own values, as the catalogue has them: what a work sorts by with one result per work. */
async function workValues(): Promise<Map<string, { year: number | null; readers: number; rating: number | null }>> {
  const { rows } = await search.world.db.query<{
    work_id: string;
    original_year: number | null;
    readers: string;
    ratings: string;
    rating_sum: string;
  }>(
    `select public_id(b.work_id) as work_id, w.original_year, sum(b.popularity) + coalesce(max(wp.popularity), 0) as readers,
            coalesce(sum(b.popularity) filter (where b.average_rating is not null), 0) as ratings,
            coalesce(sum(b.popularity * b.average_rating), 0) as rating_sum
       from books b join works w on w.id = b.work_id left join work_popularity wp on wp.work_id = b.work_id
      where b.merged_into is null and b.deleted_at is null group by b.work_id, w.original_year`,
  );
  return new Map(
    rows.map((row) => [
      row.work_id,
      { year: row.original_year, readers: Number(row.readers), rating: dampedRating(Number(row.ratings), Number(row.rating_sum)) },
    ]),
  );
}

/** Values in the order given, nulls last; `direction` 1 ascending, -1 descending. */
function inOrder(values: (number | null)[], direction: 1 | -1): boolean {
  const seen = values.findIndex((value) => value === null);
  if (seen >= 0 && values.slice(seen).some((value) => value !== null)) return false;
  const known = values.filter((value): value is number => value !== null);
  return known.every((value, i) => i === 0 || (value - known[i - 1]!) * direction >= -1e-6);
}

test('sort=rating ranks by a damped average: one five-star rating does not outrank a million fours', async (t) => {
  const page = await books('q=harry%20potter&sort=rating&editions=all&limit=100');
  const ratings = page.results.map((hit) => dampedRating(hit.book.ratings_count, hit.book.ratings_count * (hit.book.average_rating ?? 0)));
  const ranked = page.results.map((hit) => (hit.book.average_rating === null || hit.book.ratings_count === 0 ? null : ratings.shift()!));
  t.true(inOrder(ranked, -1));
  t.true(ranked.filter((known) => known !== null).length >= 5);
  const position = ids(page).indexOf(oneFiveStar);
  t.true(position > 0, `the one-rating edition is at ${position}`);
  const first = page.results[0]!.book;
  t.true(first.ratings_count > 100_000 && first.average_rating! >= 4, `${first.title}: ${first.ratings_count} × ${first.average_rating}`);
});

test('with one result per work, a work sorts by its own first-published year, readers and rating', async (t) => {
  const works = await workValues();
  const cases = [
    ['newest', (id: string) => works.get(id)!.year, -1],
    ['oldest', (id: string) => works.get(id)!.year, 1],
    ['readers', (id: string) => works.get(id)!.readers, -1],
    ['rating', (id: string) => works.get(id)!.rating, -1],
  ] as const;
  for (const [sort, value, direction] of cases) {
    const page = await books(`q=the&sort=${sort}&limit=100`);
    const workIds = page.results.map((hit) => hit.book.work_id);
    t.is(new Set(workIds).size, workIds.length, `${sort}: one result per work`);
    // A work whose first-published year is unknown sorts by its edition's year.
    const values = page.results.map((hit) =>
      sort === 'newest' || sort === 'oldest' ? (value(hit.book.work_id) ?? hit.book.year) : value(hit.book.work_id),
    );
    t.true(inOrder(values, direction), `${sort}: ${JSON.stringify(values)}`);
    t.true(values.filter((known) => known !== null).length > 50, sort);
  }
});

test('with editions=all, each edition sorts by its own year; books of unknown year come last', async (t) => {
  for (const [sort, direction] of [
    ['newest', -1],
    ['oldest', 1],
  ] as const) {
    const page = await books(`q=the&sort=${sort}&editions=all&limit=100&offset=100`);
    t.true(
      inOrder(
        page.results.map((hit) => hit.book.year),
        direction,
      ),
      sort,
    );
    const top = await books(`q=the&sort=${sort}&editions=all&limit=100`);
    t.true(
      inOrder(
        top.results.map((hit) => hit.book.year),
        direction,
      ),
      sort,
    );
    t.not(top.results[0]!.book.year, null);
  }
});

test('sort=title is alphabetical without a leading article, case or diacritics', async (t) => {
  const page = await books('q=harry%20potter&sort=title&limit=50');
  const keys = page.results.map((hit) =>
    hit.book.title
      .toLowerCase()
      .normalize('NFKD')
      .replace(/\p{M}/gu, '')
      .replace(/['’.]/g, '')
      .replace(/[^\p{L}\p{N}]+/gu, ' ')
      .trim()
      .replace(/^(the|a|an) /, ''),
  );
  t.deepEqual(
    keys,
    [...keys].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0)),
  );
});

test('a sorted result pages exactly: consecutive pages are the whole list, with every filter', async (t) => {
  for (const query of [
    'q=the&sort=readers',
    'q=the&sort=title&editions=all',
    'q=the&sort=newest&language=eng&year_from=1990&year_to=2010',
  ]) {
    const whole = await books(`${query}&limit=60`);
    const pages = [];
    for (let offset = 0; offset < 60; offset += 20) pages.push(...ids(await books(`${query}&limit=20&offset=${offset}`)));
    t.deepEqual(pages, ids(whole), query);
    if (query.includes('language')) {
      for (const hit of whole.results) {
        t.is(hit.book.language, 'eng');
        t.true(hit.book.year! >= 1990 && hit.book.year! <= 2010);
      }
    }
  }
  const deep = await books('q=the&sort=readers&editions=all&limit=100&offset=80');
  const deepWhole = await books('q=the&sort=readers&editions=all&limit=50&offset=130');
  t.is(deep.results.length, 100);
  t.deepEqual(ids(deep).slice(50), ids(deepWhole));
});

test('an unknown sort is a 400 naming the choices', async (t) => {
  const path = '/v1/books/search?q=a&sort=best';
  await assertBadRequest(t, await search.get(path), 'sort must be one of relevance, newest, oldest, rating, readers, title', path);
});

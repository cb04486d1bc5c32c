import test, { type ExecutionContext } from 'ava';
import { openSearchWorld, type SearchWorld } from './helpers/search.js';
import { assertBadRequest } from './helpers/assertions.js';
import { shortCacheKeys, shortCached } from './helpers/cache.js';
import type { BookSearchPage } from '../src/services/search.js';

let search: SearchWorld;

test.before(async () => {
  search = await openSearchWorld();
});
test.after.always(async () => {
  await search?.close();
});

interface AuthorPage {
  total: number;
  limit: number;
  offset: number;
  results: { score: number; author: { id: string; name: string; alternate_names: string[]; work_count: number } }[];
}

const books = async (query: string): Promise<BookSearchPage> => {
  const response = await search.get(`/v1/books/search?${query}`);
  if (response.status !== 200) throw new Error(`${query}: ${response.status} ${await response.text()}`);
  return (await response.json()) as BookSearchPage;
};
const authors = async (query: string): Promise<AuthorPage> =>
  (await (await search.get(`/v1/authors/search?${query}`)).json()) as AuthorPage;
const titles = (page: BookSearchPage): string[] => page.results.map((hit) => hit.book.title);

const badRequest = async (t: ExecutionContext, path: string, message: string) => assertBadRequest(t, await search.get(path), message, path);

/** A work with several editions in the sample catalogue, and its title. */
async function workWithEditions(): Promise<{ workId: string; title: string; editions: number }> {
  const { rows } = await search.world.db.query<{ work_id: string; title: string; editions: number }>(
    `select public_id(b.work_id) as work_id, min(b.title) as title, count(*)::int as editions from books b where b.merged_into is null
      group by b.work_id having count(*) > 1 and count(distinct b.title) = 1 order by count(*) desc, b.work_id limit 1`,
  );
  const row = rows[0]!;
  return { workId: row.work_id, title: row.title, editions: row.editions };
}

test('book search without q is a 400 "q is required"', async (t) => {
  await badRequest(t, '/v1/books/search', 'q is required');
  await badRequest(t, '/v1/books/search?q=', 'q is required');
  await badRequest(t, '/v1/books/search?q=%20%20', 'q is required');
});

test('book search ranks the title match first and answers the same record as GET /v1/books/:id, with a score', async (t) => {
  const page = await books('q=hunger%20games');
  t.is(page.results[0]?.book.title, 'The Hunger Games');
  t.true(page.results[0]!.score > 0);
  t.deepEqual(Object.keys(page).sort(), ['limit', 'offset', 'results', 'total']);
  const record: unknown = await (await search.get(`/v1/books/${page.results[0]!.book.id}`)).json();
  t.deepEqual(page.results[0]!.book, record);
  const scores = page.results.map((hit) => hit.score);
  t.deepEqual(
    scores,
    [...scores].sort((a, b) => b - a),
  );
});

test('an ISBN in q, in any spelling, puts that edition first', async (t) => {
  for (const q of ['9780439023481', '0-439-02348-3', 'collins 0439023483']) {
    const page = await books(`q=${encodeURIComponent(q)}`);
    t.is(page.results[0]?.book.isbn_13, '9780439023481', q);
  }
});

test('book search tolerates typos, a missing article, diacritics and a half-typed last word', async (t) => {
  t.is(titles(await books('q=hungr%20gmes'))[0], 'The Hunger Games');
  t.is(titles(await books('q=harry%20potter%20prisoner%20azkban'))[0], 'Harry Potter and the Prisoner of Azkaban');
  t.is(titles(await books('q=catching%20fi'))[0], 'Catching Fire');
  t.true((await books('q=grandpre')).results.some((hit) => hit.book.authors.some((author) => author.name === 'Mary GrandPré')));
});

test('book search finds books by author name and by series', async (t) => {
  const byAuthor = await books('q=suzanne%20collins');
  t.true(byAuthor.results.length >= 3);
  for (const hit of byAuthor.results.slice(0, 3))
    t.true(
      hit.book.authors.some((author) => author.name === 'Suzanne Collins'),
      hit.book.title,
    );
  const bySeries = await books('q=hunger%20games&limit=5');
  t.true(titles(bySeries).includes('Mockingjay'));
});

test('book search shows one edition per work unless editions=all; total counts matching editions either way', async (t) => {
  const { workId, title, editions } = await workWithEditions();
  const collapsed = await books(`q=${encodeURIComponent(title)}&limit=100`);
  const workIds = collapsed.results.map((hit) => hit.book.work_id);
  t.is(new Set(workIds).size, workIds.length);
  t.is(workIds.filter((id) => id === workId).length, 1);

  const every = await books(`q=${encodeURIComponent(title)}&limit=100&editions=all`);
  t.is(every.results.filter((hit) => hit.book.work_id === workId).length, editions);
  t.is(every.total, every.results.length);
  t.is(collapsed.total, every.total);
  t.true(collapsed.results.length < every.results.length);
});

test('filters narrow book search: author_id, language, year range', async (t) => {
  const rowling = (await books('q=harry%20potter')).results[0]!.book.authors[0]!;
  const byAuthor = await books(`q=harry%20potter&author_id=${rowling.id}&limit=50`);
  t.true(byAuthor.results.length > 0);
  for (const hit of byAuthor.results) t.true(hit.book.authors.some((author) => author.id === rowling.id));

  // Book-Crossing editions carry no language: only the goodbooks editions are English.
  const all = await books('q=the&limit=50&editions=all');
  const english = await books('q=the&limit=50&editions=all&language=eng');
  t.true(english.results.length > 0);
  t.true(english.total < all.total);
  for (const hit of english.results) t.is(hit.book.language, 'eng');

  const years = await books('q=harry%20potter&limit=50&year_from=1999&year_to=2000');
  t.true(years.results.length > 0);
  for (const hit of years.results) t.true(hit.book.year! >= 1999 && hit.book.year! <= 2000, String(hit.book.year));
});

test('limit and offset page through one ranking', async (t) => {
  const whole = await books('q=the&limit=6');
  const first = await books('q=the&limit=3');
  const second = await books('q=the&limit=3&offset=3');
  t.deepEqual(
    [...first.results, ...second.results].map((hit) => hit.book.id),
    whole.results.map((hit) => hit.book.id),
  );
  t.is(second.offset, 3);
  t.is(second.limit, 3);
  t.is(second.total, whole.total);
  t.is((await books('q=the')).limit, 20);
});

test('invalid book search parameters are 400s naming the parameter', async (t) => {
  await badRequest(t, '/v1/books/search?q=a&limit=0', 'limit must be an integer from 1 to 100');
  await badRequest(t, '/v1/books/search?q=a&limit=101', 'limit must be an integer from 1 to 100');
  await badRequest(t, '/v1/books/search?q=a&offset=-1', 'offset must be a non-negative integer');
  await badRequest(t, '/v1/books/search?q=a&offset=990&limit=20', 'offset + limit must be at most 1000');
  await badRequest(t, '/v1/books/search?q=a&year_from=nineteen', 'year_from must be a year (an integer of at most 4 digits)');
  await badRequest(t, '/v1/books/search?q=a&year_from=2001&year_to=2000', 'year_from must not be after year_to');
  await badRequest(t, '/v1/books/search?q=a&editions=some', 'editions must be best or all');
  await badRequest(t, '/v1/books/search?q=a&author_id=rowling', 'author_id must be an author id (au_...), got "rowling"');
  await badRequest(t, '/v1/books/search?q=a&language=english!', 'language must be a language code such as eng or en-US, got "english!"');
  await badRequest(t, '/v1/books/search?q=a&q=b', 'query parameter q is given more than once');
  await badRequest(t, `/v1/books/search?q=${'a'.repeat(201)}`, 'q must be at most 200 characters');
});

test('a search answer is kept in the short cache under its canonical parameters, for the short cache lifetime', async (t) => {
  await books('q=%20mockingjay%20&limit=7');
  t.true(await shortCached(search.world, 'search:books:*mockingjay*'));
  const keys = await shortCacheKeys(search.world, 'search:books:*mockingjay*');
  t.is(keys.length, 1);
  t.true(keys[0]!.includes('"limit":7'));
  const ttl = await search.world.redis.ttl(keys[0]!);
  const lifetime = search.world.config.shortCacheTtlS;
  t.true(ttl > lifetime - 10 && ttl <= lifetime, `TTL ${ttl} s, the short cache lifetime being ${lifetime} s`);
});

test('author search sees through initials, surname-first order, diacritics and typos', async (t) => {
  for (const q of ['JK Rowling', 'Rowling, J.K.', 'j. k. rowling', 'rowlng']) {
    t.is((await authors(`q=${encodeURIComponent(q)}`)).results[0]?.author.name, 'J.K. Rowling', q);
  }
  t.is((await authors('q=mary%20grandpre')).results[0]?.author.name, 'Mary GrandPré');
});

test('an author hit reads like GET /v1/authors/:id without the works', async (t) => {
  const page = await authors('q=suzanne%20collins');
  const hit = page.results[0]!;
  t.true(hit.score > 0);
  t.deepEqual(Object.keys(page).sort(), ['limit', 'offset', 'results', 'total']);
  const {
    works: _works,
    updated_at: _updated,
    ...summary
  } = (await (await search.get(`/v1/authors/${hit.author.id}`)).json()) as Record<string, unknown>;
  t.deepEqual(hit.author, summary);
  t.true(hit.author.work_count >= 3);
});

test('author search without q is a 400 "q is required", and pages like book search', async (t) => {
  await badRequest(t, '/v1/authors/search', 'q is required');
  await badRequest(t, '/v1/authors/search?q=a&limit=101', 'limit must be an integer from 1 to 100');
  const first = await authors('q=j&limit=2');
  const second = await authors('q=j&limit=2&offset=2');
  const whole = await authors('q=j&limit=4');
  t.deepEqual(
    [...first.results, ...second.results].map((hit) => hit.author.id),
    whole.results.map((hit) => hit.author.id),
  );
});

import test from 'ava';
import type { BookRecord } from '../src/domain/records.js';
import { distinctSubjects, subjectKey } from '../src/domain/subjects.js';
import { openSearchWorld, type SearchWorld } from './helpers/search.js';
import { assertBadRequest } from './helpers/assertions.js';

let search: SearchWorld;

// Harry Potter books get one subject in several spellings (most often "Fantasy fiction") and another once.
const SPELLINGS = ['Fantasy fiction', 'Fantasy fiction', 'FICTION / Fantasy', 'fantasy, fiction.', 'Fantasy fiction'];

test.before(async () => {
  search = await openSearchWorld(async (world) => {
    const { rows } = await world.db.query<{ id: string }>(
      `select public_id(id) as id from books where title ilike 'harry potter%' and merged_into is null order by books.id limit ${SPELLINGS.length}`,
    );
    for (const [i, row] of rows.entries()) {
      await world.db.query('update books set subjects = $2 where id = entity_key($1)', [
        row.id,
        [SPELLINGS[i]!, i === 0 ? 'Wizards' : 'Magic'],
      ]);
    }
  });
});
test.after.always(async () => {
  await search?.close();
});

interface FacetValue {
  value: string;
  count: number;
  name?: string;
}
interface BookPage {
  total: number;
  results: { book: BookRecord }[];
  facets?: Record<string, FacetValue[]>;
}

const books = async (query: string): Promise<BookPage> => {
  const response = await search.get(`/v1/books/search?${query}`);
  if (response.status !== 200) throw new Error(`${query}: ${response.status} ${await response.text()}`);
  return (await response.json()) as BookPage;
};
const counted = (values: FacetValue[]) => values.map(({ value, count }) => [value, count]);
/** The distinct works of every edition a search finds. */
async function worksOf(query: string): Promise<number> {
  const works = new Set<string>();
  for (let offset = 0; ; offset += 100) {
    const page = await books(`${query}&editions=all&limit=100&offset=${offset}`);
    for (const hit of page.results) works.add(hit.book.work_id);
    if (page.results.length < 100) return works.size;
  }
}

test("a subject's key sets aside case, diacritics, punctuation and word order", (t) => {
  t.is(subjectKey('FICTION / Fantasy / Epic'), 'epic fantasy fiction');
  t.is(subjectKey('Fiction, general'), 'fiction general');
  t.is(subjectKey('  Fiction. '), 'fiction');
  t.is(subjectKey('Ficción'), 'ficcion');
  t.is(subjectKey('fantasy fiction fantasy'), 'fantasy fiction');
  t.is(subjectKey('--'), '');
  t.deepEqual(distinctSubjects(['Fiction', 'fiction', ' Fantasy ', '?']), [
    { key: 'fiction', spelling: 'Fiction' },
    { key: 'fantasy', spelling: 'Fantasy' },
  ]);
});

test('facets count every matching book, most frequent first, and a value drills down to exactly its count', async (t) => {
  for (const editions of ['all', 'best']) {
    const page = await books(`q=the&editions=${editions}&facets=language,decade,author,publisher&facet_limit=5`);
    t.deepEqual(Object.keys(page.facets!).sort(), ['author', 'decade', 'language', 'publisher']);
    for (const [field, values] of Object.entries(page.facets!)) {
      t.true(values.length > 0 && values.length <= 5, field);
      t.deepEqual(
        values.map((value) => value.count),
        values.map((value) => value.count).sort((a, b) => b - a),
        field,
      );
    }
    const drill = {
      language: (value: string) => `language=${value}`,
      decade: (value: string) => `year_from=${value}&year_to=${Number(value) + 9}`,
      author: (value: string) => `author_id=${value}`,
      publisher: (value: string) => `publisher=${encodeURIComponent(value)}`,
    };
    for (const [field, filter] of Object.entries(drill)) {
      const top = page.facets![field]![0]!;
      const query = `q=the&${filter(top.value)}`;
      t.is(
        top.count,
        editions === 'all' ? (await books(`${query}&editions=all`)).total : await worksOf(query),
        `${editions} ${field} ${top.value}`,
      );
    }
    t.is(page.facets!.author![0]!.name!.length > 0, true);
  }
});

test("a field's counts ignore its own filter, and the other filters apply", async (t) => {
  const all = await books('q=the&editions=all&facets=language,decade');
  const english = await books('q=the&editions=all&facets=language,decade&language=eng');
  t.deepEqual(english.facets!.language, all.facets!.language);
  t.true(english.facets!.language!.length > 1);
  t.true(english.total < all.total);
  for (const hit of english.results) t.is(hit.book.language, 'eng');
  const decades = (page: BookPage) => page.facets!.decade!.reduce((sum, value) => sum + value.count, 0);
  t.true(decades(english) < decades(all));
});

test('subjects count once whatever their spelling, shown as most books spell them, and subject= finds every spelling', async (t) => {
  const page = await books('q=harry%20potter&editions=all&facets=subject');
  t.deepEqual(counted(page.facets!.subject!), [
    ['Fantasy fiction', 5],
    ['Magic', 4],
    ['Wizards', 1],
  ]);
  for (const subject of ['fiction fantasy', 'FICTION / Fantasy']) {
    const narrowed = await books(`q=harry%20potter&editions=all&subject=${encodeURIComponent(subject)}`);
    t.is(narrowed.total, 5, subject);
  }
  t.deepEqual(counted((await books('q=harry%20potter&editions=all&facets=subject&facet_limit=1')).facets!.subject!), [
    ['Fantasy fiction', 5],
  ]);
});

test('a search without facets answers no facets; invalid facet parameters are 400s naming them', async (t) => {
  t.is((await books('q=the')).facets, undefined);
  const bad = async (query: string, message: string) =>
    assertBadRequest(t, await search.get(`/v1/books/search?q=a&${query}`), message, query);
  await bad(
    'facets=language,colour',
    'facets must be a comma-separated list of subject, language, decade, author, publisher; got "colour"',
  );
  await bad('facets=language&facet_limit=21', 'facet_limit must be an integer from 1 to 20');
  await bad('subject=%20-%20', 'subject must have a letter or digit');
});

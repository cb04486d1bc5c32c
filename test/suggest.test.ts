import test from 'ava';
import { openSearchWorld, type SearchWorld } from './helpers/search.js';
import { assertBadRequest } from './helpers/assertions.js';
import { GOODBOOKS_HEADER, csvFile, importFile } from './helpers/catalogue.js';
import { authorKey } from '../src/domain/names.js';
import { titleKey } from '../src/domain/titles.js';
import { ApiError } from '../src/errors.js';
import { createElastic } from '../src/stores/elasticsearch/client.js';
import { indexDefinition } from '../src/stores/elasticsearch/indexDeclaration.js';
import { INDEX_KINDS, INDICES } from '../src/stores/elasticsearch/indices.js';
import { suggest as suggestFrom } from '../src/stores/elasticsearch/suggestions.js';

let search: SearchWorld;

// Authors whose surnames start alike, most read first; the first one's given name starts so too.
const QUAY_AUTHORS = ['Quay Quaylord', 'Ann Quaybeck', 'Bo Quaymont', 'Cy Quaystrom', 'Di Quayfield', 'Ed Quaywell'];

test.before(async () => {
  search = await openSearchWorld(async (world) => {
    const rows = QUAY_AUTHORS.map((author, at) => {
      const id = 90_100 + at;
      const ratings = 6000 - at * 1000;
      return `${id},${id},${id},${id},1,,,"${author}",2001.0,"Morrow Lanterns ${at + 1}","Morrow Lanterns ${at + 1}",eng,4.0,${ratings},${ratings},1,1,1,1,1,1,,`;
    });
    // A little read title starting so: it ranks below all of them.
    const title = `90199,90199,90199,90199,1,,,"Lu Morrow",2001.0,"Quayside Morning","Quayside Morning",eng,4.0,10,10,1,1,1,1,1,1,,`;
    // One work under three titles: its most read edition's, a translation's with the same key, and another.
    const editions = [
      `90301,90301,90301,90300,3,,,"Ines Farol",1990.0,"The Lantern Keeper","El Lantern Keeper",spa,4.0,20,2000,1,1,1,1,1,1,,`,
      `90302,90302,90302,90300,3,,,"Ines Farol",1990.0,"The Lantern Keeper","The Lantern Keeper",eng,4.0,1900,2000,1,1,1,1,1,1,,`,
      `90303,90303,90303,90300,3,,,"Ines Farol",1990.0,"The Lantern Keeper","La Lanterne du gardien",fra,4.0,80,2000,1,1,1,1,1,1,,`,
    ];
    await importFile(world, 'goodbooks', await csvFile([GOODBOOKS_HEADER, ...rows, title, ...editions]));
  });
});
test.after.always(async () => {
  await search?.close();
});

interface Suggestion {
  type: 'work' | 'author' | 'series';
  text: string;
  id?: string;
  title?: string;
  name?: string;
  author?: { id: string; name: string } | null;
  year?: number | null;
  work_count?: number;
  volumes?: number;
}

const suggest = async (q: string, more = ''): Promise<Suggestion[]> => {
  const response = await search.get(`/v1/suggest?q=${encodeURIComponent(q)}${more}`);
  if (response.status !== 200) throw new Error(`${q}: ${response.status} ${await response.text()}`);
  return ((await response.json()) as { results: Suggestion[] }).results;
};
const labels = (results: Suggestion[]) => results.map((found) => found.title ?? found.name);

test('a work is suggested from its whole title, from its first letters, without its article, diacritics or case', async (t) => {
  for (const q of ['The Hunger Games', 'the hunger ga', 'hunger games', 'HUNGER GAMES', 'hünger gam']) {
    const results = await suggest(q);
    t.is(results[0]?.type, 'work', q);
    t.is(results[0]?.title, 'The Hunger Games', q);
  }
  const [first] = await suggest('catching fi');
  t.like(first, { type: 'work', title: 'Catching Fire', author: { name: 'Suzanne Collins' } });
  t.regex(first!.id!, /^wk_/);
  t.is(typeof first!.year, 'number');
  t.is(first!.text, 'Catching Fire (Suzanne Collins)');
});

test("a work is suggested under the title that fits the typed text, its most read edition's among titles that fit alike", async (t) => {
  for (const q of ['lantern keeper', 'lantern kee', 'El Lantern Keeper']) {
    const works = (await suggest(q)).filter((found) => found.type === 'work');
    t.deepEqual(labels(works), ['The Lantern Keeper'], q);
  }
  const [first] = await suggest('lanterne du');
  t.like(first, { type: 'work', title: 'La Lanterne du gardien', author: { name: 'Ines Farol' } });
});

test('a title with an ampersand is suggested first, typed with it, with "and", whole or in part', async (t) => {
  for (const q of ['Eleanor & Park', 'eleanor and park', 'eleanor & pa']) {
    const [first] = await suggest(q);
    t.like(first, { type: 'work', title: 'Eleanor & Park', author: { name: 'Rainbow Rowell' } }, q);
  }
});

test('one typo is tolerated from the fourth letter of a word, and a single letter suggests', async (t) => {
  t.true(labels(await suggest('mockingjya')).includes('Mockingjay'));
  t.true(labels(await suggest('catchin fire')).includes('Catching Fire'));
  const one = await suggest('m');
  t.true(one.length > 0);
  t.true(one.some((found) => /^m/i.test(found.title ?? found.name ?? '')));
});

test('authors are suggested from the first letters of their surname, with their work count', async (t) => {
  const results = await suggest('rowli');
  const rowling = results.find((found) => found.type === 'author');
  t.like(rowling, { type: 'author', name: 'J.K. Rowling' });
  t.regex(rowling!.id!, /^au_/);
  t.true(rowling!.work_count! > 0);
  t.true(results.indexOf(rowling!) < 5);
});

test('an author whose name and surname both start as typed takes one place, and the next most read authors fill the others', async (t) => {
  const results = await suggest('quay');
  t.deepEqual(
    results.map((found) => `${found.type} ${found.name}`),
    QUAY_AUTHORS.slice(0, 5).map((name) => `author ${name}`),
  );
});

test('a series is suggested with its first author and number of volumes', async (t) => {
  const series = (await suggest('hunger gam', '&limit=10')).find((found) => found.type === 'series');
  t.like(series, { type: 'series', name: 'The Hunger Games', author: { name: 'Suzanne Collins' } });
  t.true(series!.volumes! >= 3);
});

test('one suggestion per work, at most limit, default 5', async (t) => {
  const results = await suggest('harry potter', '&limit=10');
  const works = results.filter((found) => found.type === 'work').map((found) => found.id);
  t.is(new Set(works).size, works.length);
  t.true(results.length <= 10 && results.length > 5);
  t.is((await suggest('harry potter')).length, 5);
});

test('indices built before the type-ahead fields answer 503 unavailable, naming a missing field', async (t) => {
  const es = createElastic(search.world.config.elasticsearchUrl);
  const indices = { books: `${search.world.config.indexPrefix}old-books`, authors: `${search.world.config.indexPrefix}old-authors` };
  try {
    for (const kind of INDEX_KINDS) {
      const { settings, mappings } = indexDefinition(INDICES[kind]);
      const properties = mappings.properties as Record<string, unknown>;
      for (const field of ['title_start', 'series_start', 'name_start']) delete properties[field];
      await es.indices.create({ index: indices[kind], settings, mappings });
    }
    const query = { key: 'hunger', nameKey: 'hunger', limit: 5 };
    const error = await t.throwsAsync(suggestFrom(es, indices, query, titleKey, authorKey));
    t.true(error instanceof ApiError, String(error));
    t.like(error, { status: 503, code: 'unavailable' });
    t.regex(error.message, /lacks (title|series|name)_start/);
  } finally {
    await es.indices.delete({ index: Object.values(indices) }).catch(() => undefined);
    await es.close();
  }
});

test('suggest without q, or with a limit out of range, is a 400 naming it', async (t) => {
  for (const [path, message] of [
    ['/v1/suggest', 'q is required'],
    ['/v1/suggest?q=a&limit=11', 'limit must be an integer from 1 to 10'],
    [`/v1/suggest?q=${'a'.repeat(101)}`, 'q must be at most 100 characters'],
  ]) {
    await assertBadRequest(t, await search.get(path!), message!, path!);
  }
});

test('the reconciliation service declares an entity suggest service that suggests works and authors as typed, with the key', async (t) => {
  const manifest = (await (await fetch(`${search.server.url}/reconcile`)).json()) as { suggest: { entity: { service_path: string } } };
  t.is(manifest.suggest.entity.service_path, '/reconcile/suggest/entity');
  const response = await search.get('/reconcile/suggest/entity?prefix=catching%20fi');
  t.is(response.status, 200);
  const { result } = (await response.json()) as { result: { id: string; name: string; description: string; notable: { id: string }[] }[] };
  t.like(result[0], { name: 'Catching Fire', notable: [{ id: 'work' }] });
  t.regex(result[0]!.id, /^wk_/);
  t.regex(result[0]!.description, /Suzanne Collins, \d{4}/);
  const authors = (await (await search.get('/reconcile/suggest/entity?prefix=rowli')).json()) as {
    result: { id: string; notable: { id: string }[] }[];
  };
  t.true(authors.result.some((found) => found.notable[0]!.id === 'author' && found.id.startsWith('au_')));
  t.is((await fetch(`${search.server.url}/reconcile/suggest/entity?prefix=rowli`)).status, 401);
  await assertBadRequest(t, await search.get('/reconcile/suggest/entity'), 'prefix is required', 'no prefix');
  await assertBadRequest(
    t,
    await search.get('/reconcile/suggest/entity?prefix=a&cursor=x'),
    'cursor must be a non-negative integer',
    'cursor',
  );
});

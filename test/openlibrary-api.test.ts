import test from 'ava';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { reindex } from '../loader/index/reindex.js';
import { syncOnce } from '../loader/index/sync.js';
import { importOpenLibrary } from '../loader/import/openlibrary/import.js';
import { createLogger } from '../src/log.js';
import { projectPath } from '../src/paths.js';
import type { TestWorld } from './helpers/env.js';
import { useApi } from './helpers/env.js';
import { GOODBOOKS_300, importFile } from './helpers/catalogue.js';
import { loaderDeps, type TestLoaderDeps } from './helpers/indexing.js';

const log = createLogger('silent');
const SAMPLE = ['ol_dump_editions_sample.txt', 'ol_dump_works_sample.txt', 'ol_dump_authors_sample.txt'].map((file) =>
  projectPath('data', 'openlibrary', file),
);
const load = (world: TestWorld, paths: string[]) =>
  importOpenLibrary(paths, { db: world.db, cache: world.cache, log }, { progress: false });

let deps: TestLoaderDeps;
const api = useApi(test, {
  server: { rateLimitMax: 1_000_000 },
  prepare: async (world) => {
    await importFile(world, 'goodbooks', GOODBOOKS_300);
    await load(world, SAMPLE);
    deps = loaderDeps(world);
    await reindex(deps, 'all', { progress: false });
  },
});
test.after.always(() => deps?.close());

/** Follows an Open Library key's 301 and answers the record's JSON. */
async function recordOf(key: string): Promise<Record<string, unknown>> {
  const redirect = await api.get(`/v1/openlibrary/${key}`);
  if (redirect.status !== 301) throw new Error(`${key}: ${redirect.status} ${await redirect.text()}`);
  const response = await api.get(redirect.headers.get('location')!);
  return (await response.json()) as Record<string, unknown>;
}

test.serial('an edition key answers 301 to its book, whose JSON lists its identifiers and the new fields', async (t) => {
  const response = await api.get('/v1/openlibrary/OL24224410M');
  t.is(response.status, 301);
  const { id, location } = (await response.json()) as { id: string; location: string };
  t.is(location, `/v1/books/${id}`);
  t.is(response.headers.get('location'), location);
  const book = await recordOf('OL24224410M');
  t.like(book, { isbn_13: '9780439023481', physical_format: 'Hardcover', subjects: ['Survival', 'Reality television programs'] });
  // Two Open Library keys of one ISBN are one book (the goodbooks one), with both keys.
  t.deepEqual(book.identifiers, {
    goodreads: ['2767052'],
    lccn: ['2007039987'],
    oclc: ['181516947'],
    openlibrary: ['OL24224410M', 'OL30012M'],
  });
  t.deepEqual(await recordOf('OL30012M'), book);
});

test.serial('work and author keys answer 301 to their records, with subjects, description, bio and remote ids', async (t) => {
  const work = await recordOf('OL2010879W');
  t.like(work, {
    title: "The innovator's dilemma",
    subtitle: 'when new technologies cause great firms to fail',
    description: 'Why well-managed companies lose their markets to cheaper, simpler products.',
    original_year: 1997,
    identifiers: { openlibrary: ['OL2010879W'] },
  });
  t.is(work.edition_count, 3);
  const author = await recordOf('OL101176A');
  t.like(author, { name: 'Omar Tarin', identifiers: { openlibrary: ['OL101176A'] } });
  t.true(typeof author.bio === 'string' && author.bio.startsWith('**Omar Tarin**'));
  const withRemoteIds = await recordOf('OL1017047A');
  t.deepEqual(withRemoteIds.identifiers, {
    isni: ['0000000066340594'],
    openlibrary: ['OL1017047A'],
    viaf: ['7436334'],
    wikidata: ['Q3190233'],
  });
});

test.serial('a redirected key leads to the survivor; a bad key is a 400, an unknown one a 404, a deleted one a 410', async (t) => {
  const survivor = await api.get('/v1/openlibrary/OL2010880W');
  const redirected = await api.get('/v1/openlibrary/OL2010890W');
  t.is(redirected.status, 301);
  t.is(redirected.headers.get('location'), survivor.headers.get('location'));
  const bad = await api.get('/v1/openlibrary/OL12X');
  t.is(bad.status, 400);
  t.deepEqual(await bad.json(), {
    error: { code: 'bad_request', message: 'invalid Open Library key: "OL12X" is not of the form OL7353617M, OL45804W or OL23919A' },
  });
  const unknown = await api.get('/v1/openlibrary/OL1M');
  t.is(unknown.status, 404);
  const deleted = await api.get('/v1/openlibrary/OL30030M');
  t.is(deleted.status, 410);
  t.deepEqual(await deleted.json(), { error: { code: 'gone', message: 'Open Library deleted OL30030M; the catalogue no longer has it' } });
});

test.serial('search finds a book by the subjects Open Library gives its work', async (t) => {
  const response = await api.get('/v1/books/search?q=disruptive%20technologies');
  const { results } = (await response.json()) as { results: { book: { title: string } }[] };
  t.true(results.some((hit) => hit.book.title === "The innovator's dilemma"));
});

test.serial('an Open Library cover, stored as its number, reads back as its URL in the book, its work and search', async (t) => {
  const cover = 'https://covers.openlibrary.org/b/id/8231994-M.jpg';
  const book = await recordOf('OL30006M');
  t.is(book.cover_url, cover);
  t.is((await recordOf('OL2010881W')).cover_url, cover);
  const { rows } = await api.world.db.query('select cover_url from books where id = entity_key($1)', [book.id]);
  t.deepEqual(rows, [{ cover_url: '8231994' }]);
  const { results } = (await (await api.get('/v1/books/search?q=eventyr%20og%20historier&editions=all')).json()) as {
    results: { book: { id: string; cover_url: string } }[];
  };
  t.is(results.find((hit) => hit.book.id === book.id)?.book.cover_url, cover);
});

test.serial('a deleted record is never answered as live: its id is a 410, search and its work leave it out', async (t) => {
  const { location } = (await (await api.get('/v1/openlibrary/OL30008M')).json()) as { location: string };
  t.is((await api.get(location)).status, 200);
  const dir = await mkdtemp(join(tmpdir(), 'bookmeta-ol-api-'));
  try {
    await writeFile(join(dir, 'delete.txt'), '/type/delete\t/books/OL30008M\t9\t2024-01-01T00:00:00\t{"key": "/books/OL30008M"}\n');
    await load(api.world, [join(dir, 'delete.txt')]);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
  await syncOnce(deps);
  const gone = await api.get(location);
  t.is(gone.status, 410);
  t.is(((await gone.json()) as { error: { code: string } }).error.code, 'gone');
  t.is((await api.get('/v1/openlibrary/OL30008M')).status, 410);
  const search = (await (await api.get('/v1/books/search?q=quicksands')).json()) as { results: unknown[] };
  t.deepEqual(search.results, []);
  const work = (await (await api.get((await api.get('/v1/openlibrary/OL2010882W')).headers.get('location')!)).json()) as {
    edition_count: number;
  };
  t.is(work.edition_count, 0);
});

test.serial(
  'a deleted work, author and book are a 410 from their GET and as items of every batch, each item the error its GET answers',
  async (t) => {
    const located = async (key: string) => (await api.get(`/v1/openlibrary/${key}`)).headers.get('location')!;
    const [book, work, author] = await Promise.all(['OL30009M', 'OL2010883W', 'OL101176A'].map(located));
    const id = (location: string) => location.split('/').pop()!;
    const dir = await mkdtemp(join(tmpdir(), 'bookmeta-ol-api-'));
    try {
      // A revision past any the sample gives these keys: the delete is the newest word on each.
      const deletion = (path: string) => `/type/delete\t${path}\t99\t2024-01-01T00:00:00\t{"key": "${path}"}`;
      await writeFile(
        join(dir, 'delete.txt'),
        [deletion('/books/OL30009M'), deletion('/works/OL2010883W'), deletion('/authors/OL101176A')].join('\n') + '\n',
      );
      await load(api.world, [join(dir, 'delete.txt')]);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
    const gets: Record<string, { status: number; body: unknown }> = {};
    for (const location of [book!, work!, author!]) {
      const response = await api.get(location);
      gets[location] = { status: response.status, body: await response.json() };
      t.is(response.status, 410, location);
      t.like(
        gets[location].body,
        {
          error: {
            code: 'gone',
            message: `${location.split('/')[2]!.slice(0, -1)} ${id(location)} was deleted: its source withdrew the record, so it is no longer in the catalogue`,
          },
        },
        location,
      );
    }
    const batchItem = async (family: string, field: string, key: string) => {
      const response = await api.get(`/v1/${family}/batch`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json' },
        body: JSON.stringify({ [field]: [key] }),
      });
      t.is(response.status, 200, family);
      return ((await response.json()) as { results: Record<string, unknown>[] }).results[0]!;
    };
    for (const [family, location] of [
      ['books', book!],
      ['works', work!],
      ['authors', author!],
    ] as const)
      t.deepEqual(
        await batchItem(family, 'ids', id(location)),
        { id: id(location), status: 410, ...(gets[location]!.body as object) },
        family,
      );
    const isbnItem = await batchItem('isbn', 'isbns', '9789693500066');
    t.is(isbnItem.status, 410);
    t.like(isbnItem, { error: { code: 'gone' } });
  },
);

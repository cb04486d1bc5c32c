import test from 'ava';
import { rm } from 'node:fs/promises';

import { importOpenLibrary } from '../loader/import/openlibrary/import.js';
import { createLogger } from '../src/log.js';
import { GOODBOOKS_300, importFile } from './helpers/catalogue.js';
import { useApi } from './helpers/env.js';
import { olAuthor as author, olDumpFile, olEdition as edition, olWork as work } from './helpers/openlibrary.js';
import { runCli } from './helpers/processes.js';

/**
 * goodbooks credits Suzanne Collins and Stephen King by name; an Open Library dump brings its own
 * records of writers: Suzanne Collins with an edition of a goodbooks ISBN and a work goodbooks has
 * too, a Stephen King with no book in common, and a Jane Collins claimed on another goodbooks ISBN.
 */
const DUMP = [
  author('OL1A', 'Suzanne Collins'),
  work('OL1W', 'The Hunger Games', 'OL1A'),
  edition('OL1M', 'The Hunger Games', '9780439023481', 'OL1W', 'OL1A'),
  // Catching Fire, in an edition goodbooks lacks: its work is split from goodbooks' only by the author records.
  work('OL2W', 'Catching Fire', 'OL1A'),
  edition('OL2M', 'Catching Fire', '9780000000002', 'OL2W', 'OL1A'),
  // Same name as a goodbooks author, nothing shared.
  author('OL3A', 'Stephen King'),
  work('OL3W', 'A Book Nobody Else Has', 'OL3A'),
  edition('OL3M', 'A Book Nobody Else Has', '9780000000019', 'OL3W', 'OL3A'),
  // A shared ISBN (Mockingjay), a name that is not one person with goodbooks' Suzanne Collins.
  author('OL4A', 'Jane Collins'),
  work('OL4W', 'Mockingjay', 'OL4A'),
  edition('OL4M', 'Mockingjay', '9780439023511', 'OL4W', 'OL4A'),
];

let dump: string | undefined;
// Before the Open Library import: the change feed's end, goodbooks' Suzanne Collins and its work of Catching Fire.
const prior = { seq: '', goodbooksCollins: '', goodbooksCatchingFire: '' };
const api = useApi(test, {
  prepare: async (world) => {
    await importFile(world, 'goodbooks', GOODBOOKS_300);
    prior.goodbooksCollins = await authorId('name_key', 'suzanne collins', world);
    prior.goodbooksCatchingFire = await workOf('9780439023498', world);
    prior.seq = (await world.db.query<{ seq: string }>('select coalesce(max(seq), 0) as seq from changes')).rows[0]!.seq;
    dump = await olDumpFile(DUMP);
    await importOpenLibrary([dump], { db: world.db, cache: null, log: createLogger('silent') }, { progress: false });
  },
});
test.after.always(async () => {
  if (dump) await rm(dump, { force: true });
});

const authorId = async (where: string, value: string, world = api.world): Promise<string> =>
  (await world.db.query<{ id: string }>(`select public_id(id) as id from authors where ${where} = $1`, [value])).rows[0]!.id;
const workOf = async (isbn: string, world = api.world): Promise<string> =>
  (await world.db.query<{ work_id: string }>('select public_id(work_id) as work_id from books where isbn_13 = $1', [isbn])).rows[0]!
    .work_id;

test.serial(
  'the import of an author of another source tied by a shared ISBN ends with one record: the merged id answers 301, the feed records it, the split work groups',
  async (t) => {
    const { goodbooksCollins, goodbooksCatchingFire } = prior;
    const openLibraryCollins = await authorId('name_key', 'ol:OL1A');

    const response = await api.get(`/v1/authors/${goodbooksCollins}`);
    t.is(response.status, 301);
    t.is(response.headers.get('location'), `/v1/authors/${openLibraryCollins}`);
    const survivor = (await (await api.get(`/v1/authors/${openLibraryCollins}`)).json()) as { name: string };
    t.is(survivor.name, 'Suzanne Collins');
    const { rows: merges } = await api.world.db.query<{ entity: string; entity_id: string; survivor_id: string }>(
      'select entity, public_id(entity_id) as entity_id, public_id(survivor_id) as survivor_id from changes where seq > $1 and operation = $2 order by seq',
      [prior.seq, 'merge'],
    );
    t.deepEqual(
      merges.filter((row) => row.entity === 'author'),
      [{ entity: 'author', entity_id: goodbooksCollins, survivor_id: openLibraryCollins }],
    );
    // Catching Fire was two works, goodbooks' and Open Library's, only because Suzanne Collins was two records.
    const work = await api.get(`/v1/works/${goodbooksCatchingFire}`);
    t.is(work.status, 301);
    t.is(await workOf('9780439023498'), await workOf('9780000000002'));
  },
);

test.serial('the same name without a shared book or work, or a shared ISBN without a name of one person, merges nothing', async (t) => {
  for (const nameKey of ['stephen king', 'ol:OL3A', 'ol:OL4A']) {
    const id = await authorId('name_key', nameKey);
    t.is((await api.get(`/v1/authors/${id}`)).status, 200, nameKey);
  }
});

test.serial('resolving again changes nothing and records no change', async (t) => {
  const seq = async () => (await api.world.db.query<{ seq: string }>('select coalesce(max(seq), 0) as seq from changes')).rows[0]!.seq;
  const before = await seq();
  const result = await runCli(api.world.env, ['resolve-authors']);
  t.is(result.code, 0, result.stderr);
  t.regex(result.stdout, /resolved authors: 0 merged into others; 0 works merged/);
  t.is(await seq(), before);
});

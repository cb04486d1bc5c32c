import test from 'ava';
import { readFile, rm } from 'node:fs/promises';

import { reindex } from '../loader/index/reindex.js';
import { applyOlRecords } from '../loader/import/openlibrary/apply.js';
import { parseOlLine } from '../src/domain/openlibrary.js';
import { projectPath } from '../src/paths.js';
import type { RunningServer } from '../src/server.js';
import { withTransaction } from '../src/stores/postgres/pool.js';
import { csvFile, GOODBOOKS_300, importFile } from './helpers/catalogue.js';
import { createWorld, newKey, startTestServer, type TestWorld } from './helpers/env.js';
import { eventually } from './helpers/eventually.js';
import { loaderDeps, type TestLoaderDeps } from './helpers/indexing.js';
import { olAuthor, olDumpFile, olEdition, olWork } from './helpers/openlibrary.js';
import { runCli, spawnCli } from './helpers/processes.js';

/**
 * An operator who runs only the import commands of the README: goodbooks (its 300 most read books and
 * Ursula K. Le Guin's, real rows of the shipped file), then Open Library records of the same writers,
 * keyed as Open Library keys them, with editions of goodbooks ISBNs. No `resolve-authors` is run:
 * each import ends with one author per writer, and author search finds one.
 */

const TOLKIEN = [
  olAuthor('OL26320A', 'J.R.R. Tolkien'),
  olWork('OL262758W', 'The Hobbit', 'OL26320A'),
  olEdition('OL26960874M', 'The Hobbit', '9780618260300', 'OL262758W', 'OL26320A'),
  olWork('OL14933414W', 'The Fellowship of the Ring', 'OL26320A'),
  olEdition('OL3945094M', 'The Fellowship of the Ring', '9780618346257', 'OL14933414W', 'OL26320A'),
];
const LE_GUIN = [
  olAuthor('OL31353A', 'Ursula K. Le Guin'),
  olWork('OL59863W', 'A Wizard of Earthsea', 'OL31353A'),
  olEdition('OL24282525M', 'A Wizard of Earthsea', '9780553383041', 'OL59863W', 'OL31353A'),
  // An edition goodbooks lacks: its work and goodbooks' are one once their authors are.
  olWork('OL59802W', 'The Left Hand of Darkness', 'OL31353A'),
  olEdition('OL4885367M', 'The Left Hand of Darkness', '9780441478125', 'OL59802W', 'OL31353A'),
];
// Rick Riordan and Dan Brown, for the records of an import that did not resolve them (see below).
const RIORDAN = [
  olAuthor('OL1432856A', 'Rick Riordan'),
  olWork('OL5858437W', 'The Lightning Thief', 'OL1432856A'),
  olEdition('OL7354461M', 'The Lightning Thief', '9780786838653', 'OL5858437W', 'OL1432856A'),
];
const BROWN = [
  olAuthor('OL39329A', 'Dan Brown'),
  olWork('OL76837W', 'The Da Vinci Code', 'OL39329A'),
  olEdition('OL8012937M', 'The Da Vinci Code', '9780307277671', 'OL76837W', 'OL39329A'),
];

const STOCKETT = [
  olAuthor('OL1432857A', 'Kathryn Stockett'),
  olWork('OL15000001W', 'The Help', 'OL1432857A'),
  olEdition('OL24000001M', 'The Help', '9780399155345', 'OL15000001W', 'OL1432857A'),
];

let world: TestWorld;
let deps: TestLoaderDeps;
let server: RunningServer;
let auth: { Authorization: string };
const files: string[] = [];

test.before(async () => {
  world = await createWorld();
  deps = loaderDeps(world);
  const shipped = (await readFile(projectPath('data', 'goodbooks-10k', 'books.csv'), 'utf8')).split('\n');
  files.push(await csvFile([shipped[0]!, ...shipped.filter((line) => line.includes('Ursula K. Le Guin'))]));
  await importFile(world, 'goodbooks', GOODBOOKS_300);
  await importFile(world, 'goodbooks', files[0]!);
  server = await startTestServer(world);
  ({ auth } = await newKey(world));
});
test.after.always(async () => {
  await server?.stop();
  await deps?.close();
  await world?.destroy();
  await Promise.all(files.map((file) => rm(file, { force: true })));
});

const dump = async (lines: readonly string[]): Promise<string> => {
  const path = await olDumpFile(lines);
  files.push(path);
  return path;
};
const importOpenLibrary = async (lines: readonly string[]) => {
  const result = await runCli(world.env, ['import', 'openlibrary', '--no-progress', await dump(lines)]);
  if (result.code !== 0) throw new Error(result.stderr);
  return result;
};
/** Live author records of a writer, by a word of their name. */
const liveAuthors = async (word: string): Promise<{ id: string; name: string; name_key: string }[]> =>
  (
    await world.db.query<{ id: string; name: string; name_key: string }>(
      `select public_id(id) as id, name, name_key from authors where merged_into is null and deleted_at is null and name ilike '%' || $1 || '%' order by authors.id`,
      [word],
    )
  ).rows;
const authorIdByKey = async (nameKey: string): Promise<string> =>
  (await world.db.query<{ id: string }>('select public_id(id) as id from authors where name_key = $1', [nameKey])).rows[0]!.id;
const workOf = async (isbn: string): Promise<string> =>
  (await world.db.query<{ work_id: string }>('select public_id(work_id) as work_id from books where isbn_13 = $1', [isbn])).rows[0]!
    .work_id;
const noted = async (): Promise<number> =>
  (await world.db.query<{ n: number }>('select count(*)::int as n from authors_to_resolve')).rows[0]!.n;
const get = (path: string) => fetch(`${server.url}${path}`, { headers: auth, redirect: 'manual' });
/** The names author search answers for a query, over indices rebuilt from the catalogue now. */
async function authorSearch(query: string): Promise<string[]> {
  await reindex(deps, 'authors', { progress: false });
  const response = await get(`/v1/authors/search?q=${encodeURIComponent(query)}`);
  const page = (await response.json()) as { results: { author: { name: string } }[] };
  return page.results.map((hit) => hit.author.name);
}

test.serial('an Open Library first load over goodbooks ends with one J.R.R. Tolkien, goodbooks’ record answering 301 to it', async (t) => {
  const goodbooksTolkien = await authorIdByKey('jrr tolkien');
  await importOpenLibrary(TOLKIEN);

  const tolkiens = await liveAuthors('tolkien');
  t.deepEqual(
    tolkiens.map((author) => [author.name, author.name_key]),
    [['J.R.R. Tolkien', 'ol:OL26320A']],
  );
  const redirect = await get(`/v1/authors/${goodbooksTolkien}`);
  t.is(redirect.status, 301);
  t.is(redirect.headers.get('location'), `/v1/authors/${tolkiens[0]!.id}`);
  t.deepEqual(await authorSearch('tolkien'), ['J.R.R. Tolkien']);
  // Every goodbooks book of his is credited to the one record.
  const { rows } = await world.db.query<{ n: number }>(
    `select count(distinct b.id)::int as n from books b join book_authors ba on ba.book_id = b.id where ba.author_id = entity_key($1) and b.merged_into is null`,
    [tolkiens[0]!.id],
  );
  t.true(rows[0]!.n >= 5, `${rows[0]!.n} books credited to the surviving record`);
  t.is(await noted(), 0, 'nothing is left to resolve');
});

test.serial('a monthly re-import ends with one Ursula K. Le Guin; both sources’ The Left Hand of Darkness are one work', async (t) => {
  await importOpenLibrary(LE_GUIN);

  t.deepEqual(
    (await liveAuthors('guin')).map((author) => [author.name, author.name_key]),
    [['Ursula K. Le Guin', 'ol:OL31353A']],
  );
  t.deepEqual(await authorSearch('ursula le guin'), ['Ursula K. Le Guin']);
  t.is(await workOf('9780441007318'), await workOf('9780441478125'));
  t.is(await noted(), 0);
});

test.serial('after the imports, a full resolve-authors pass finds nothing left to do', async (t) => {
  const seq = async () => (await world.db.query<{ seq: string }>('select coalesce(max(seq), 0) as seq from changes')).rows[0]!.seq;
  const before = await seq();
  const result = await runCli(world.env, ['resolve-authors']);
  t.is(result.code, 0, result.stderr);
  t.regex(result.stdout, /resolved authors: 0 merged into others; 0 works merged/);
  t.is(await seq(), before);
});

/** Open Library records applied as an import's batches apply them, with nothing after: the import's end never came. */
async function applyWithoutResolving(lines: readonly string[]): Promise<void> {
  const records = lines.map((line) => parseOlLine(line)).flatMap((outcome) => (outcome && 'record' in outcome ? [outcome.record] : []));
  await applyOlRecords(world.db, records);
}

test.serial('an import resolves only what it touched: writers it did not touch wait for resolve-authors', async (t) => {
  // Rick Riordan's two records, as a catalogue holds them from before imports resolved authors: not noted.
  await applyWithoutResolving(RIORDAN);
  await world.db.query('delete from authors_to_resolve');
  t.is((await liveAuthors('riordan')).length, 2);

  // An import of other books resolves its own authors and looks at no other.
  const other = await dump([
    olAuthor('OL1394359A', 'Suzanne Collins'),
    olWork('OL5735363W', 'The Hunger Games', 'OL1394359A'),
    olEdition('OL24224410M', 'The Hunger Games', '9780439023481', 'OL5735363W', 'OL1394359A'),
  ]);
  const result = await runCli(world.env, ['import', 'openlibrary', '--no-progress', other]);
  t.is(result.code, 0, result.stderr);
  t.is((await liveAuthors('suzanne collins')).length, 1);
  t.is((await liveAuthors('riordan')).length, 2, 'the import left alone what it did not touch');

  const full = await runCli(world.env, ['resolve-authors']);
  t.regex(full.stdout, /resolved authors: 1 merged into others/);
  t.deepEqual(
    (await liveAuthors('riordan')).map((author) => author.name_key),
    ['ol:OL1432856A'],
  );
});

test.serial(
  'an import killed with kill -9 while it resolves leaves its authors noted and the catalogue whole; the next import finishes',
  async (t) => {
    const goodbooksBrown = await authorIdByKey('dan brown');
    // Batches committed, the resolution under way: its merge of goodbooks' Dan Brown waits on this lock until the
    // kill (a lock the batches' credits, which only keep the row from going, do not wait on).
    await withTransaction(world.db, async (client) => {
      await client.query('select id from authors where id = entity_key($1) for no key update', [goodbooksBrown]);
      const { child, exited } = spawnCli(world.env, ['import', 'openlibrary', '--no-progress', await dump(BROWN)]);
      await eventually(async () => {
        const { rows } = await world.db.query<{ n: number }>(
          `select count(*)::int as n from pg_stat_activity where datname = current_database() and wait_event_type = 'Lock'`,
        );
        return rows[0]!.n > 0 && (await noted()) > 0;
      }, 60_000);
      t.is(child.exitCode, null, 'the import was resolving, blocked on the lock');
      child.kill('SIGKILL');
      t.is(await exited, 'SIGKILL');
    });

    t.is((await liveAuthors('dan brown')).length, 2, 'no merge half done');
    t.true((await noted()) > 0, 'the authors it touched are still noted');
    const orphans = await world.db.query(
      'select 1 from book_authors ba join authors a on a.id = ba.author_id where a.merged_into is not null',
    );
    t.is(orphans.rowCount, 0, 'no book credits a merged record');

    // The next import, of a file that changes nothing, resolves what the killed one left.
    await importFile(world, 'goodbooks', files[0]!);
    t.deepEqual(
      (await liveAuthors('dan brown')).map((author) => author.name_key),
      ['ol:OL39329A'],
    );
    t.is(await noted(), 0);
  },
);

test.serial('an import that touched most of the authors ends with a full pass: writers it did not touch are resolved too', async (t) => {
  // Kathryn Stockett's two records, not noted, as in the test above.
  await applyWithoutResolving(STOCKETT);
  await world.db.query('delete from authors_to_resolve');
  t.is((await liveAuthors('stockett')).length, 2);
  // What a large import leaves noted: nearly every author (all but hers).
  await world.db.query(
    `insert into authors_to_resolve (kind, entity_id) select 'author', id from authors where name not ilike '%stockett%'`,
  );

  await importFile(world, 'goodbooks', files[0]!);
  t.deepEqual(
    (await liveAuthors('stockett')).map((author) => author.name_key),
    ['ol:OL1432857A'],
  );
  t.is(await noted(), 0);
});

import test from 'ava';
import { spawn } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createInterface } from 'node:readline';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { isDeepStrictEqual } from 'node:util';

import { importOpenLibrary } from '../loader/import/openlibrary/import.js';
import { bookDocuments } from '../loader/stores/elasticsearch/documents.js';
import type { OlMethod } from '../loader/import/openlibrary/options.js';
import { generateOpenLibrary } from '../scripts/dev/generate-openlibrary.js';
import { MAX_REDIRECT_HOPS } from '../src/domain/openlibrary.js';
import { createLogger } from '../src/log.js';
import { projectPath } from '../src/paths.js';
import { GOODBOOKS_300, importFile } from './helpers/catalogue.js';
import { createWorld, newKey, startTestServer, type TestWorld } from './helpers/env.js';
import { catalogueFingerprint, feedAsClientsRead, lastChange } from './helpers/openlibrary.js';
import { eventually } from './helpers/eventually.js';
import { runCli } from './helpers/processes.js';

const SAMPLE = [
  projectPath('data', 'openlibrary', 'ol_dump_authors_sample.txt'),
  projectPath('data', 'openlibrary', 'ol_dump_works_sample.txt'),
  projectPath('data', 'openlibrary', 'ol_dump_editions_sample.txt'),
];

const log = createLogger('silent');
let scratch: string;
test.before(async () => {
  scratch = await mkdtemp(join(tmpdir(), 'bookmeta-olfirst-'));
});
test.after.always(async () => {
  await rm(scratch, { recursive: true, force: true });
});

const load = (world: TestWorld, paths: string[], method: OlMethod, stageWorkers?: number) =>
  importOpenLibrary(paths, { db: world.db, cache: null, log }, { progress: false, method, batchSize: 500, stageWorkers });

async function sameCatalogue(
  t: import('ava').ExecutionContext,
  paths: string[],
  options: { prepare?: (world: TestWorld) => Promise<void>; stageWorkers?: number } = {},
): Promise<{ record: Record<string, unknown[]>; set: Record<string, unknown[]> }> {
  const { prepare, stageWorkers } = options;
  const byRecord = await createWorld();
  const bySet = await createWorld();
  try {
    await prepare?.(byRecord);
    await prepare?.(bySet);
    const [recordSince, setSince] = [await lastChange(byRecord.db), await lastChange(bySet.db)];
    await load(byRecord, paths, 'record-by-record');
    const reports = await load(bySet, paths, 'set-based', stageWorkers);
    t.true(reports.every((report) => report.imported > 0));
    const record = await catalogueFingerprint(byRecord.db);
    const set = await catalogueFingerprint(bySet.db);
    for (const table of Object.keys(record)) if (table !== 'bookUpdates') t.deepEqual(set[table], record[table], table);
    // The feeds as a client reads them: each entity's changes in the same order, every merge after its survivor.
    const [recordFeed, setFeed] = [await feedAsClientsRead(byRecord, recordSince), await feedAsClientsRead(bySet, setSince)];
    t.deepEqual(setFeed.byEntity, recordFeed.byEntity, 'the change feeds');
    t.deepEqual(setFeed.survivorsUnseen, [], 'merges into a survivor the set-based feed had not named');
    t.deepEqual(recordFeed.survivorsUnseen, [], 'merges into a survivor the record path feed had not named');
    return { record, set };
  } finally {
    await byRecord.destroy();
    await bySet.destroy();
  }
}

test('a set-based first load of generated dumps (redirects, deletes, broken lines, repeated ISBNs) makes the catalogue the record path makes', async (t) => {
  const { files } = await generateOpenLibrary({ editions: 3000, seed: 11 }, join(scratch, 'generated'));
  // Two editions sharing an ISBN, and the same key twice: the set-based path hands the first over and keeps the newest of the second.
  // Redirects and deletes of works and authors in a file of their own, before the editions naming them,
  // as the monthly dumps give them: the record path's result depends on that order (a redirect it meets
  // in the batch of an edition naming its key becomes a placeholder and a merge), a first load's does not.
  const extraWorks = join(scratch, 'extra-works.txt');
  await writeFile(
    extraWorks,
    [
      '/type/delete\t/works/OL777777777W\t3\t2024-01-01T00:00:00\t{}',
      '/type/redirect\t/works/OL666666661W\t2\t2024-01-01T00:00:00\t{"location": "/works/OL666666662W"}',
      '/type/redirect\t/authors/OL777777777A\t2\t2024-01-01T00:00:00\t{"location": "/authors/OL999999999A"}',
      '/type/redirect\t/works/OL666666662W\t2\t2024-01-01T00:00:00\t{"location": "/works/OL666666663W"}',
    ].join('\n'),
  );
  const extra = join(scratch, 'extra-editions.txt');
  const line = (key: string, revision: number, json: object) =>
    `/type/edition\t/books/${key}\t${revision}\t2024-01-01T00:00:00\t${JSON.stringify({ ...json, key: `/books/${key}` })}`;
  await writeFile(
    extra,
    [
      line('OL1M', 1, { title: 'Shared ISBN, first', isbn_13: ['9780306406157'], works: [{ key: '/works/OL10000001W' }] }),
      line('OL2M', 2, { title: 'Shared ISBN, second', isbn_10: ['0-306-40615-2'], publishers: ['Second Press'] }),
      line('OL3M', 1, { title: 'Older revision' }),
      line('OL3M', 4, { title: 'Newer revision', authors: [{ key: '/authors/OL999999999A' }] }),
      // A work no record gives (titled by the first edition naming it), one deleted, one behind a chain of redirects.
      line('OL5M', 1, {
        title: 'Placeholder first',
        works: [{ key: '/works/OL888888888W' }],
        authors: [{ key: '/authors/OL999999999A' }, { key: '/authors/OL777777777A' }],
      }),
      line('OL6M', 1, { title: 'Placeholder second', works: [{ key: '/works/OL888888888W' }] }),
      line('OL7M', 1, { title: 'Of a deleted work', works: [{ key: '/works/OL777777777W' }] }),
      line('OL8M', 1, { title: 'Behind redirects', works: [{ key: '/works/OL666666661W' }] }),
      'not a dump line',
      '/type/edition\t/books/OL4M\t1\t2024-01-01T00:00:00\t{"title": "nul \\u0000 and lone \\ud800 surrogate", "publishers": ["A\\u00a0B  C"]}',
    ].join('\n'),
  );
  // On worker threads, as a large dump is: their chunks must come back in file order.
  const { set } = await sameCatalogue(t, [files.authors, files.works, extraWorks, files.editions, extra, files.readingLog, files.ratings], {
    stageWorkers: 2,
  });
  t.true(set.keys!.some((row) => (row as { state: string }).state === 'redirect'));
  t.true(set.keys!.some((row) => (row as { state: string }).state === 'delete'));
});

test('a set-based first load of the real sample makes the catalogue the record path makes, with no update of the books it loads for their popularity', async (t) => {
  const { record, set } = await sameCatalogue(t, SAMPLE);
  t.true((record.bookUpdates![0] as { n: number }).n > 0);
  t.deepEqual(set.bookUpdates, [{ n: 0 }]);
});

test("the readers' samples imported with the real sample make the same shelves, stars, days and trending through either path", async (t) => {
  const readers = ['reading-log', 'ratings'].map((kind) => projectPath('data', 'openlibrary', `ol_dump_${kind}_sample.txt`));
  const { set } = await sameCatalogue(t, [...SAMPLE, ...readers]);
  t.true(set.workReaders!.length > 0 && set.readingLogDays!.length > 0 && set.trending!.length > 0);
});

test("an Open Library work titled as a study guide, a summary or a boxset is of that kind through either path, and so is its books' search document", async (t) => {
  const record = (type: string, key: string, json: object) =>
    `/type/${type}\t${key}\t1\t2024-01-01T00:00:00\t${JSON.stringify({ ...json, key })}`;
  const works = join(scratch, 'kinds-works.txt');
  const editions = join(scratch, 'kinds-editions.txt');
  await writeFile(
    works,
    [
      record('work', '/works/OL901W', { title: 'Hamlet' }),
      record('work', '/works/OL902W', { title: 'SparkNotes: Hamlet' }),
      // The subtitle decides as much as the title.
      record('work', '/works/OL903W', { title: 'Atomic Habits', subtitle: 'A Summary' }),
      record('work', '/works/OL904W', { title: 'The Hunger Games Box Set' }),
    ].join('\n'),
  );
  await writeFile(
    editions,
    [
      record('edition', '/books/OL901M', { title: 'Hamlet', works: [{ key: '/works/OL901W' }] }),
      // The work's own title decides, not its edition's.
      record('edition', '/books/OL902M', { title: 'Hamlet', works: [{ key: '/works/OL902W' }] }),
      record('edition', '/books/OL903M', { title: 'Atomic Habits', works: [{ key: '/works/OL903W' }] }),
      record('edition', '/books/OL904M', { title: 'The Hunger Games Box Set', works: [{ key: '/works/OL904W' }] }),
      // No record of its work: a placeholder as the edition describes it. No work at all: its own.
      record('edition', '/books/OL905M', { title: 'Dune', subtitle: 'A Study Guide', works: [{ key: '/works/OL905W' }] }),
      record('edition', '/books/OL906M', { title: 'Summary of Educated by Tara Westover' }),
    ].join('\n'),
  );
  const expected = {
    'ol-edition:OL906M': 'companion',
    'ol:OL901W': 'book',
    'ol:OL902W': 'companion',
    'ol:OL903W': 'companion',
    'ol:OL904W': 'boxset',
    'ol:OL905W': 'companion',
  };
  for (const method of ['record-by-record', 'set-based'] as const) {
    const world = await createWorld();
    try {
      await load(world, [works, editions], method);
      const { rows } = await world.db.query<{ work_key: string; kind: string; book_id: string }>(
        'select w.work_key, w.kind, public_id(b.id) as book_id from works w join books b on b.work_id = w.id order by 1',
      );
      t.deepEqual(Object.fromEntries(rows.map((row) => [row.work_key, row.kind])), expected, method);
      const documents = await bookDocuments(
        world.db,
        rows.map((row) => row.book_id),
        1,
      );
      const kindOf = new Map(documents.map((document) => [document.id, (JSON.parse(document.json) as { kind: string }).kind]));
      t.deepEqual(Object.fromEntries(rows.map((row) => [row.work_key, kindOf.get(row.book_id)])), expected, method);
    } finally {
      await world.destroy();
    }
  }
});

test("a set-based first load over another source's books hands the editions of their ISBNs to the record path", async (t) => {
  const { record } = await sameCatalogue(t, SAMPLE, {
    prepare: (world) => importFile(world, 'goodbooks', GOODBOOKS_300).then(() => undefined),
  });
  t.true(record.changes!.some((row) => (row as { operation: string }).operation === 'merge'));
});

test('a set-based import over a catalogue that holds Open Library records re-imports: it applies the new records', async (t) => {
  const world = await createWorld();
  try {
    await load(world, [SAMPLE[1]!], 'set-based');
    const [report] = await load(world, [SAMPLE[2]!], 'set-based');
    t.true(report!.inserted > 0);
  } finally {
    await world.destroy();
  }
});

// What a first load says as it ends each step (loader/import/openlibrary/firstLoad.ts), in order: its
// authors and works part, then its editions part. A kill right after one lands in the step after it:
// after the editions' "catalogue tables", in the change feed's append; after the last step, in the
// commit. Into an empty catalogue the tables are built aside: their indexes after the editions, and
// their swap into the live ones' place before the commit.
const stepsOfFirstLoad = (aside: boolean) => [
  'staging',
  ...['authors and works', 'editions'].flatMap((part) => [
    `${part}: newest revision of each key`,
    ...(part === 'editions' ? [`${part}: repeated ISBNs`, `${part}: redirects and placeholders`] : []),
    `${part}: catalogue tables`,
    `${part}: change feed`,
  ]),
  ...(aside ? ['indexes'] : []),
  'statistics',
  'record path',
  'work popularity',
  ...(aside ? ['swap'] : []),
];

const killedFirstLoad = test.macro(async (t, catalogue: 'empty' | 'with goodbooks') => {
  const { files } = await generateOpenLibrary({ editions: 1000, seed: 5 }, join(scratch, `killed-${catalogue}`));
  const order = [files.authors, files.works, files.editions];
  const args = ['import', 'openlibrary', '--method', 'set-based', ...order];
  const steps = stepsOfFirstLoad(catalogue === 'empty');
  const [appending, committing] = ['editions: catalogue tables', steps.at(-1)!];
  const clean = await createWorld();
  const killed = await createWorld();
  const server = await startTestServer(killed);
  try {
    if (catalogue === 'with goodbooks') for (const world of [clean, killed]) await importFile(world, 'goodbooks', GOODBOOKS_300);
    await load(clean, order, 'set-based');
    const loaded = await catalogueFingerprint(clean.db);
    const before = await catalogueFingerprint(killed.db);
    const { auth } = await newKey(killed);
    // Books not asked for before, so the answer comes from PostgreSQL rather than the response cache; none in an empty catalogue.
    const { rows: books } = await killed.db.query<{ id: string }>('select public_id(id) as id from books order by books.id limit 4');
    const expected = books.length > 0 ? 200 : 404;
    const bookAsked = (index: number) => books[index]?.id ?? `bk_00000000000${index}`;
    // Its sessions are named, so the test can wait until PostgreSQL has ended the killed load's work.
    const name = `killed-first-load-${killed.name}`;
    const endings: string[] = [];
    // The change feed's append and the commit every run, two other steps chosen at random: over runs, every step.
    const others = steps.filter((step) => step !== appending && step !== committing);
    const chosen = new Set([appending, committing]);
    while (chosen.size < 4) chosen.add(others[Math.floor(Math.random() * others.length)]!);
    for (const [index, step] of steps.filter((step) => chosen.has(step)).entries()) {
      const child = spawn(process.execPath, ['--import', 'tsx', projectPath('loader', 'cli.ts'), ...args], {
        env: { ...killed.env, PGAPPNAME: name },
        cwd: projectPath(),
        stdio: ['ignore', 'ignore', 'pipe'],
      });
      const exited = new Promise<NodeJS.Signals | null>((resolve) => child.on('exit', (_code, signal) => resolve(signal)));
      const said: string[] = [];
      // Bounded, so a load that never reaches the step fails with what it said instead of hanging the run.
      const reported = await new Promise<boolean>((resolve) => {
        createInterface({ input: child.stderr }).on('line', (line) => {
          said.push(line);
          if (line.startsWith(`openlibrary first load: ${step}`)) resolve(true);
        });
        void exited.then(() => resolve(false));
        setTimeout(() => resolve(false), 180_000).unref();
      });
      t.true(reported, `${step} not reported; the load said:\n${said.join('\n')}`);
      const answer = fetch(`${server.url}/v1/books/${bookAsked(index)}`, { headers: auth });
      // A moment of its own in the step that follows.
      await new Promise((resolve) => setTimeout(resolve, Math.random() * 20));
      t.is(child.exitCode, null, `${step}: the load had ended before the kill`);
      child.kill('SIGKILL');
      t.is(await exited, 'SIGKILL', `${step}: the kill ended a running load`);
      t.is((await answer).status, expected, `${step}: the API answers from the catalogue as it was during the load`);
      // A backend does not notice at once that its client is gone: wait until it has rolled back (or committed).
      t.true(
        await eventually(
          async () => (await killed.db.query('select 1 from pg_stat_activity where application_name = $1', [name])).rows.length === 0,
          30_000,
        ),
        `${step}: the killed load's sessions ended`,
      );
      const after = await catalogueFingerprint(killed.db);
      // What follows the commit (resolving the authors the load touched, popularity of the works as
      // resolved) is finished by the next import: a kill then finds every record in, not yet resolved.
      const ending = isDeepStrictEqual(after, before)
        ? 'as it was'
        : isDeepStrictEqual(after, loaded)
          ? 'loaded'
          : after.keys!.length === loaded.keys!.length
            ? 'committed, authors to resolve'
            : 'neither';
      endings.push(`${step}: ${ending}`);
      // A step is reported when it ends, and a loaded machine may read the line late: any kill may land
      // after the commit, never in a half-built catalogue.
      t.not(ending, 'neither', step);
      // A kill that landed after the commit leaves a catalogue that the next run re-imports instead of
      // loading it first: the steps after it are left to another run.
      if (ending !== 'as it was') break;
    }
    t.log(endings.join('; '));
    const rerun = await runCli(killed.env, args);
    t.is(rerun.code, 0, rerun.stderr);
    t.deepEqual(await catalogueFingerprint(killed.db), loaded);
  } finally {
    await server.stop();
    await clean.destroy();
    await killed.destroy();
  }
});

test(
  'kill -9 at any moment of a first load into an empty catalogue, built aside, leaves it empty or wholly loaded (its authors resolved by the next import at the latest), the API answering from it meanwhile, and a rerun loads it',
  killedFirstLoad,
  'empty',
);
test(
  "kill -9 at any moment of a first load beside another source's books leaves the catalogue as it was or wholly loaded (its authors resolved by the next import at the latest), the API answering from it meanwhile, and a rerun loads it",
  killedFirstLoad,
  'with goodbooks',
);

// The definitions of the catalogue's tables as PostgreSQL holds them: columns, constraints, indexes, triggers, dependants.
async function catalogueDefinitions(world: TestWorld): Promise<Record<string, unknown>[]> {
  const { rows } = await world.db.query<Record<string, unknown>>(
    `select c.relname, c.reloptions,
            (select array_agg(format('%s %s %s %s', a.attname, format_type(a.atttypid, a.atttypmod), a.attnotnull, pg_get_expr(d.adbin, d.adrelid)) order by a.attnum)
               from pg_attribute a left join pg_attrdef d on d.adrelid = a.attrelid and d.adnum = a.attnum
              where a.attrelid = c.oid and a.attnum > 0 and not a.attisdropped) as columns,
            (select array_agg(k.conname || ' ' || pg_get_constraintdef(k.oid) order by k.conname) from pg_constraint k where k.conrelid = c.oid) as constraints,
            (select array_agg(pg_get_indexdef(i.indexrelid) order by pg_get_indexdef(i.indexrelid)) from pg_index i where i.indrelid = c.oid) as indexes,
            (select array_agg(pg_get_triggerdef(g.oid) order by g.tgname) from pg_trigger g where g.tgrelid = c.oid and not g.tgisinternal) as triggers,
            (select array_agg(k.conrelid::regclass::text || ' ' || k.conname order by k.conname) from pg_constraint k where k.confrelid = c.oid) as referenced_by
       from pg_class c where c.relnamespace = 'public'::regnamespace and c.relkind = 'r' order by 1`,
  );
  return rows;
}

test('a first load into an empty catalogue leaves its tables, once swapped in, defined as the migrations made them', async (t) => {
  const world = await createWorld();
  try {
    const migrated = await catalogueDefinitions(world);
    await load(world, SAMPLE, 'set-based');
    t.true((await world.db.query('select 1 from books')).rows.length > 0);
    t.deepEqual(await catalogueDefinitions(world), migrated);
    t.deepEqual((await world.db.query("select 1 from pg_namespace where nspname = 'catalogue_aside'")).rows, []);
  } finally {
    await world.destroy();
  }
});

test('a first load into an empty catalogue that a view reads writes in place, and the view reads the loaded books', async (t) => {
  const world = await createWorld();
  try {
    // A view would go on naming the tables set aside's predecessors: the load does not swap under it.
    await world.db.query('create view titles as select id, title from books');
    await load(world, SAMPLE, 'set-based');
    const { rows } = await world.db.query<{ n: number }>('select count(*)::int as n from titles');
    t.true(rows[0]!.n > 0);
    t.is(rows[0]!.n, (await world.db.query<{ n: number }>('select count(*)::int as n from books')).rows[0]!.n);
  } finally {
    await world.destroy();
  }
});

test('either path follows a chain of redirects MAX_REDIRECT_HOPS long to its end, and a longer one only that far', async (t) => {
  const record = (type: string, key: string, json: object) =>
    `/type/${type}\t${key}\t1\t2024-01-01T00:00:00\t${JSON.stringify({ ...json, key })}`;
  // Keys 1 .. hops+1 of a chain, each redirected to the next.
  const chain = (path: 'works' | 'authors', suffix: string, first: number, hops: number) =>
    Array.from({ length: hops }, (_, at) =>
      record('redirect', `/${path}/OL${first + at}${suffix}`, { location: `/${path}/OL${first + at + 1}${suffix}` }),
    );
  const works = join(scratch, 'chain-works.txt');
  const editions = join(scratch, 'chain-editions.txt');
  await writeFile(
    works,
    [
      record('work', `/works/OL${5100 + MAX_REDIRECT_HOPS}W`, { title: 'At The End Of The Chain' }),
      ...chain('works', 'W', 5100, MAX_REDIRECT_HOPS),
      ...chain('works', 'W', 5200, MAX_REDIRECT_HOPS + 1),
      ...chain('authors', 'A', 5300, MAX_REDIRECT_HOPS + 1),
    ].join('\n'),
  );
  await writeFile(
    editions,
    [
      record('edition', '/books/OL5101M', { title: 'Behind The Chain', works: [{ key: '/works/OL5100W' }] }),
      record('edition', '/books/OL5201M', {
        title: 'Behind A Longer Chain',
        works: [{ key: '/works/OL5200W' }],
        authors: [{ key: '/authors/OL5300A' }],
      }),
    ].join('\n'),
  );
  const { set } = await sameCatalogue(t, [works, editions]);
  const workOf = (key: string) =>
    (set.books as { source_key: string; work: string }[]).find((book) => book.source_key === `openlibrary:${key}`)?.work;
  t.is(workOf('OL5101M'), `ol:OL${5100 + MAX_REDIRECT_HOPS}W`);
  t.is(workOf('OL5201M'), `ol:OL${5200 + MAX_REDIRECT_HOPS}W`);
  t.true((set.authors as { name_key: string }[]).some((author) => author.name_key === `ol:OL${5300 + MAX_REDIRECT_HOPS}A`));
});

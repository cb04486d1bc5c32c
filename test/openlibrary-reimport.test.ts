import test from 'ava';
import { spawn } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import type { ImportReport } from '../loader/import/importer.js';
import { importOpenLibrary } from '../loader/import/openlibrary/import.js';
import type { OlMethod } from '../loader/import/openlibrary/options.js';
import { generateOpenLibrary } from '../scripts/dev/generate-openlibrary.js';
import { createLogger } from '../src/log.js';
import { projectPath } from '../src/paths.js';
import { createWorld, type TestWorld } from './helpers/env.js';
import { catalogueFingerprint, changesAfter, lastChange } from './helpers/openlibrary.js';
import { runCli } from './helpers/processes.js';

const log = createLogger('silent');
let scratch: string;
// This month's dumps and next month's (5 % of the records revised, redirected or deleted, a few new), in import order.
let thisMonth: string[];
let nextMonth: string[];

const line = (key: string, revision: number, json: object) =>
  `/type/edition\t/books/${key}\t${revision}\t2024-07-01T00:00:00\t${JSON.stringify({ ...json, key: `/books/${key}` })}`;

test.before(async () => {
  scratch = await mkdtemp(join(tmpdir(), 'bookmeta-olreimport-'));
  const generated = async (dir: string, changed?: number) => {
    const { files } = await generateOpenLibrary({ editions: 2000, seed: 23, changed }, join(scratch, dir));
    return [files.authors, files.works, files.editions];
  };
  thisMonth = await generated('this');
  // Beside next month's dumps, a key twice (the newer line first, then an older one) and twice
  // again (older, then newer), and a new line that is broken, all in one batch.
  const extra = join(scratch, 'next-extra.txt');
  await writeFile(
    extra,
    [
      line('OL1M', 7, { title: 'Seventh revision' }),
      line('OL1M', 5, { title: 'Fifth revision' }),
      line('OL2M', 2, { title: 'Second revision', publishers: ['Older Press'] }),
      line('OL2M', 3, { title: 'Third revision', publishers: ['Newer Press'] }),
      '/type/edition\t/books/OL3M\t1\t2024-07-01T00:00:00\t{"title": "cut short',
    ].join('\n'),
  );
  nextMonth = [...(await generated('next', 0.05)), extra];
});
test.after.always(async () => {
  await rm(scratch, { recursive: true, force: true });
});

const load = (world: TestWorld, paths: string[], method: OlMethod) =>
  importOpenLibrary(paths, { db: world.db, cache: null, log }, { progress: false, method, batchSize: 200 });

/** What an operator reads in a report; rejections by line (the set-based path finds some while staging, the rest while applying). */
const counts = (reports: ImportReport[]) =>
  reports.map(({ source, read, imported, inserted, updated, unchanged, skipped, rejected, rejectedUnlisted }) => ({
    source,
    read,
    imported,
    inserted,
    updated,
    unchanged,
    skipped,
    rejected: [...rejected].sort((a, b) => a.line - b.line),
    rejectedUnlisted,
  }));

/** A world that has loaded this month's dumps. */
async function loaded(): Promise<TestWorld> {
  const world = await createWorld();
  await load(world, thisMonth, 'set-based');
  return world;
}

test('a re-import of the same dumps writes nothing, adds no change, and reports what the record path reports', async (t) => {
  const world = await loaded();
  try {
    const before = await catalogueFingerprint(world.db);
    const seq = await lastChange(world.db);
    const set = await load(world, thisMonth, 'set-based');
    t.is(await lastChange(world.db), seq);
    t.deepEqual(await catalogueFingerprint(world.db), before);
    t.true(set.every((report) => report.inserted === 0 && report.updated === 0 && report.unchanged > 0));
    t.true(set.some((report) => report.rejected.length > 0));
    const record = await load(world, thisMonth, 'record-by-record');
    t.deepEqual(counts(set), counts(record));
    t.is(await lastChange(world.db), seq);
  } finally {
    await world.destroy();
  }
});

test("a re-import of next month's dumps makes the catalogue, the changes and the report the record path makes", async (t) => {
  const byRecord = await loaded();
  const bySet = await loaded();
  try {
    const seqs = [await lastChange(byRecord.db), await lastChange(bySet.db)];
    const record = await load(byRecord, nextMonth, 'record-by-record');
    // `auto`, as an operator runs it: a re-import, the catalogue holding Open Library records.
    const set = await load(bySet, nextMonth, 'auto');
    t.deepEqual(counts(set), counts(record));
    const changes = await changesAfter(bySet.db, seqs[1]!);
    t.deepEqual(changes, await changesAfter(byRecord.db, seqs[0]!));
    for (const operation of ['insert', 'update', 'delete', 'merge'])
      t.true(
        changes.some((change) => (change as { operation: string }).operation === operation),
        operation,
      );
    const expected = await catalogueFingerprint(byRecord.db);
    const actual = await catalogueFingerprint(bySet.db);
    for (const table of Object.keys(expected)) t.deepEqual(actual[table], expected[table], table);
    const { rows } = await bySet.db.query(
      "select title, publisher from books where source_key in ('openlibrary:OL1M', 'openlibrary:OL2M') order by source_key",
    );
    t.deepEqual(rows, [
      { title: 'Seventh revision', publisher: null },
      { title: 'Third revision', publisher: 'Newer Press' },
    ]);
  } finally {
    await byRecord.destroy();
    await bySet.destroy();
  }
});

test('a key deleted or redirected one month and back the next is its own entity again, through a re-import as through the record path', async (t) => {
  const dump = async (name: string, lines: string[]) => {
    const path = join(scratch, name);
    await writeFile(path, `${lines.join('\n')}\n`);
    return path;
  };
  const record = (type: string, path: string, revision: number, json: object) =>
    `/type/${type}\t${path}\t${revision}\t2024-07-01T00:00:00\t${JSON.stringify({ ...json, key: path })}`;
  const months = [
    await dump('back-1.txt', [
      record('work', '/works/OL90001W', 1, { title: 'Merged work' }),
      record('work', '/works/OL90002W', 1, { title: 'Surviving work' }),
      record('edition', '/books/OL90001M', 1, { title: 'Deleted edition', works: [{ key: '/works/OL90001W' }] }),
    ]),
    await dump('back-2.txt', [
      record('delete', '/books/OL90001M', 2, {}),
      record('redirect', '/works/OL90001W', 2, { location: '/works/OL90002W' }),
    ]),
    await dump('back-3.txt', [
      record('edition', '/books/OL90001M', 3, { title: 'Deleted edition, back', works: [{ key: '/works/OL90001W' }] }),
      record('work', '/works/OL90001W', 3, { title: 'Merged work, back' }),
    ]),
  ];
  const byRecord = await createWorld();
  const bySet = await createWorld();
  try {
    for (const world of [byRecord, bySet]) await load(world, [months[0]!], 'set-based');
    for (const month of months.slice(1)) {
      await load(byRecord, [month], 'record-by-record');
      await load(bySet, [month], 'set-based');
    }
    const expected = await catalogueFingerprint(byRecord.db);
    const actual = await catalogueFingerprint(bySet.db);
    for (const table of Object.keys(expected)) t.deepEqual(actual[table], expected[table], table);
    const { rows: books } = await bySet.db.query(
      "select b.title, b.deleted_at is null as live, w.work_key from books b join works w on w.id = b.work_id where b.source_key = 'openlibrary:OL90001M'",
    );
    // The edition is back on its work's survivor: the merge stands.
    t.deepEqual(books, [{ title: 'Deleted edition, back', live: true, work_key: 'ol:OL90002W' }]);
    const { rows: works } = await bySet.db.query(
      "select title, merged_into is not null as merged from works where work_key = 'ol:OL90001W'",
    );
    t.deepEqual(works, [{ title: 'Merged work', merged: true }]);
  } finally {
    await byRecord.destroy();
    await bySet.destroy();
  }
});

test('kill -9 during a re-import, then a rerun, ends in the catalogue of one clean re-import', async (t) => {
  const clean = await loaded();
  const killed = await loaded();
  try {
    const cleanSeq = await lastChange(clean.db);
    await load(clean, nextMonth, 'set-based');
    const total = (await lastChange(clean.db)) - cleanSeq;
    const args = ['import', 'openlibrary', '--method', 'set-based', '--batch-size', '20', '--no-progress', ...nextMonth];
    const seq = await lastChange(killed.db);
    // While it stages (or, should the poll miss that, as its first batch commits).
    const staging = async () =>
      (await killed.db.query("select 1 from pg_stat_activity where datname = current_database() and query like 'copy ol_reimport %'")).rows
        .length > 0 || (await lastChange(killed.db)) > seq;
    // Killed early, then once a quarter of the changes are committed, then half.
    for (const until of [
      staging,
      async () => (await lastChange(killed.db)) - seq >= total / 4,
      async () => (await lastChange(killed.db)) - seq >= total / 2,
    ]) {
      const child = spawn(process.execPath, ['--import', 'tsx', projectPath('loader', 'cli.ts'), ...args], {
        env: killed.env,
        cwd: projectPath(),
        stdio: 'ignore',
      });
      const exited = new Promise((resolve) => child.on('exit', resolve));
      while (!(await until()) && child.exitCode === null) await new Promise((resolve) => setTimeout(resolve, 5));
      t.is(child.exitCode, null, 'killed before it finished');
      child.kill('SIGKILL');
      await exited;
    }
    const rerun = await runCli(killed.env, args);
    t.is(rerun.code, 0, rerun.stderr);
    const expected = await catalogueFingerprint(clean.db);
    const actual = await catalogueFingerprint(killed.db);
    for (const table of Object.keys(expected)) t.deepEqual(actual[table], expected[table], table);
  } finally {
    await clean.destroy();
    await killed.destroy();
  }
});

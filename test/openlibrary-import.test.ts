import test from 'ava';
import { spawn } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';

import { generateOpenLibrary } from '../scripts/dev/generate-openlibrary.js';
import { importOpenLibrary } from '../loader/import/openlibrary/import.js';
import { bookDocuments } from '../loader/stores/elasticsearch/documents.js';
import { projectPath } from '../src/paths.js';
import type { Pool } from '../src/stores/postgres/pool.js';
import { GOODBOOKS_300, importFile } from './helpers/catalogue.js';
import { createLogger } from '../src/log.js';
import { createWorld, type TestWorld } from './helpers/env.js';
import { runCli } from './helpers/processes.js';

const SAMPLE = {
  authors: projectPath('data', 'openlibrary', 'ol_dump_authors_sample.txt'),
  works: projectPath('data', 'openlibrary', 'ol_dump_works_sample.txt'),
  editions: projectPath('data', 'openlibrary', 'ol_dump_editions_sample.txt'),
};

const log = createLogger('silent');
let world: TestWorld;
let scratch: string;
test.before(async () => {
  world = await createWorld();
  scratch = await mkdtemp(join(tmpdir(), 'bookmeta-ol-'));
});
test.after.always(async () => {
  await world?.destroy();
  await rm(scratch, { recursive: true, force: true });
});

// The record path, also where a first load would go set-based (test/openlibrary-first-load.test.ts proves the two agree).
const load = (db: Pool, paths: string[], batchSize?: number) =>
  importOpenLibrary(paths, { db, cache: null, log }, { progress: false, batchSize, method: 'record-by-record' });
const lastSeq = async (db: Pool): Promise<number> =>
  (await db.query<{ seq: number }>('select coalesce(max(seq), 0)::bigint as seq from changes')).rows[0]!.seq;
const entityOf = async (db: Pool, key: string): Promise<string | null> =>
  (await db.query<{ entity_id: string | null }>('select public_id(entity_id) as entity_id from openlibrary_records where key = $1', [key]))
    .rows[0]?.entity_id ?? null;

async function dumpFile(name: string, lines: string[]): Promise<string> {
  const path = join(scratch, name);
  await writeFile(path, name.endsWith('.gz') ? gzipSync(`${lines.join('\n')}\n`) : `${lines.join('\n')}\n`);
  return path;
}
/** The runtime's own message for the JSON column of a line (its wording changes between Node versions). */
const jsonErrorOfLine = async (path: string, lineNumber: number): Promise<string> => {
  const json = (await readFile(path, 'utf8')).split('\n')[lineNumber - 1]!.split('\t')[4]!;
  try {
    JSON.parse(json);
  } catch (error) {
    return (error as Error).message;
  }
  throw new Error(`line ${lineNumber} of ${path} holds valid JSON`);
};
const line = (type: string, key: string, revision: number, json: object): string =>
  `${type}\t${key}\t${revision}\t2024-01-01T00:00:00\t${JSON.stringify({ ...json, key })}`;

/**
 * What the catalogue says, without our ids (a rerun mints other ones): every live book with its
 * identity, fields, work and authors as Open Library keys or names, every merge and deletion.
 */
async function catalogueContent(db: Pool): Promise<unknown> {
  const { rows: books } = await db.query(
    `select coalesce(b.isbn_13, b.source_key) as identity, b.title, b.year, b.publisher, b.pages, b.language, b.subjects, b.physical_format,
            w.work_key, w.title as work_title, (b.merged_into is not null) as merged, (b.deleted_at is not null) as deleted,
            (select array_agg(a.name order by ba.position) from book_authors ba join authors a on a.id = ba.author_id where ba.book_id = b.id) as authors
       from books b join works w on w.id = b.work_id order by 1`,
  );
  const { rows: works } = await db.query(
    `select w.work_key, w.title, w.subjects, w.description, (m.work_key) as merged_into, (w.deleted_at is not null) as deleted
       from works w left join works m on m.id = w.merged_into order by 1`,
  );
  const { rows: authors } = await db.query(
    `select a.name_key, a.name, a.bio, m.name_key as merged_into, (a.deleted_at is not null) as deleted
       from authors a left join authors m on m.id = a.merged_into order by 1`,
  );
  const { rows: keys } = await db.query('select key, revision, state, redirect_to, digest from openlibrary_records order by key');
  return { books, works, authors, keys };
}

test.serial('editions before their works and authors land, and are joined up when those records arrive', async (t) => {
  const reports = await load(world.db, [SAMPLE.editions, SAMPLE.works, SAMPLE.authors]);
  t.deepEqual(
    reports.map((report) => [report.source, report.read, report.imported, report.rejected.length]),
    [
      ['openlibrary ol_dump_editions_sample.txt', 18, 14, 4],
      ['openlibrary ol_dump_works_sample.txt', 11, 8, 3],
      ['openlibrary ol_dump_authors_sample.txt', 4999, 4999, 0],
    ],
  );
  t.deepEqual(reports[0]!.rejected, [
    { line: 15, reason: 'expected 5 tab-separated columns, found 4' },
    { line: 16, reason: `invalid JSON: ${await jsonErrorOfLine(SAMPLE.editions, 16)}` },
    { line: 17, reason: 'edition has no title' },
    { line: 18, reason: 'key "/books/ OL30043M" is not an Open Library author, work or edition key' },
  ]);
  const { rows } = await world.db.query(
    `select b.title, w.title as work_title, w.subjects, a.name
       from books b join works w on w.id = b.work_id join book_authors ba on ba.book_id = b.id join authors a on a.id = ba.author_id
      where b.source_key = 'openlibrary:OL30002M'`,
  );
  // The placeholder work and author (named by key) became the records that came after the edition.
  t.deepEqual(rows, [
    {
      title: "The innovator's dilemma",
      work_title: "The innovator's dilemma",
      subjects: ['Technological innovations', 'Management', 'Disruptive technologies'],
      name: 'Clayton M. Christensen',
    },
  ]);
});

test.serial('a second import of the same files changes nothing and records no change', async (t) => {
  const seq = await lastSeq(world.db);
  const reports = await load(world.db, [SAMPLE.works, SAMPLE.editions, SAMPLE.authors]);
  for (const report of reports) {
    t.is(report.inserted, 0);
    t.is(report.updated, 0);
    t.is(report.unchanged, report.imported);
  }
  t.is(await lastSeq(world.db), seq);
});

test.serial(
  'editions and their works: one ISBN is one book, a redirected work key lands on the survivor, an edition without a work has its own',
  async (t) => {
    const { rows: hunger } = await world.db.query<{ n: number }>("select count(*)::int as n from books where isbn_13 = '9780439023481'");
    t.is(hunger[0]!.n, 1);
    t.is(await entityOf(world.db, 'OL24224410M'), await entityOf(world.db, 'OL30012M'));
    const { rows: poetry } = await world.db.query<{ work_key: string }>(
      "select w.work_key from books b join works w on w.id = b.work_id where b.source_key in ('openlibrary:OL30004M', 'openlibrary:OL30005M')",
    );
    t.deepEqual(
      poetry.map((row) => row.work_key),
      ['ol:OL2010880W', 'ol:OL2010880W'],
    );
    const { rows: redirected } = await world.db.query<{ merged_into: string | null }>(
      "select public_id(merged_into) as merged_into from works where work_key = 'ol:OL2010890W'",
    );
    t.is(redirected[0]!.merged_into, await entityOf(world.db, 'OL2010880W'));
    const { rows: own } = await world.db.query<{ work_key: string }>(
      "select w.work_key from books b join works w on w.id = b.work_id where b.source_key = 'openlibrary:OL30010M'",
    );
    t.is(own[0]!.work_key, 'ol-edition:OL30010M');
    const { rows: invalid } = await world.db.query<{ isbn_13: string | null }>(
      "select isbn_13 from books where source_key = 'openlibrary:OL30011M'",
    );
    t.is(invalid[0]!.isbn_13, null);
  },
);

test.serial(
  "an Open Library edition of a goodbooks ISBN is that book, and Open Library's work takes over ours with a 301 for the old work",
  async (t) => {
    const other = await createWorld();
    try {
      await importFile(other, 'goodbooks', GOODBOOKS_300);
      const { rows: before } = await other.db.query<{ id: string; work_id: string; title: string }>(
        "select public_id(id) as id, public_id(work_id) as work_id, title from books where isbn_13 = '9780439023481'",
      );
      await importOpenLibrary([SAMPLE.editions, SAMPLE.works], { db: other.db, cache: null, log }, { progress: false });
      const { rows: after } = await other.db.query<{
        id: string;
        work_id: string;
        title: string;
        physical_format: string | null;
        subjects: string[];
      }>(
        "select public_id(id) as id, public_id(work_id) as work_id, title, physical_format, subjects from books where isbn_13 = '9780439023481'",
      );
      t.is(after.length, 1);
      t.is(after[0]!.id, before[0]!.id);
      // goodbooks owns the title; Open Library adds what only it knows.
      t.is(after[0]!.title, before[0]!.title);
      t.is(after[0]!.physical_format, 'Hardcover');
      t.deepEqual(after[0]!.subjects, ['Survival', 'Reality television programs']);
      const olWork = (await entityOf(other.db, 'OL5735363W'))!;
      t.is(after[0]!.work_id, olWork);
      const { rows: ours } = await other.db.query<{ merged_into: string | null }>(
        'select public_id(merged_into) as merged_into from works where id = entity_key($1)',
        [before[0]!.work_id],
      );
      t.is(ours[0]!.merged_into, olWork);
      const { rows: merge } = await other.db.query<{ n: number }>(
        "select count(*)::int as n from changes where entity = 'work' and operation = 'merge' and entity_id = entity_key($1)",
        [before[0]!.work_id],
      );
      t.is(merge[0]!.n, 1);
    } finally {
      await other.destroy();
    }
  },
);

test.serial('a newer revision changes only what changed; a newer revision with the same fields writes no change', async (t) => {
  const sameFields = line('/type/work', '/works/OL2010882W', 9, {
    title: 'Quicksands',
    authors: [{ type: '/type/author_role', author: { key: '/authors/OL1033157A' } }],
    subjects: ['Fiction'],
    first_publish_date: '1922',
  });
  const seq = await lastSeq(world.db);
  const [same] = await load(world.db, [await dumpFile('same.txt', [sameFields])]);
  t.like(same, { updated: 0, unchanged: 1 });
  t.is(await lastSeq(world.db), seq);
  const { rows: revision } = await world.db.query<{ revision: number }>(
    "select revision from openlibrary_records where key = 'OL2010882W'",
  );
  t.is(revision[0]!.revision, 9);

  const retitled = line('/type/edition', '/books/OL30008M', 7, {
    title: 'Quicksands: a novel',
    publishers: ['Grosset & Dunlap'],
    publish_date: '1922',
    works: [{ key: '/works/OL2010882W' }],
    authors: [{ key: '/authors/OL1033157A' }],
    number_of_pages: 310,
  });
  const older = line('/type/edition', '/books/OL30009M', 1, { title: 'Older revision must not win' });
  const [report] = await load(world.db, [await dumpFile('newer.txt.gz', [retitled, older])]);
  t.like(report, { updated: 1, unchanged: 1 });
  const { rows: changes } = await world.db.query('select entity, operation from changes where seq > $1', [seq]);
  t.deepEqual(changes, [{ entity: 'book', operation: 'update' }]);
  const { rows: sipahi } = await world.db.query<{ title: string }>("select title from books where source_key = 'openlibrary:OL30009M'");
  t.is(sipahi[0]!.title, 'Sipahi');
});

test.serial(
  "a newer revision that retitles a work as a study guide makes it and its books' search documents a companion, and records its books' changes",
  async (t) => {
    const edition = line('/type/edition', '/books/OL30090M', 1, { title: 'Dune', works: [{ key: '/works/OL30090W' }] });
    await load(world.db, [await dumpFile('kind-first.txt', [line('/type/work', '/works/OL30090W', 1, { title: 'Dune' }), edition])]);
    const { rows: before } = await world.db.query<{ kind: string; book_id: string }>(
      "select w.kind, public_id(b.id) as book_id from works w join books b on b.work_id = w.id where w.work_key = 'ol:OL30090W'",
    );
    t.deepEqual(
      before.map((row) => row.kind),
      ['book'],
    );
    const seq = await lastSeq(world.db);
    const [report] = await load(world.db, [
      await dumpFile('kind-retitled.txt', [line('/type/work', '/works/OL30090W', 2, { title: 'Dune', subtitle: "A Reader's Guide" })]),
    ]);
    t.like(report, { updated: 1 });
    const { rows: after } = await world.db.query<{ kind: string }>("select kind from works where work_key = 'ol:OL30090W'");
    t.is(after[0]!.kind, 'companion');
    const { rows: changes } = await world.db.query<{ entity: string; entity_id: string; operation: string }>(
      'select entity, public_id(entity_id) as entity_id, operation from changes where seq > $1 order by seq',
      [seq],
    );
    t.deepEqual(
      changes.filter((change) => change.entity === 'book'),
      [{ entity: 'book', entity_id: before[0]!.book_id, operation: 'update' }],
    );
    const [document] = await bookDocuments(world.db, [before[0]!.book_id], 1);
    t.is((JSON.parse(document!.json) as { kind: string }).kind, 'companion');
  },
);

test.serial('text with tabs, backslashes, line breaks and quotes arrives as written', async (t) => {
  const description = 'Line one\twith a tab,\na back\\slash and "quotes"\r\nend';
  const [report] = await load(world.db, [
    await dumpFile('escapes.txt', [
      line('/type/edition', '/books/OL30050M', 1, {
        title: 'Back\\slash "quoted" title',
        description,
        subjects: ['a "quoted" subject', 'back\\slash, comma', '{braces}'],
        publishers: ['Tab\tPress'],
      }),
      line('/type/author', '/authors/OL30050A', 1, {
        name: 'Escaped Author',
        alternate_names: ['Ann "Quoted" Author', 'Back\\slash'],
        bio: { type: '/type/text', value: 'Tab\there' },
      }),
    ]),
  ]);
  t.is(report!.rejected.length, 0);
  const { rows: books } = await world.db.query(
    "select title, description, subjects, publisher from books where source_key = 'openlibrary:OL30050M'",
  );
  t.deepEqual(books, [
    {
      title: 'Back\\slash "quoted" title',
      description: 'Line one\twith a tab,\na back\\slash and "quotes"\nend',
      subjects: ['a "quoted" subject', 'back\\slash, comma', '{braces}'],
      publisher: 'Tab Press',
    },
  ]);
  const { rows: authors } = await world.db.query("select name, alternate_names, bio from authors where name_key = 'ol:OL30050A'");
  t.deepEqual(authors, [{ name: 'Escaped Author', alternate_names: ['Ann "Quoted" Author', 'Back\\slash'], bio: 'Tab\there' }]);
});

test.serial('redirects merge through the merge machinery, whichever of the two keys comes first', async (t) => {
  const [report] = await load(world.db, [
    await dumpFile('redirects.txt', [
      line('/type/redirect', '/books/OL30008M', 8, { location: '/books/OL30040M' }),
      line('/type/edition', '/books/OL30040M', 1, {
        title: 'Quicksands',
        publishers: ['Hodder'],
        publish_date: '1923',
        works: [{ key: '/works/OL2010882W' }],
      }),
      line('/type/redirect', '/authors/OL10221255A', 9, { location: '/authors/OL101176A' }),
    ]),
  ]);
  t.is(report!.rejected.length, 0);
  const from = (await entityOf(world.db, 'OL30008M'))!;
  const { rows } = await world.db.query<{ merged_into: string | null }>(
    'select public_id(merged_into) as merged_into from books where id = entity_key($1)',
    [from],
  );
  t.is(rows[0]!.merged_into, await entityOf(world.db, 'OL30040M'));
  const { rows: author } = await world.db.query<{ merged_into: string | null }>(
    'select public_id(merged_into) as merged_into from authors where id = entity_key($1)',
    [await entityOf(world.db, 'OL10221255A')],
  );
  t.is(author[0]!.merged_into, await entityOf(world.db, 'OL101176A'));
  const { rows: changes } = await world.db.query<{ n: number }>(
    "select count(*)::int as n from changes where operation = 'merge' and entity_id = entity_key($1)",
    [from],
  );
  t.is(changes[0]!.n, 1);
});

test.serial('a delete removes what Open Library alone knew and keeps a book another source knows', async (t) => {
  const seq = await lastSeq(world.db);
  await load(world.db, [
    await dumpFile('deletes.txt', [
      line('/type/delete', '/books/OL30010M', 5, {}),
      line('/type/delete', '/books/OL30012M', 5, {}),
      line('/type/delete', '/works/OL2010883W', 9, {}),
    ]),
  ]);
  const { rows } = await world.db.query(
    "select source_key, deleted_at is not null as deleted from books where source_key = 'openlibrary:OL30010M' or isbn_13 = '9780439023481' order by 1",
  );
  // OL30012M is a second key of the book OL24224410M made: that book stays.
  t.deepEqual(rows, [
    { source_key: 'openlibrary:OL24224410M', deleted: false },
    { source_key: 'openlibrary:OL30010M', deleted: true },
  ]);
  const { rows: changes } = await world.db.query('select entity, operation from changes where seq > $1 order by seq', [seq]);
  t.deepEqual(changes, [
    { entity: 'book', operation: 'delete' },
    { entity: 'work', operation: 'delete' },
  ]);
  // An older record of a deleted key is skipped, not resurrected.
  await load(world.db, [await dumpFile('older.txt', [line('/type/edition', '/books/OL30010M', 2, { title: 'Selected poems' })])]);
  const { rows: still } = await world.db.query<{ deleted: boolean }>(
    "select deleted_at is not null as deleted from books where source_key = 'openlibrary:OL30010M'",
  );
  t.true(still[0]!.deleted);
});

const idsOf = async (db: Pool, sql: string, values: unknown[]): Promise<string[]> =>
  (await db.query<{ id: string }>(sql, values)).rows.map((row) => row.id);

test.serial('a deleted edition that comes back in a newer revision is the same book again, not a second one', async (t) => {
  await load(world.db, [
    await dumpFile('revive-1.txt', [
      line('/type/edition', '/books/OL30060M', 1, { title: 'Without an ISBN' }),
      line('/type/edition', '/books/OL30061M', 1, { title: 'With an ISBN', isbn_13: ['9780306406157'] }),
    ]),
  ]);
  const before = await idsOf(
    world.db,
    "select public_id(id) as id from books where source_key in ('openlibrary:OL30060M', 'openlibrary:OL30061M') order by source_key",
    [],
  );
  await load(world.db, [
    await dumpFile('revive-2.txt', [line('/type/delete', '/books/OL30060M', 2, {}), line('/type/delete', '/books/OL30061M', 2, {})]),
  ]);
  const seq = await lastSeq(world.db);
  const [report] = await load(world.db, [
    await dumpFile('revive-3.txt', [
      line('/type/edition', '/books/OL30060M', 3, { title: 'Without an ISBN, revised' }),
      line('/type/edition', '/books/OL30061M', 3, { title: 'With an ISBN, revised', isbn_13: ['9780306406157'] }),
    ]),
  ]);
  const { rows } = await world.db.query(
    "select public_id(id) as id, title, deleted_at is not null as deleted from books where source_key in ('openlibrary:OL30060M', 'openlibrary:OL30061M') order by source_key",
  );
  t.deepEqual(rows, [
    { id: before[0], title: 'Without an ISBN, revised', deleted: false },
    { id: before[1], title: 'With an ISBN, revised', deleted: false },
  ]);
  t.like(report, { inserted: 0, updated: 2 });
  t.deepEqual([await entityOf(world.db, 'OL30060M'), await entityOf(world.db, 'OL30061M')], before);
  const { rows: changes } = await world.db.query(
    'select entity, public_id(entity_id) as id, operation from changes where seq > $1 order by seq',
    [seq],
  );
  t.deepEqual(
    changes,
    before.map((id) => ({ entity: 'book', id, operation: 'update' })),
  );
});

test.serial('a deleted work or author that comes back in a newer revision is the same one again', async (t) => {
  await load(world.db, [
    await dumpFile('revive-keyed-1.txt', [
      line('/type/work', '/works/OL30060W', 1, { title: 'A work' }),
      line('/type/author', '/authors/OL30060A', 1, { name: 'An Author' }),
    ]),
  ]);
  const work = (await entityOf(world.db, 'OL30060W'))!;
  const author = (await entityOf(world.db, 'OL30060A'))!;
  await load(world.db, [
    await dumpFile('revive-keyed-2.txt', [
      line('/type/delete', '/works/OL30060W', 2, {}),
      line('/type/delete', '/authors/OL30060A', 2, {}),
    ]),
  ]);
  await load(world.db, [
    await dumpFile('revive-keyed-3.txt', [
      line('/type/work', '/works/OL30060W', 3, { title: 'A work, back' }),
      line('/type/author', '/authors/OL30060A', 3, { name: 'An Author, back' }),
    ]),
  ]);
  const { rows: works } = await world.db.query(
    "select public_id(id) as id, title, deleted_at is not null as deleted from works where work_key = 'ol:OL30060W'",
  );
  t.deepEqual(works, [{ id: work, title: 'A work, back', deleted: false }]);
  const { rows: authors } = await world.db.query(
    "select public_id(id) as id, name, deleted_at is not null as deleted from authors where name_key = 'ol:OL30060A'",
  );
  t.deepEqual(authors, [{ id: author, name: 'An Author, back', deleted: false }]);
});

test.serial(
  'a redirected key that gets a record again stays the redirect it was merged into: no second book, work or author of that key',
  async (t) => {
    await load(world.db, [
      await dumpFile('unredirect-1.txt', [
        line('/type/edition', '/books/OL30070M', 1, { title: 'Merged edition' }),
        line('/type/edition', '/books/OL30071M', 1, { title: 'Surviving edition' }),
        line('/type/work', '/works/OL30070W', 1, { title: 'Merged work' }),
        line('/type/work', '/works/OL30071W', 1, { title: 'Surviving work' }),
        line('/type/author', '/authors/OL30070A', 1, { name: 'Merged Author' }),
        line('/type/author', '/authors/OL30071A', 1, { name: 'Surviving Author' }),
      ]),
    ]);
    await load(world.db, [
      await dumpFile('unredirect-2.txt', [
        line('/type/redirect', '/books/OL30070M', 2, { location: '/books/OL30071M' }),
        line('/type/redirect', '/works/OL30070W', 2, { location: '/works/OL30071W' }),
        line('/type/redirect', '/authors/OL30070A', 2, { location: '/authors/OL30071A' }),
      ]),
    ]);
    const seq = await lastSeq(world.db);
    const [report] = await load(world.db, [
      await dumpFile('unredirect-3.txt', [
        line('/type/edition', '/books/OL30070M', 3, { title: 'Merged edition, back' }),
        line('/type/work', '/works/OL30070W', 3, { title: 'Merged work, back' }),
        line('/type/author', '/authors/OL30070A', 3, { name: 'Merged Author, back' }),
      ]),
    ]);
    for (const [table, identity, prefix, kind] of [
      ['books', 'source_key', 'openlibrary:', 'M'],
      ['works', 'work_key', 'ol:', 'W'],
      ['authors', 'name_key', 'ol:', 'A'],
    ] as const) {
      const { rows } = await world.db.query(
        `select public_id(id) as id, public_id(merged_into) as merged_into, deleted_at from ${table} where ${identity} = $1`,
        [`${prefix}OL30070${kind}`],
      );
      t.deepEqual(
        rows,
        [{ id: await entityOf(world.db, `OL30070${kind}`), merged_into: await entityOf(world.db, `OL30071${kind}`), deleted_at: null }],
        table,
      );
    }
    t.like(report, { inserted: 0, updated: 0, unchanged: 3 });
    t.is(await lastSeq(world.db), seq);
  },
);

test.serial(
  'a redirected key whose merge still waits for its target is its own again when it gets a record, and is not merged later',
  async (t) => {
    await load(world.db, [await dumpFile('waiting-1.txt', [line('/type/work', '/works/OL30080W', 1, { title: 'Waiting work' })])]);
    const work = (await entityOf(world.db, 'OL30080W'))!;
    // Its target has no record yet: the merge waits for one.
    await load(world.db, [
      await dumpFile('waiting-redirect.txt', [line('/type/redirect', '/works/OL30080W', 2, { location: '/works/OL30081W' })]),
    ]);
    await load(world.db, [await dumpFile('waiting-2.txt', [line('/type/work', '/works/OL30080W', 3, { title: 'Waiting work, back' })])]);
    await load(world.db, [await dumpFile('waiting-3.txt', [line('/type/work', '/works/OL30081W', 1, { title: 'Target work' })])]);
    const { rows } = await world.db.query(
      "select public_id(id) as id, title, public_id(merged_into) as merged_into from works where work_key = 'ol:OL30080W'",
    );
    t.deepEqual(rows, [{ id: work, title: 'Waiting work, back', merged_into: null }]);
  },
);

test.serial('the database refuses to point an Open Library key that has an entity at another one', async (t) => {
  const book = await entityOf(world.db, 'OL30060M');
  await t.throwsAsync(world.db.query("update openlibrary_records set entity_id = entity_key('bk_0000000000zz') where key = 'OL30060M'"), {
    message: /OL30060M/,
  });
  t.is(await entityOf(world.db, 'OL30060M'), book);
});

test.serial('kill -9 at any moment and a rerun end in the same catalogue as one clean run', async (t) => {
  const dir = join(scratch, 'generated');
  const { files } = await generateOpenLibrary({ editions: 3000, seed: 5 }, dir);
  const order = [files.editions, files.authors, files.works];
  const clean = await createWorld();
  const killed = await createWorld();
  try {
    await importOpenLibrary(order, { db: clean.db, cache: null, log }, { progress: false, batchSize: 250, method: 'record-by-record' });
    const { rows: counted } = await clean.db.query<{ n: number }>('select count(*)::int as n from openlibrary_records');
    const total = counted[0]!.n;
    // Early, midway and late, each at a moment of its own: once that share of the records is committed.
    for (const share of [0.05, 0.35, 0.65].map((from) => from + Math.random() * 0.25)) {
      const after = Math.round(share * total);
      // A real process, killed once `after` records are committed.
      const child = spawn(
        process.execPath,
        [
          '--import',
          'tsx',
          projectPath('loader', 'cli.ts'),
          'import',
          'openlibrary',
          '--method',
          'record-by-record',
          '--batch-size',
          '250',
          '--no-progress',
          ...order,
        ],
        {
          env: killed.env,
          cwd: projectPath(),
          stdio: 'ignore',
        },
      );
      const exited = new Promise<NodeJS.Signals | null>((resolve) => child.on('exit', (_code, signal) => resolve(signal)));
      for (;;) {
        const { rows } = await killed.db.query<{ n: number }>('select count(*)::int as n from openlibrary_records');
        if (rows[0]!.n >= after || child.exitCode !== null) break;
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
      t.is(child.exitCode, null, `the import had ended before ${after} of ${total} records were committed`);
      child.kill('SIGKILL');
      t.is(await exited, 'SIGKILL', `killed after ${after} of ${total} records: the import was still running`);
    }
    const rerun = await runCli(killed.env, [
      'import',
      'openlibrary',
      '--method',
      'record-by-record',
      '--batch-size',
      '250',
      '--no-progress',
      ...order,
    ]);
    t.is(rerun.code, 0, rerun.stderr);
    t.deepEqual(await catalogueContent(killed.db), await catalogueContent(clean.db));
  } finally {
    await clean.destroy();
    await killed.destroy();
  }
});

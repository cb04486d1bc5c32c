import test from 'ava';
import { readFileSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';

import { generateOpenLibrary } from '../scripts/dev/generate-openlibrary.js';
import { importOpenLibrary } from '../loader/import/openlibrary/import.js';
import { parseReaderLine, readerDumpKind } from '../loader/import/openlibrary/readerDumps.js';
import { reindex } from '../loader/index/reindex.js';
import { syncOnce } from '../loader/index/sync.js';
import { deriveWorkPopularity, POPULARITY_PER_EDITION, POPULARITY_PER_READER } from '../loader/stores/postgres/readerSignals.js';
import { createLogger } from '../src/log.js';
import { projectPath } from '../src/paths.js';
import { searchBooks } from '../src/stores/elasticsearch/search.js';
import type { Pool } from '../src/stores/postgres/pool.js';
import { createWorld, type TestWorld } from './helpers/env.js';
import { loaderDeps, type TestLoaderDeps } from './helpers/indexing.js';

const sample = (name: string) => projectPath('data', 'openlibrary', `ol_dump_${name}_sample.txt`);
const log = createLogger('silent');
let world: TestWorld;
let deps: TestLoaderDeps;
let scratch: string;
test.before(async () => {
  world = await createWorld();
  deps = loaderDeps(world);
  scratch = await mkdtemp(join(tmpdir(), 'bookmeta-readers-'));
});
test.after.always(async () => {
  await deps?.close();
  await world?.destroy();
  await rm(scratch, { recursive: true, force: true });
});

const load = (db: Pool, paths: string[]) => importOpenLibrary(paths, { db, cache: null, log }, { progress: false });
const lastSeq = async (db: Pool): Promise<number> =>
  (await db.query<{ seq: number }>('select coalesce(max(seq), 0)::bigint as seq from changes')).rows[0]!.seq;
interface ReaderCounts {
  work_key: string;
  want_to_read: number;
  currently_reading: number;
  already_read: number;
  ratings: number;
  rating_sum: number;
}
const countsOf = async (db: Pool) =>
  (
    await db.query<ReaderCounts>(
      'select work_key, want_to_read, currently_reading, already_read, ratings, rating_sum from openlibrary_reader_counts order by work_key',
    )
  ).rows;
const popularityOf = async (db: Pool, workKey: string): Promise<number | null> =>
  (
    await db.query<{ popularity: number }>(
      `select p.popularity from openlibrary_records k join work_popularity p on p.work_id = k.entity_id where k.key = $1`,
      [workKey],
    )
  ).rows[0]?.popularity ?? null;

async function dumpFile(name: string, lines: string[]): Promise<string> {
  const path = join(scratch, name);
  await writeFile(path, name.endsWith('.gz') ? gzipSync(`${lines.join('\n')}\n`) : `${lines.join('\n')}\n`);
  return path;
}

test("a readers' dump line is read as Open Library writes it, older shapes included, and a bad one says why", (t) => {
  t.deepEqual(parseReaderLine('reading-log', '/works/OL45804W\t\\N\tAlready Read\t2021-08-11'), {
    workKey: 'OL45804W',
    field: 'alreadyRead',
    rating: 0,
    day: '2021-08-11',
  });
  t.deepEqual(parseReaderLine('reading-log', '/works/OL45804W\t/books/OL7353617M\tWant to Read\t2021-08-11 00:00:00\r'), {
    workKey: 'OL45804W',
    field: 'wantToRead',
    rating: 0,
    day: '2021-08-11',
  });
  t.deepEqual(parseReaderLine('ratings', 'OL45804W\tOL7353617M\t4\t2021-08-11'), {
    workKey: 'OL45804W',
    field: 'ratings',
    rating: 4,
    day: '2021-08-11',
  });
  t.deepEqual(parseReaderLine('ratings', '/works/OL45804W\t\t5\t2021-08-11'), {
    workKey: 'OL45804W',
    field: 'ratings',
    rating: 5,
    day: '2021-08-11',
  });
  t.is(parseReaderLine('ratings', 'work_key\tedition_key\trating\tdate'), null);
  t.is(parseReaderLine('reading-log', ''), null);
  t.deepEqual(parseReaderLine('reading-log', '/works/OL45804W\t\\N\tRead\t2021-08-11'), {
    rejected: 'unknown shelf "Read" (Want to Read, Currently Reading or Already Read)',
  });
  t.deepEqual(parseReaderLine('ratings', '/works/OL45804W\t\\N\t6\t2021-08-11'), { rejected: 'invalid rating "6" (1 to 5)' });
  t.deepEqual(parseReaderLine('ratings', '/books/OL1M\t\\N\t3\t2021-08-11'), { rejected: 'invalid work key "/books/OL1M"' });
  t.deepEqual(parseReaderLine('ratings', '/works/OL1W\t3\t2021-08-11'), { rejected: 'expected 4 tab-separated columns, got 3' });
  // A date PostgreSQL cannot read is the line's rejection, never the import's failure.
  t.deepEqual(parseReaderLine('reading-log', '/works/OL1W\t\\N\tWant to Read\t2023-02-30'), { rejected: 'invalid date "2023-02-30"' });
  t.deepEqual(parseReaderLine('ratings', '/works/OL1W\t\\N\t4\t0000-01-01'), { rejected: 'invalid date "0000-01-01"' });
  // The kind: from the published file name, else from the first line.
  t.is(readerDumpKind('/d/ol_dump_reading-log_2024-06-30.txt.gz', ''), 'reading-log');
  t.is(readerDumpKind('/d/ol_dump_ratings_latest.txt.gz', ''), 'ratings');
  t.is(readerDumpKind('/d/shelves.tsv', '/works/OL1W\t\\N\tWant to Read\t2024-01-01'), 'reading-log');
  t.is(readerDumpKind('/d/stars.tsv', '/works/OL1W\t\\N\t4\t2024-01-01'), 'ratings');
  t.is(readerDumpKind('/d/ol_dump_editions.txt', '/type/edition\t/books/OL1M\t1\t2024-01-01\t{}'), null);
});

test.serial(
  'the sample reading-log and ratings dumps import into counts per work, rejecting bad lines by number, and make popularity',
  async (t) => {
    await load(world.db, [sample('authors'), sample('works'), sample('editions')]);
    const reports = await load(world.db, [sample('reading-log'), sample('ratings')]);
    t.deepEqual(
      reports.map((report) => [report.source, report.read, report.imported, report.rejected]),
      [
        [
          'openlibrary ol_dump_reading-log_sample.txt',
          23,
          19,
          [
            { line: 8, reason: 'unknown shelf "Read Later" (Want to Read, Currently Reading or Already Read)' },
            { line: 13, reason: 'invalid work key "/authors/OL1394359A"' },
            { line: 16, reason: 'expected 4 tab-separated columns, got 3' },
            { line: 23, reason: 'invalid date "yesterday"' },
          ],
        ],
        [
          'openlibrary ol_dump_ratings_sample.txt',
          13,
          10,
          [
            { line: 5, reason: 'invalid rating "0" (1 to 5)' },
            { line: 9, reason: 'invalid rating "4.5" (1 to 5)' },
            { line: 13, reason: 'invalid edition key "/books/OL 30008M"' },
          ],
        ],
      ],
    );
    t.deepEqual(
      reports.map((report) => [report.inserted, report.updated, report.unchanged]),
      [
        [6, 0, 0],
        [0, 4, 0], // works the reading log counted already: their ratings change
      ],
    );
    t.deepEqual(await countsOf(world.db), [
      { work_key: 'OL2010879W', want_to_read: 2, currently_reading: 0, already_read: 2, ratings: 2, rating_sum: 9 },
      { work_key: 'OL2010880W', want_to_read: 0, currently_reading: 1, already_read: 0, ratings: 1, rating_sum: 3 },
      { work_key: 'OL2010881W', want_to_read: 1, currently_reading: 0, already_read: 0, ratings: 1, rating_sum: 2 },
      { work_key: 'OL2010890W', want_to_read: 1, currently_reading: 0, already_read: 1, ratings: 0, rating_sum: 0 },
      { work_key: 'OL5735363W', want_to_read: 5, currently_reading: 1, already_read: 4, ratings: 6, rating_sum: 26 },
      { work_key: 'OL99999999W', want_to_read: 1, currently_reading: 0, already_read: 0, ratings: 0, rating_sum: 0 },
    ]);
    // Readers, and editions past the first; a redirected work's readers count for the work it was merged into.
    const editions = async (workKey: string) =>
      (
        await world.db.query<{ n: number }>(
          `select count(*)::int as n from books b join openlibrary_records k on k.entity_id = b.work_id where k.key = $1 and b.merged_into is null and b.deleted_at is null`,
          [workKey],
        )
      ).rows[0]!.n;
    t.is(
      await popularityOf(world.db, 'OL5735363W'),
      POPULARITY_PER_READER * 16 + POPULARITY_PER_EDITION * ((await editions('OL5735363W')) - 1),
    );
    t.is(
      await popularityOf(world.db, 'OL2010880W'),
      POPULARITY_PER_READER * (2 + 2) + POPULARITY_PER_EDITION * ((await editions('OL2010880W')) - 1),
    );
  },
);

test.serial("importing the same readers' dumps again changes nothing and records no change", async (t) => {
  const before = { counts: await countsOf(world.db), seq: await lastSeq(world.db) };
  const reports = await load(world.db, [sample('reading-log'), sample('ratings')]);
  t.deepEqual(
    reports.map((report) => [report.inserted, report.updated, report.unchanged]),
    [
      [0, 0, 6],
      [0, 0, 4],
    ],
  );
  t.deepEqual(await countsOf(world.db), before.counts);
  t.is(await lastSeq(world.db), before.seq);
});

test.serial(
  'a newer dump replaces the counts of its kind, gzipped or not, and its popularity reaches the index through sync',
  async (t) => {
    const title = 'Poems';
    const work = (n: number, author: string) =>
      `/type/work\t/works/OL77${n}W\t1\t2024-01-01T00:00:00\t${JSON.stringify({ key: `/works/OL77${n}W`, title, authors: [{ author: { key: author } }] })}`;
    const edition = (n: number) =>
      `/type/edition\t/books/OL77${n}M\t1\t2024-01-01T00:00:00\t${JSON.stringify({ key: `/books/OL77${n}M`, title, works: [{ key: `/works/OL77${n}W` }] })}`;
    const author = (n: number, name: string) =>
      `/type/author\t/authors/OL77${n}A\t1\t2024-01-01T00:00:00\t${JSON.stringify({ key: `/authors/OL77${n}A`, name })}`;
    await load(world.db, [
      await dumpFile('poems.txt', [
        author(1, 'Ada Quill'),
        author(2, 'Bo Verse'),
        work(1, '/authors/OL771A'),
        work(2, '/authors/OL772A'),
        edition(1),
        edition(2),
      ]),
    ]);
    await reindex(deps, 'all', { progress: false });
    const shelf = (n: number, times: number) =>
      Array.from({ length: times }, (_, i) => `/works/OL77${n}W\t\\N\tAlready Read\t2024-0${1 + (i % 9)}-01`);
    const first = async (): Promise<string> => {
      await syncOnce(deps, { refresh: true });
      const page = await searchBooks(deps.es, deps.aliases.books, {
        text: title,
        isbn13s: [],
        authorId: null,
        language: null,
        yearFrom: null,
        yearTo: null,
        phrases: [],
        fields: [],
        requiredIsbn13s: [],
        excluded: [],
        subjectKey: null,
        publisher: null,
        facets: [],
        facetLimit: 10,
        everyEdition: false,
        sort: 'relevance',
        offset: 0,
        limit: 2,
      });
      const { rows } = await world.db.query<{ key: string }>(
        `select k.key from openlibrary_records k join books b on b.work_id = k.entity_id where b.id = entity_key($1) and k.key like 'OL%W'`,
        [page.hits[0]!.id],
      );
      return rows[0]!.key;
    };

    const since = await lastSeq(world.db);
    await load(world.db, [await dumpFile('ol_dump_reading-log_2024-05-31.txt', shelf(2, 30))]);
    t.true((await lastSeq(world.db)) > since, 'the popularity change is in the feed');
    t.is(await first(), 'OL772W');

    // The next month's dump: the other work is read now. The earlier readers' counts are replaced, not added to.
    const [report] = await load(world.db, [await dumpFile('ol_dump_reading-log_2024-06-30.txt.gz', shelf(1, 40))]);
    t.deepEqual([report!.inserted, report!.updated], [1, 1]); // OL771W new; OL772W dropped to zero
    t.is(await popularityOf(world.db, 'OL772W'), null);
    t.is(await popularityOf(world.db, 'OL771W'), POPULARITY_PER_READER * 40);
    t.is(await first(), 'OL771W');
  },
);

test.serial('the works whose readers changed are handed on once committed, a page at a time, each once', async (t) => {
  // One more reader for every work key counted: every work it names has new readers.
  await world.db.query('update openlibrary_reader_counts set want_to_read = want_to_read + 1');
  const pages: (readonly string[])[] = [];
  const outcome = await deriveWorkPopularity(world.db, {
    pageSize: 2,
    readersChanged: async (works) => {
      // Read on another connection: the new readers are committed.
      const { rows } = await world.db.query<{ n: number }>(
        'select count(*)::int as n from work_readers where work_id = any(entity_keys($1)) and want_to_read > 0',
        [works],
      );
      t.is(rows[0]!.n, works.length);
      pages.push(works);
    },
  });
  const { rows } = await world.db.query<{ work_id: string }>('select public_id(work_id) as work_id from work_readers');
  const works = rows.map((row) => row.work_id).sort();
  t.true(works.length > 2, `${works.length} works with readers`);
  t.is(outcome.readersChanged, works.length);
  t.deepEqual(pages.flat().sort(), works);
  t.true(pages.every((page) => page.length <= 2));
});

test("the generator writes readers' dumps of a skewed popularity, and the collisions of the real catalogue", async (t) => {
  const dir = join(scratch, 'generated');
  const famous = [{ title: 'The Hunger Games', author: 'Suzanne Collins' }];
  const { files } = await generateOpenLibrary({ editions: 20_000, seed: 3, famous }, dir);
  const lines = (path: string) => readFileSync(path, 'utf8').split('\n').filter(Boolean);
  const perWork = new Map<string, number>();
  let broken = 0;
  for (const line of lines(files.readingLog)) {
    const parsed = parseReaderLine('reading-log', line);
    if (parsed === null || 'rejected' in parsed) broken += 1;
    else perWork.set(parsed.workKey, (perWork.get(parsed.workKey) ?? 0) + 1);
  }
  const entries = [...perWork.values()].sort((a, b) => b - a);
  const total = entries.reduce((sum, n) => sum + n, 0);
  t.true(total > 0.25 * 20_000 && total < 0.35 * 20_000, `${total} reading-log lines`);
  t.true(broken < 0.005 * total, `${broken} broken lines`);
  // Zipf-like: the most read 1% of the works hold a third or more of the entries.
  const top = entries.slice(0, Math.ceil(0.01 * 14_000)).reduce((sum, n) => sum + n, 0);
  t.true(top / total > 0.33, `top 1% of works: ${top} of ${total}`);
  t.true(
    lines(files.ratings).every((line) => {
      const parsed = parseReaderLine('ratings', line);
      return parsed !== null;
    }),
  );
  const titles = lines(files.works).flatMap((line) => (JSON.parse(line.split('\t')[4] ?? '{}') as { title?: string }).title ?? []);
  const named = (title: string) => titles.filter((one) => one === title).length;
  t.true(named('Poems') >= 5, `${named('Poems')} works titled Poems`);
  t.true(named('The Hunger Games') >= 20, `${named('The Hunger Games')} works titled The Hunger Games`);
  t.true(
    titles.filter((title) => /Hunger Games/u.test(title) && title !== 'The Hunger Games').length >= 50,
    'study guides, summaries and adaptations of the famous book',
  );
});

import test from 'ava';
import { useApi } from './helpers/env.js';
import { BX_HEADER, GOODBOOKS_HEADER, csvFile, importFile } from './helpers/catalogue.js';
import { allDocuments, loaderDeps } from './helpers/indexing.js';
import { parseIsbn } from '../src/domain/isbn.js';
import { authorKey } from '../src/domain/names.js';
import { titleKey } from '../src/domain/titles.js';
import { upsertEditions } from '../loader/import/editions.js';
import { bookCrossing } from '../loader/import/bookCrossing.js';
import { regroupWorks } from '../loader/import/regroup.js';
import { reindex } from '../loader/index/reindex.js';
import { syncOnce } from '../loader/index/sync.js';
import { runCli } from './helpers/processes.js';

const goodbooksRow = (id: number, isbn: string, authors: string, original: string, title: string, ratings: number) =>
  `${id},${id},${id},${id},1,${isbn.slice(3, 12)},${isbn},"${authors}",1949.0,"${original}","${title}",eng,4.1,${ratings},${ratings},1,1,1,1,1,1,,`;

const api = useApi(test, {
  async prepare(world) {
    await importFile(
      world,
      'goodbooks',
      await csvFile([
        GOODBOOKS_HEADER,
        goodbooksRow(1, '9780451524935', 'George Orwell', 'Nineteen Eighty-Four', '1984', 2000000),
        goodbooksRow(
          2,
          '9780439554930',
          'J.K. Rowling',
          "Harry Potter and the Philosopher's Stone",
          "Harry Potter and the Sorcerer's Stone (Harry Potter, #1)",
          4600000,
        ),
        goodbooksRow(3, '9780545162074', 'J.K. Rowling', 'Harry Potter Boxset', 'Harry Potter Boxset (Harry Potter, #1-7)', 190000),
        goodbooksRow(4, '9781408855652', 'J.K. Rowling', 'The Complete Harry Potter', 'The Complete Harry Potter Collection', 40000),
        goodbooksRow(5, '9780062101891', 'Jody Revenson', 'Harry Potter Page to Screen', 'Harry Potter: Page to Screen', 9000),
        goodbooksRow(6, '9780446580502', 'Stephen Colbert', 'I Am America (And So Can You!)', 'I Am America (And So Can You!)', 70000),
      ]),
    );
    await importFile(
      world,
      'book-crossing',
      await csvFile([
        BX_HEADER,
        '0451524934,"1984 (Signet Classics (Paperback))","George Orwell",1950,"Signet"',
        '8497592433,"1984 (Spanish Language Edition)","George Orwell",2003,"Debolsillo"',
        '0375407073,"1984 (Everyman\'s Library)","George Orwell",1992,"Everyman\'s Library"',
        '059035342X,"Harry Potter and the Sorcerer\'s Stone (Book 1)","J. K. Rowling",1998,"Scholastic"',
        '0446532991,"I Am America","Stephen Colbert",2007,"Grand Central"',
        '0440180295,"Slaughterhouse-Five","Kurt Vonnegut",1991,"Dell"',
        '0385333846,"Slaughterhouse-Five","Kurt Vonnegut Jr.",1999,"Dial Press"',
        '0440131782,"Slaughterhouse-Five (Laurel)","Kurt, Jr. Vonnegut",1971,"Dell"',
        '0425181103,"Tick Tock","Dean Koontz",2001,"Berkley"',
        '0345384431,"Tick Tock","Dean R. Koontz",1996,"Ballantine"',
      ]),
    );
  },
});

const workOf = async (isbn: string): Promise<{ work_id: string }> => {
  const { rows } = await api.world.db.query<{ work_id: string }>('select public_id(work_id) as work_id from books where isbn_13 = $1', [
    parseIsbn(isbn)!.isbn13,
  ]);
  return rows[0]!;
};

test('editions that differ only by an imprint, format, language edition or volume label are one work', async (t) => {
  const orwell = (await workOf('9780451524935')).work_id;
  for (const isbn of ['0451524934', '8497592433', '0375407073']) t.is((await workOf(isbn)).work_id, orwell, isbn);
  t.is((await workOf('059035342X')).work_id, (await workOf('9780439554930')).work_id);
  const work = (await (await api.get(`/v1/works/${orwell}`)).json()) as { edition_count: number; kind: string };
  t.is(work.edition_count, 3); // the Signet ISBN is goodbooks' own edition
  t.is(work.kind, 'book');
});

test('a parenthetical that is part of the title keeps its work apart', async (t) => {
  t.not((await workOf('9780446580502')).work_id, (await workOf('0446532991')).work_id);
});

test('an author credited with or without a generation suffix or a middle name ("Kurt Vonnegut Jr.", "Dean R. Koontz") keeps one work per book', async (t) => {
  const works = async (isbns: string[]) => new Set(await Promise.all(isbns.map(async (isbn) => (await workOf(isbn)).work_id)));
  t.is((await works(['0440180295', '0385333846', '0440131782'])).size, 1);
  t.is((await works(['0425181103', '0345384431'])).size, 1);
});

test('boxsets, omnibuses and companions are works of their own, and book and work records say which', async (t) => {
  const kinds: [string, string][] = [
    ['9780545162074', 'boxset'],
    ['9781408855652', 'omnibus'],
    ['9780062101891', 'companion'],
    ['9780439554930', 'book'],
  ];
  const single = (await workOf('9780439554930')).work_id;
  for (const [isbn, kind] of kinds) {
    const book = (await (await api.get(`/v1/isbn/${isbn}`)).json()) as { kind: string; work_id: string };
    t.is(book.kind, kind, isbn);
    t.is(((await (await api.get(`/v1/works/${book.work_id}`)).json()) as { kind: string }).kind, kind, isbn);
    if (kind !== 'book') t.not(book.work_id, single);
  }
});

test.serial(
  'regroup merges works an earlier rule split: the old ids answer 301, the change feed records the merges, the index follows',
  async (t) => {
    const deps = loaderDeps(api.world);
    t.teardown(() => deps.close());
    // Editions grouped as the rule before edition labels were known did: the whole title in the key.
    const titles = ['Brave New World', 'Brave New World (Perennial Classics)', 'Brave New World (Vintage Classics)'];
    const isbns = ['9780060850524', '9780060929879', '9780099518471'];
    for (const [index, title] of titles.entries()) {
      const isbn = isbns[index]!;
      const parsed = bookCrossing.parse(
        { ISBN: isbn, 'Book-Title': title, 'Book-Author': 'Aldous Huxley', 'Year-Of-Publication': '1998', 'Book-Publisher': 'Harper' },
        index + 2,
      );
      if (!('edition' in parsed)) throw new Error(`not parsed: ${title}`);
      const edition = parsed.edition;
      await upsertEditions(
        api.world.db,
        [{ ...edition, work: { ...edition.work, key: `${titleKey(title)}|${authorKey('Aldous Huxley')}`, title } }],
        bookCrossing.policy,
      );
    }
    const before = await Promise.all(isbns.map(async (isbn) => (await workOf(isbn)).work_id));
    t.is(new Set(before).size, 3);
    await reindex(deps, 'all', { progress: false });
    const { rows: seq } = await api.world.db.query<{ seq: string }>('select max(seq)::text as seq from changes');

    const outcome = await regroupWorks(api.world.db, api.world.cache);
    t.is(outcome.merged, 2);
    const after = await Promise.all(isbns.map(async (isbn) => (await workOf(isbn)).work_id));
    t.is(new Set(after).size, 1);
    const survivor = after[0]!;
    t.is(survivor, before[0]!);
    for (const old of before.slice(1)) {
      const response = await api.get(`/v1/works/${old}`);
      t.is(response.status, 301);
      t.is(response.headers.get('location'), `/v1/works/${survivor}`);
    }
    const feed = (await (await api.get(`/v1/changes?since=${seq[0]!.seq}`)).json()) as {
      changes: { id: string; operation: string; survivor_id: string | null }[];
    };
    const merges = feed.changes.filter((change) => change.operation === 'merge');
    t.deepEqual(
      merges.map((change) => [change.id, change.survivor_id]).sort(),
      before
        .slice(1)
        .map((id) => [id, survivor])
        .sort(),
    );

    await syncOnce(deps);
    const documents = await allDocuments<{ work_id: string; kind: string; isbn_13: string }>(deps.es, deps.aliases.books);
    const huxley = [...documents.values()].filter((document) => isbns.includes(document.isbn_13));
    t.deepEqual(
      huxley.map((document) => document.work_id),
      [survivor, survivor, survivor],
    );
    t.true(huxley.every((document) => document.kind === 'book'));

    // Once regrouped, the rule and the catalogue agree: nothing more to do.
    t.deepEqual(await regroupWorks(api.world.db, api.world.cache), { merged: 0, revised: 0 });
  },
);

test.serial('regroup merges the works of an author split by a generation suffix under the earlier rule, with 301s', async (t) => {
  // Keys as the rule before made them: the first author's whole identity key, suffix and all.
  const rows: [string, string][] = [
    ['9780385333481', 'Kurt Vonnegut'],
    ['9780440111498', 'Kurt Vonnegut Jr.'],
  ];
  for (const [index, [isbn, author]] of rows.entries()) {
    const parsed = bookCrossing.parse(
      { ISBN: isbn, 'Book-Title': "Cat's Cradle", 'Book-Author': author, 'Year-Of-Publication': '1998', 'Book-Publisher': 'Dell' },
      index + 2,
    );
    if (!('edition' in parsed)) throw new Error(`not parsed: ${author}`);
    const edition = parsed.edition;
    await upsertEditions(
      api.world.db,
      [{ ...edition, work: { ...edition.work, key: `${titleKey("Cat's Cradle")}|${authorKey(author)}` } }],
      bookCrossing.policy,
    );
  }
  const before = await Promise.all(rows.map(async ([isbn]) => (await workOf(isbn)).work_id));
  t.is(new Set(before).size, 2);

  t.is((await regroupWorks(api.world.db, api.world.cache)).merged, 1);
  const after = await Promise.all(rows.map(async ([isbn]) => (await workOf(isbn)).work_id));
  t.is(new Set(after).size, 1);
  const survivor = after[0]!;
  const merged = before.find((id) => id !== survivor)!;
  const response = await api.get(`/v1/works/${merged}`);
  t.is(response.status, 301);
  t.is(response.headers.get('location'), `/v1/works/${survivor}`);
  t.deepEqual(await regroupWorks(api.world.db, api.world.cache), { merged: 0, revised: 0 });
});

test.serial('bookmeta regroup reports what it did', async (t) => {
  const result = await runCli(api.world.env, ['regroup']);
  t.is(result.code, 0, result.stderr);
  t.regex(result.stdout, /regrouped works: 0 merged into others, 0 revised/);
});

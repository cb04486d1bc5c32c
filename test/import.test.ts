import test from 'ava';
import { createWorld, type TestWorld } from './helpers/env.js';
import { runCli } from './helpers/processes.js';
import { BX_HEADER, BX_SAMPLE, GOODBOOKS_300, GOODBOOKS_HEADER, csvFile, importFile } from './helpers/catalogue.js';

let world: TestWorld;
test.before(async () => {
  world = await createWorld();
});
test.after.always(() => world?.destroy());

// Importing into one database in sequence: each test builds on the state the previous left.
test.serial('goodbooks rows are imported, repaired where certain, and counted', async (t) => {
  const report = await importFile(world, 'goodbooks', GOODBOOKS_300);
  t.is(report.read, 300);
  t.is(report.imported, 300);
  t.is(report.inserted, 300);
  t.is(report.rejected.length, 0);
  t.true(report.repaired > 0);
  const { rows } = await world.db.query<{ n: number }>('select count(*)::int as n from books');
  t.is(rows[0]!.n, 300);
});

test.serial('a second import of the same file changes nothing and records no change', async (t) => {
  const before = await world.db.query<{ seq: string | null }>('select max(seq) as seq from changes');
  const report = await importFile(world, 'goodbooks', GOODBOOKS_300);
  t.is(report.inserted, 0);
  t.is(report.updated, 0);
  t.is(report.unchanged, 300);
  const after = await world.db.query<{ seq: string | null }>('select max(seq) as seq from changes');
  t.is(after.rows[0]!.seq, before.rows[0]!.seq);
});

test.serial('an ISBN-10 that lost its leading zero is restored and its ISBN-13 derived', async (t) => {
  // Row 1 of goodbooks: isbn 439023483, isbn13 9.78043902348e+12
  const { rows } = await world.db.query("select isbn_10, isbn_13 from books where title = 'The Hunger Games'");
  t.deepEqual(rows[0], { isbn_10: '0439023483', isbn_13: '9780439023481' });
});

test.serial('the series is split out of the title', async (t) => {
  const { rows } = await world.db.query("select title, series, series_number from books where isbn_13 = '9780439023481'");
  t.deepEqual(rows[0], { title: 'The Hunger Games', series: 'The Hunger Games', series_number: '1' });
});

test.serial('an author written two ways is one author with both spellings', async (t) => {
  const path = await csvFile([
    GOODBOOKS_HEADER,
    "9001,9001,9001,9001,1,0747532699,9.78074753269e+12,J. K. Rowling,1997.0,Philosopher,Harry Potter and the Philosopher's Stone (Harry Potter #1),eng,4.4,10,10,1,1,1,1,1,1,,",
  ]);
  const report = await importFile(world, 'goodbooks', path);
  t.is(report.inserted, 1);
  const { rows } = await world.db.query<{ name: string; spellings: string[] }>(
    `select a.name, array_agg(n.name order by n.name) as spellings
       from authors a join author_names n on n.author_id = a.id
      where n.name_key = 'jk rowling' group by a.id`,
  );
  t.is(rows.length, 1);
  t.deepEqual(rows[0]!.spellings, ['J. K. Rowling', 'J.K. Rowling']);
});

test.serial('illustrators and translators listed in authors become credited authors in order', async (t) => {
  const { rows } = await world.db.query<{ names: string[] }>(
    `select array_agg(a.name order by ba.position) as names from books b
       join book_authors ba on ba.book_id = b.id join authors a on a.id = ba.author_id
      where b.isbn_13 = '9780439554930' group by b.id`,
  );
  t.deepEqual(rows[0]!.names, ['J.K. Rowling', 'Mary GrandPré']);
});

test.serial('a row without any usable ISBN is kept under its Goodreads id, never with an invented ISBN', async (t) => {
  const path = await csvFile([
    GOODBOOKS_HEADER,
    '9002,777001,777001,777001,1,,,Some Author,2001.0,No Isbn,No Isbn Book,eng,4.0,5,5,1,1,1,1,1,1,,',
  ]);
  const report = await importFile(world, 'goodbooks', path);
  t.is(report.inserted, 1);
  const { rows } = await world.db.query("select isbn_13, isbn_10, source_key from books where title = 'No Isbn Book'");
  t.deepEqual(rows[0], { isbn_13: null, isbn_10: null, source_key: 'goodreads:777001' });
});

test.serial('bookmeta import book-crossing: an edition of a goodbooks ISBN enriches that book instead of duplicating it', async (t) => {
  const booksBefore = (await world.db.query<{ n: number }>('select count(*)::int as n from books')).rows[0]!.n;
  const cli = await runCli(world.env, ['import', 'book-crossing', BX_SAMPLE]);
  t.is(cli.code, 0, cli.stderr);
  const counts = /^book-crossing: read (\d+) rows; imported (\d+) \((\d+) new, (\d+) updated, (\d+) unchanged\)/m.exec(cli.stdout);
  t.truthy(counts, cli.stdout);
  const [read, imported, inserted, updated, unchanged] = counts!.slice(1).map(Number);
  t.true(read! > 0 && updated! > 0, cli.stdout);
  t.is(imported, inserted! + updated! + unchanged!);
  t.is((await world.db.query<{ n: number }>('select count(*)::int as n from books')).rows[0]!.n, booksBefore + inserted!);
  const { rows } = await world.db.query('select isbn_13 from books where isbn_13 is not null group by isbn_13 having count(*) > 1');
  t.is(rows.length, 0);
  // Book-Crossing knows the publisher and edition year that goodbooks lacks; goodbooks' title and
  // spelling of the author stay.
  const atonement = await world.db.query(
    `select b.title, b.subtitle, b.publisher, b.year, a.name as author from books b
       join book_authors ba on ba.book_id = b.id join authors a on a.id = ba.author_id where b.isbn_10 = '038572179X'`,
  );
  t.deepEqual(atonement.rows, [{ title: 'Atonement', subtitle: 'A Novel', publisher: 'Anchor', year: 2003, author: 'Ian McEwan' }]);
});

test.serial('rejected rows are reported with their line and reason and never stop the import', async (t) => {
  const path = await csvFile([
    BX_HEADER,
    '0439023482,Bad Checksum Book,Nobody,2001,Nowhere',
    '0002005018,Clara Callan,Richard Bruce Wright,2001,HarperFlamingo Canada',
    '12345,Short ISBN,Nobody,2001,Nowhere',
    '0374157065,,Nobody,2001,Nowhere',
  ]);
  const report = await importFile(world, 'book-crossing', path);
  t.is(report.read, 4);
  t.is(report.imported, 1);
  t.deepEqual(report.rejected, [
    { line: 2, reason: 'invalid ISBN "0439023482"' },
    { line: 4, reason: 'invalid ISBN "12345"' },
    { line: 5, reason: 'title is empty' },
  ]);
});

test.serial('names in capitals are set in normal case and years of 0 are unknown', async (t) => {
  const path = await csvFile([BX_HEADER, '0446364193,Shadowland,PETER STRAUB,0,Warner Books']);
  const report = await importFile(world, 'book-crossing', path);
  t.is(report.repaired, 1);
  const { rows } = await world.db.query(
    `select b.year, a.name from books b join book_authors ba on ba.book_id = b.id join authors a on a.id = ba.author_id
      where b.isbn_10 = '0446364193'`,
  );
  t.deepEqual(rows[0], { year: null, name: 'Peter Straub' });
});

test.serial('editions of one work are grouped, whatever their series suffix or source', async (t) => {
  const path = await csvFile([
    BX_HEADER,
    '0671027360,Angels &amp; Demons,Dan Brown,2001,Pocket Star',
    '0743486226,Angels & Demons,Dan Brown,2003,Atria',
  ]);
  await importFile(world, 'book-crossing', path);
  const { rows } = await world.db.query<{ works: number }>(
    "select count(distinct work_id)::int as works from books where isbn_10 in ('0743486226', '0671027360')",
  );
  t.is(rows[0]!.works, 1);
});

test.serial('every insert and update was recorded in the change sequence', async (t) => {
  const books = await world.db.query<{ n: number }>('select count(*)::int as n from books');
  const inserts = await world.db.query<{ n: number }>(
    "select count(distinct entity_id)::int as n from changes where entity = 'book' and operation = 'insert'",
  );
  t.is(inserts.rows[0]!.n, books.rows[0]!.n);
});

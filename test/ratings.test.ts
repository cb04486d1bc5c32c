import test from 'ava';
import { createLogger } from '../src/log.js';
import { lastSeq, readChanges } from '../src/stores/postgres/changes.js';
import { alsoLikedOf } from '../src/stores/postgres/ratings.js';
import { importRatings } from '../loader/import/ratings.js';
import { syncOnce } from '../loader/index/sync.js';
import { csvFile } from './helpers/catalogue.js';
import { allDocuments, assertIndexMatches, useIndexedWorld } from './helpers/indexing.js';
import { runCli } from './helpers/processes.js';

const { world, deps } = useIndexedWorld(test, { reindex: true });
const quiet = createLogger('silent');

interface Book {
  id: string;
  isbn_10: string;
  work_id: string;
}
let a: Book, b: Book, c: Book, d: Book, edition1: Book, edition2: Book;
let ratingsFile: string;

// Starts once useIndexedWorld's (serial) before hook has finished.
test.before(async () => {
  // Two editions of one work, and four books of four other works.
  const { rows: editions } = await world.db.query<Book>(
    `select public_id(b.id) as id, b.isbn_10, public_id(b.work_id) as work_id from books b
      where b.merged_into is null and b.isbn_10 is not null
        and (select count(*) from books o where o.work_id = b.work_id and o.merged_into is null and o.isbn_10 is not null) >= 2
      order by b.work_id, b.id limit 2`,
  );
  [edition1, edition2] = editions as [Book, Book];
  const { rows: others } = await world.db.query<Book>(
    `select distinct on (b.work_id) public_id(b.id) as id, b.isbn_10, public_id(b.work_id) as work_id from books b
      where b.merged_into is null and b.isbn_10 is not null and b.work_id <> entity_key($1)
      order by b.work_id, b.id limit 4`,
    [edition1.work_id],
  );
  [a, b, c, d] = others as [Book, Book, Book, Book];

  const lines = ['User-ID,ISBN,Book-Rating'];
  const rate = (user: number, book: Book, rating = 8) => lines.push(`${user},${book.isbn_10},${rating}`);
  // 5 readers liked A and B
  for (let user = 1; user <= 5; user += 1) {
    rate(user, a);
    rate(user, b);
  }
  // 2 liked A and C
  for (let user = 6; user <= 7; user += 1) {
    rate(user, a);
    rate(user, c);
  }
  // 1 liked A and D: too few to relate them
  rate(8, a);
  rate(8, d);
  // rated A low: did not like it
  for (let user = 9; user <= 11; user += 1) {
    rate(user, a, 2);
    rate(user, d);
  }
  for (let user = 20; user <= 25; user += 1) {
    rate(user, edition1);
    rate(user, edition2);
    rate(user, c);
  }
  lines.push('30,0000000000,7'); // valid ISBN no book has
  lines.push('31,not-an-isbn,7');
  lines.push(`32,${a.isbn_10},11`);
  lines.push(`x,${a.isbn_10},5`);
  ratingsFile = await csvFile(lines);
});

test.serial('ratings are imported by ISBN; unusable rows are rejected with line and reason', async (t) => {
  const report = await importRatings(ratingsFile, { db: world.db, log: quiet });
  t.is(report.read, 10 + 4 + 2 + 6 + 18 + 4);
  t.is(report.inserted, 40);
  t.deepEqual(report.rejected, [
    { line: 42, reason: 'unknown ISBN "0000000000": no book has it' },
    { line: 43, reason: 'invalid ISBN "not-an-isbn"' },
    { line: 44, reason: 'invalid rating "11" (0 to 10)' },
    { line: 45, reason: 'invalid user id "x"' },
  ]);
  const { rows } = await world.db.query<{ n: number }>('select count(*)::int as n from ratings');
  t.is(rows[0]!.n, 40);
});

test.serial('"also liked" ranks co-readers against popularity and never names another edition of the same work', async (t) => {
  t.deepEqual(await alsoLikedOf(world.db, a.id), [b.id, c.id]);
  t.deepEqual(await alsoLikedOf(world.db, b.id), [a.id]);
  // Editions of one work are never related to each other, and a list names at most one edition of a work.
  const ofEdition1 = await alsoLikedOf(world.db, edition1.id);
  t.false(ofEdition1.includes(edition2.id));
  t.deepEqual(ofEdition1, [c.id]);
  const ofC = await alsoLikedOf(world.db, c.id);
  t.is(ofC.filter((id) => id === edition1.id || id === edition2.id).length, 1);
  t.true(ofC.includes(a.id));
  t.deepEqual(await alsoLikedOf(world.db, d.id), []);
});

test.serial('importing ratings records changes that sync puts in the index; a second import changes nothing', async (t) => {
  const changes = await readChanges(world.db, 0, 100_000);
  const updated = new Set(changes.filter((change) => change.entity === 'book' && change.operation === 'update').map((change) => change.id));
  for (const book of [a, b, c, edition1, edition2]) t.true(updated.has(book.id), `${book.id} has an update change`);

  await syncOnce(deps);
  const indexed = await allDocuments<{ also_liked: string[] }>(deps.es, deps.aliases.books);
  t.deepEqual(indexed.get(a.id)?.also_liked, [b.id, c.id]);
  await assertIndexMatches(t, deps);

  const before = await lastSeq(world.db);
  const again = await runCli(world.env, ['import', 'ratings', ratingsFile]);
  t.is(again.code, 0, again.stderr);
  t.regex(again.stdout, /imported 40 \(0 new, 0 updated, 40 unchanged\)/);
  t.regex(again.stdout, /line 42: unknown ISBN "0000000000"/);
  t.regex(again.stdout, /0 lists changed/);
  t.is(await lastSeq(world.db), before);
});

test.serial('a changed rating that changes a list records a change for that book only', async (t) => {
  // Two more readers liked B and D: D gets a list, B's list gains D.
  const file = await csvFile([
    'User-ID,ISBN,Book-Rating',
    `40,${b.isbn_10},9`,
    `40,${d.isbn_10},9`,
    `41,${b.isbn_10},9`,
    `41,${d.isbn_10},9`,
  ]);
  const before = await lastSeq(world.db);
  const report = await importRatings(file, { db: world.db, log: quiet });
  t.deepEqual([...report.alsoLiked.changed].sort(), [b.id, d.id].sort());
  const changes = await readChanges(world.db, before, 100);
  t.deepEqual(changes.map((change) => change.id).sort(), [b.id, d.id].sort());
  await syncOnce(deps);
  const indexed = await allDocuments<{ also_liked: string[] }>(deps.es, deps.aliases.books);
  t.deepEqual(indexed.get(d.id)?.also_liked, [b.id]);
  t.true(indexed.get(b.id)?.also_liked.includes(d.id));
});

test.serial(
  'readers of any edition of a work count for the work: two readers of two editions relate it to a book they both liked',
  async (t) => {
    // One reader liked edition 1 and D, another edition 2 and D: no edition has two co-readers with D, the work has.
    const file = await csvFile([
      'User-ID,ISBN,Book-Rating',
      `60,${edition1.isbn_10},9`,
      `60,${d.isbn_10},9`,
      `61,${edition2.isbn_10},9`,
      `61,${d.isbn_10},9`,
    ]);
    await importRatings(file, { db: world.db, log: quiet });
    t.true((await alsoLikedOf(world.db, edition1.id)).includes(d.id));
    t.true((await alsoLikedOf(world.db, edition2.id)).includes(d.id));
    const ofD = await alsoLikedOf(world.db, d.id);
    t.is(ofD.filter((id) => id === edition1.id || id === edition2.id).length, 1);
  },
);

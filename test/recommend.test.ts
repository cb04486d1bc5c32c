import test from 'ava';
import { importRatings } from '../loader/import/ratings.js';
import { createLogger } from '../src/log.js';
import type { BookRecord } from '../src/domain/records.js';
import { likelySameWork } from '../src/domain/similarity.js';
import { merge } from '../src/services/merge.js';
import { BX_HEADER, csvFile, importFile } from './helpers/catalogue.js';
import { openSearchWorld, type SearchWorld } from './helpers/search.js';

let search: SearchWorld;

const SPEAK = '014131088X';
const FOUNTAINHEAD = '0451191153';
const INTO_THE_WILD = '0385486804';
// One book as two works: a label that reads on ("Now in Paperback!") keeps the first apart.
const SPARROW_LABELLED = '1900000016';
const SPARROW = '1900000024';

/**
 * Co-reading: three readers liked Speak and The Fountainhead, two liked it and Into the Wild;
 * nothing in their content relates them, so only the ratings can put them first.
 */
const RATINGS = [
  'User-ID,ISBN,Book-Rating',
  ...[1, 2, 3].flatMap((user) => [`${user},${SPEAK},9`, `${user},${FOUNTAINHEAD},9`]),
  ...[4, 5].flatMap((user) => [`${user},${SPEAK},8`, `${user},${INTO_THE_WILD},9`]),
  ...[6, 7, 8].flatMap((user) => [`${user},${SPARROW_LABELLED},9`, `${user},${SPARROW},9`]),
];

test.before(async () => {
  search = await openSearchWorld(async (world) => {
    await importFile(
      world,
      'book-crossing',
      await csvFile([
        BX_HEADER,
        `${SPARROW_LABELLED},"Sparrow Hill (Now in Paperback!)","Mara Quillfeather",2004,"Puffin"`,
        `${SPARROW},"Sparrow Hill","Mara Quillfeather",2001,"Viking"`,
      ]),
    );
    await importRatings(await csvFile(RATINGS), { db: world.db, log: createLogger('silent') });
  });
});
test.after.always(async () => {
  await search?.close();
});

interface Recommendations {
  book_id: string;
  results: { score: number; book: BookRecord }[];
}

const bookByIsbn = async (isbn: string): Promise<BookRecord> => (await (await search.get(`/v1/isbn/${isbn}`)).json()) as BookRecord;
const recommend = async (id: string, query = ''): Promise<Recommendations> => {
  const response = await search.get(`/v1/books/${id}/recommendations${query}`);
  if (response.status !== 200) throw new Error(`${id}: ${response.status} ${await response.text()}`);
  return (await response.json()) as Recommendations;
};

test('what readers of a book also liked comes first, strongest co-reading first', async (t) => {
  const book = await bookByIsbn(SPEAK);
  const answer = await recommend(book.id);
  t.is(answer.book_id, book.id);
  t.deepEqual(
    answer.results.slice(0, 2).map((hit) => hit.book.isbn_10),
    [FOUNTAINHEAD, INTO_THE_WILD],
  );
  t.true(answer.results[0]!.score > answer.results[1]!.score);
});

test('without co-readers, the same series and the same author come first', async (t) => {
  const book = await bookByIsbn('0439023491'); // Catching Fire
  const top = (await recommend(book.id, '?limit=3')).results.map((hit) => hit.book.title);
  t.true(top.includes('Mockingjay'), top.join(', '));
  t.true(top.includes('The Hunger Games'), top.join(', '));
});

test('a twin of the book in another work is never recommended, whichever of the two titles says more', async (t) => {
  const labelled = await bookByIsbn(SPARROW_LABELLED);
  const plain = await bookByIsbn(SPARROW);
  t.not(labelled.work_id, plain.work_id);
  t.false((await recommend(labelled.id)).results.some((hit) => hit.book.id === plain.id));
  t.false((await recommend(plain.id)).results.some((hit) => hit.book.id === labelled.id));
});

test("recommendations are one book per work, never an edition of the book's own work nor a twin of it", async (t) => {
  const { rows } = await search.world.db.query<{ id: string }>(
    'select public_id(min(id)) as id from books where merged_into is null group by work_id having count(*) > 1 order by min(id)',
  );
  t.true(rows.length > 0);
  for (const { id } of rows) {
    const book = (await (await search.get(`/v1/books/${id}`)).json()) as BookRecord;
    const results = (await recommend(id, '?limit=50')).results;
    const works = results.map((hit) => hit.book.work_id);
    t.false(works.includes(book.work_id), book.title);
    t.is(new Set(works).size, works.length, book.title);
    for (const hit of results) t.false(likelySameWork(book, hit.book), `${book.title} / ${hit.book.title}`);
  }
});

test('a recommended book reads like GET /v1/books/:id; limit defaults to 10, filled with popular books when few are related, and is at most 50', async (t) => {
  const book = await bookByIsbn(SPEAK);
  const answer = await recommend(book.id);
  t.deepEqual(Object.keys(answer).sort(), ['book_id', 'results']);
  t.is(answer.results.length, 10);
  t.deepEqual(answer.results[0]!.book, await bookByIsbn(FOUNTAINHEAD));
  t.is((await recommend(book.id, '?limit=3')).results.length, 3);
  const tooMany = await search.get(`/v1/books/${book.id}/recommendations?limit=51`);
  t.is(tooMany.status, 400);
  t.deepEqual(await tooMany.json(), { error: { code: 'bad_request', message: 'limit must be an integer from 1 to 50' } });
});

test("an unknown id is a 404 naming it; a merged id is a 301 to the survivor's recommendations", async (t) => {
  const missing = await search.get('/v1/books/bk_0000000000zz/recommendations');
  t.is(missing.status, 404);
  t.deepEqual(await missing.json(), { error: { code: 'not_found', message: 'book bk_0000000000zz not found' } });

  const from = await bookByIsbn('0060987103'); // Wicked
  const into = await bookByIsbn('0375751513'); // The Picture of Dorian Gray
  await merge(search.world.db, search.world.cache, 'book', from.id, into.id);
  const moved = await search.get(`/v1/books/${from.id}/recommendations?limit=5`);
  t.is(moved.status, 301);
  t.is(moved.headers.get('location'), `/v1/books/${into.id}/recommendations?limit=5`);
});

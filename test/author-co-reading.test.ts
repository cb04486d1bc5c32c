import test from 'ava';
import { importRatings } from '../loader/import/ratings.js';
import { createLogger } from '../src/log.js';
import type { BookRecord } from '../src/domain/records.js';
import { BX_HEADER, csvFile, importFile } from './helpers/catalogue.js';
import { openSearchWorld, type SearchWorld } from './helpers/search.js';

let search: SearchWorld;

const FOUNTAINHEAD = '0451191153';
// Two books of one author: readers liked the second, and nobody rated the first.
const UNRATED = '1900000032';
const RATED = '1900000040';

test.before(async () => {
  search = await openSearchWorld(async (world) => {
    await importFile(
      world,
      'book-crossing',
      await csvFile([
        BX_HEADER,
        `${UNRATED},"Lanterns Under Ice","Odile Brackenridge",2003,"Viking"`,
        `${RATED},"The Salt Orchard","Odile Brackenridge",1999,"Viking"`,
      ]),
    );
    const ratings = ['User-ID,ISBN,Book-Rating', ...[11, 12, 13].flatMap((user) => [`${user},${RATED},9`, `${user},${FOUNTAINHEAD},8`])];
    await importRatings(await csvFile(ratings), { db: world.db, log: createLogger('silent') });
  });
});
test.after.always(async () => {
  await search?.close();
});

const bookByIsbn = async (isbn: string): Promise<BookRecord> => (await (await search.get(`/v1/isbn/${isbn}`)).json()) as BookRecord;

test("a book nobody rated is recommended what readers of its author's other books also liked", async (t) => {
  const book = await bookByIsbn(UNRATED);
  const response = await search.get(`/v1/books/${book.id}/recommendations?limit=5`);
  t.is(response.status, 200);
  const { results } = (await response.json()) as { results: { book: BookRecord }[] };
  // The author's other book and what its readers liked, above the popular books that fill up the list.
  t.deepEqual(
    results
      .slice(0, 2)
      .map((hit) => hit.book.isbn_10)
      .sort(),
    [FOUNTAINHEAD, RATED].sort(),
    results.map((hit) => hit.book.title).join(', '),
  );
});

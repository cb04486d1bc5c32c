import test from 'ava';
import { readFile } from 'node:fs/promises';
import { BX_HEADER, GOODBOOKS_HEADER, csvFile, importFile } from './helpers/catalogue.js';
import { openSearchWorld, type SearchWorld } from './helpers/search.js';
import { projectPath } from '../src/paths.js';
import type { BookRecord } from '../src/domain/records.js';

// Known-item queries as a reader types them (scripts/eval/search.ts measures them at scale), against
// the sample catalogue plus real goodbooks rows that compete with the books meant: boxsets, a
// companion, a namesake, and Book-Crossing editions under imprint and language labels.
const EXTRA_GOODBOOKS = new Set(['356', '422', '507', '581', '3736', '7657', '8626']);

let search: SearchWorld;
test.before(async () => {
  const lines = (await readFile(projectPath('data', 'goodbooks-10k', 'books.csv'), 'utf8')).split('\n');
  const extra = lines.filter((line) => EXTRA_GOODBOOKS.has(line.slice(0, line.indexOf(','))));
  search = await openSearchWorld(async (world) => {
    await importFile(world, 'goodbooks', await csvFile([GOODBOOKS_HEADER, ...extra]));
    await importFile(
      world,
      'book-crossing',
      await csvFile([
        BX_HEADER,
        '0375407073,"1984 (Everyman\'s Library)","George Orwell",1992,"Everyman\'s Library"',
        '8497592433,"1984 (Spanish Language Edition)","George Orwell",2003,"Debolsillo"',
      ]),
    );
  });
});
test.after.always(async () => {
  await search?.close();
});

async function titles(q: string): Promise<BookRecord[]> {
  const response = await search.get(`/v1/books/search?q=${encodeURIComponent(q)}&limit=10`);
  const page = (await response.json()) as { results: { book: BookRecord }[] };
  return page.results.map((hit) => hit.book);
}

const rank = (books: BookRecord[], title: string): number => books.findIndex((book) => book.title === title);

test('the title as readers know it brings its work first, once: "1984" is one work whatever its editions say', async (t) => {
  const books = await titles('1984');
  t.is(books[0]?.title, '1984');
  t.is(books.filter((book) => book.authors.some((author) => author.name === 'George Orwell')).length, 1);
});

test('of two books with the title asked for, the more read comes first', async (t) => {
  const books = await titles('Scarlet');
  t.deepEqual(
    books.slice(0, 2).map((book) => book.authors[0]?.name),
    ['Marissa Meyer', 'A.C. Gaughen'],
  );
});

test('a series name alone brings its most-read volume first, and a boxset or companion ranks below the volumes', async (t) => {
  const potter = await titles('harry potter');
  t.is(potter[0]?.title, "Harry Potter and the Sorcerer's Stone");
  const volumes = potter.filter((book) => book.kind === 'book' && book.series === 'Harry Potter').length;
  t.true(volumes >= 5);
  for (const title of ['Harry Potter Boxset', 'Harry Potter Page to Screen']) {
    const at = rank(potter, title);
    t.true(at === -1 || at >= volumes, `${title} at ${at}`);
  }
  const hunger = await titles('the hunger games');
  t.deepEqual(
    hunger.slice(0, 3).map((book) => book.title),
    ['The Hunger Games', 'Catching Fire', 'Mockingjay'],
  );
  t.true(rank(hunger, 'The Hunger Games Trilogy Boxset') > 2);
});

test("an author's name alone brings their most-read book first", async (t) => {
  t.is((await titles('Stephen King'))[0]?.title, 'The Shining');
  t.is((await titles('suzanne collins'))[0]?.title, 'The Hunger Games');
  // A book named after its author does not stand in for the author's most-read one.
  t.is((await titles('Lemony Snicket'))[0]?.title, 'The Bad Beginning');
});

test("a few title words with the author's surname find the book", async (t) => {
  t.is((await titles('prisoner azkaban rowling'))[0]?.title, 'Harry Potter and the Prisoner of Azkaban');
  t.is((await titles('catching fire collins'))[0]?.title, 'Catching Fire');
});

async function match(body: Record<string, string>): Promise<{ match: BookRecord | null; confidence: number }> {
  return (await (await search.post('/v1/match', JSON.stringify(body))).json()) as { match: BookRecord | null; confidence: number };
}

test("a book asked for by its original title, or with two typos in its author's surname, is matched to its work", async (t) => {
  const orwell = (await titles('1984'))[0]!;
  t.is((await match({ title: 'Nineteen Eighty-Four', author: 'George Orwell' })).match?.work_id, orwell.work_id);
  t.is((await match({ title: '1984', author: 'George Orwekk' })).match?.work_id, orwell.work_id);
  t.is((await match({ title: 'The Hunger Games', author: 'Suzanne Colinns' })).match?.title, 'The Hunger Games');
});

test('a known author with an unknown title is no match, even one that holds the title of their other book', async (t) => {
  for (const title of ['The Copper Lanterns of Vellmar', 'The Silent Orchard', 'Harbour of Glass', 'The Shining Girls of Derry']) {
    t.is((await match({ title, author: 'Stephen King' })).match, null, title);
  }
  t.is((await match({ title: 'The Hunger Games Cookbook', author: 'Suzanne Collins' })).match, null);
  t.is((await match({ title: 'Mockingjay Illustrated Notes', author: 'Suzanne Collins' })).match, null);
});

test('recommendations bring the next volume first and never a boxset or omnibus that holds the book', async (t) => {
  const recommended = async (title: string): Promise<BookRecord[]> => {
    const seed = (await titles(title))[0]!;
    const page = (await (await search.get(`/v1/books/${seed.id}/recommendations`)).json()) as { results: { book: BookRecord }[] };
    return page.results.map((hit) => hit.book);
  };
  const hunger = await recommended('The Hunger Games');
  t.is(hunger[0]?.title, 'Catching Fire');
  t.false(hunger.some((book) => book.kind === 'boxset' || book.kind === 'omnibus'));
  const potter = await recommended("Harry Potter and the Sorcerer's Stone");
  t.is(potter[0]?.title, 'Harry Potter and the Chamber of Secrets');
  t.false(potter.some((book) => book.kind === 'boxset' || book.kind === 'omnibus'));
});

import test from 'ava';
import { parseQuery, QuerySyntaxError } from '../src/domain/querySyntax.js';
import { openSearchWorld, type SearchWorld } from './helpers/search.js';
import { assertBadRequest } from './helpers/assertions.js';
import type { BookSearchPage } from '../src/services/search.js';

let search: SearchWorld;

test.before(async () => {
  search = await openSearchWorld();
});
test.after.always(async () => {
  await search?.close();
});

const books = async (q: string, more = ''): Promise<BookSearchPage> => {
  const response = await search.get(`/v1/books/search?q=${encodeURIComponent(q)}&limit=100${more}`);
  if (response.status !== 200) throw new Error(`${q}: ${response.status} ${await response.text()}`);
  return (await response.json()) as BookSearchPage;
};

test('the syntax reads operators, phrases, year ranges and left-out words; a colon after any other word is text', (t) => {
  t.like(parseQuery('dune author:herbert -messiah'), {
    text: 'dune',
    fields: [{ field: 'author', text: 'herbert', phrase: false }],
    excluded: ['messiah'],
  });
  t.like(parseQuery('Title:"The Long Earth" year:1960..1969 -"box set"'), {
    text: '',
    fields: [{ field: 'title', text: 'The Long Earth', phrase: true }],
    yearFrom: 1960,
    yearTo: 1969,
    excluded: ['box set'],
  });
  t.like(parseQuery('"the long earth" pratchett'), { text: 'the long earth pratchett', phrases: ['the long earth'] });
  t.like(parseQuery('year:1965'), { yearFrom: 1965, yearTo: 1965 });
  t.like(parseQuery('year:..1900'), { yearFrom: null, yearTo: 1900 });
  t.like(parseQuery('isbn:0-439-02348-3'), { isbn13s: ['9780439023481'] });
  for (const q of ['Star Wars: A New Hope', 'Re: Zero', 'author: a life', 'Jean-Paul Sartre']) {
    t.like(parseQuery(q), { text: q, fields: [], excluded: [] }, q);
  }
  const refused = (q: string, message: string) => t.throws(() => parseQuery(q), { instanceOf: QuerySyntaxError, message }, q);
  refused('title:"the long', 'q has a quote that is not closed');
  refused('year:sixties', 'year: takes a year or a range such as 1960..1969, got "sixties"');
  refused('year:1970..1960', 'year: range 1970..1960 ends before it starts');
  refused('isbn:12345', 'isbn: takes an ISBN-10 or ISBN-13, got "12345"');
  refused('-dune -messiah', 'q needs something to look for besides words to leave out');
  refused('year:1960 year:1970', 'q has year: more than once');
});

test('free text and operators mix: every result has what each operator asks and nothing left out', async (t) => {
  const page = await books('harry potter author:rowling -azkaban');
  t.true(page.results.length >= 3);
  for (const { book } of page.results) {
    t.true(
      book.authors.some((author) => /rowling/i.test(author.name)),
      book.title,
    );
    t.false(/azkaban/i.test(book.title), book.title);
  }
  t.true((await books('harry potter author:rowling')).results.some(({ book }) => /azkaban/i.test(book.title)));
});

test('title:, series:, publisher:, isbn: and year: narrow to the books that have them', async (t) => {
  const titled = await books('title:"catching fire"');
  t.true(titled.results.length > 0);
  for (const { book } of titled.results) t.regex(book.title, /catching fire/i);

  const series = await books('series:"hunger games"', '&editions=all');
  t.true(series.results.length >= 3);
  for (const { book } of series.results) t.regex(book.series ?? '', /hunger games/i);

  const published = await books('publisher:anchor', '&editions=all');
  t.true(published.results.length > 0);
  for (const { book } of published.results) t.regex(book.publisher ?? '', /anchor/i);

  const isbn = await books('isbn:0439023483');
  t.deepEqual(
    isbn.results.map(({ book }) => book.isbn_13),
    ['9780439023481'],
  );

  for (const [q, from, to] of [
    ['potter year:1999', 1999, 1999],
    ['the year:1990..1999', 1990, 1999],
  ] as const) {
    const page = await books(q, '&editions=all');
    t.true(page.results.length > 0, q);
    for (const { book } of page.results) t.true(book.year! >= from && book.year! <= to, `${q}: ${book.year}`);
  }
});

test('a quoted phrase must appear as written', async (t) => {
  const phrase = await books('"the hunger"', '&editions=all');
  t.true(phrase.results.length > 0);
  for (const { book } of phrase.results) t.regex(`${book.title} ${book.series ?? ''}`, /the hunger/i);
});

test('a colon after a word that is no field is text, and the book is found', async (t) => {
  const response = await search.get(`/v1/books/search?q=${encodeURIComponent('Harry Potter: Sorcerer')}`);
  t.is(response.status, 200);
  t.regex(((await response.json()) as BookSearchPage).results[0]!.book.title, /Sorcerer's Stone/);
});

test('a query the syntax cannot read is a 400 naming the problem', async (t) => {
  for (const [q, message] of [
    ['title:"the long', 'q has a quote that is not closed'],
    ['year:1970..1960', 'year: range 1970..1960 ends before it starts'],
    ['dune isbn:42', 'isbn: takes an ISBN-10 or ISBN-13, got "42"'],
    ['-dune', 'q needs something to look for besides words to leave out'],
  ]) {
    const path = `/v1/books/search?q=${encodeURIComponent(q!)}`;
    await assertBadRequest(t, await search.get(path), message!, path);
  }
});

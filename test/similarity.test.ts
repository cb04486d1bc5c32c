import test from 'ava';
import { parseIsbn } from '../src/domain/isbn.js';
import { assess, isbnSignal, MATCH_THRESHOLD, type MatchProbe } from '../src/domain/matching.js';
import { bookRecord } from './helpers/records.js';
import {
  authorSimilarity,
  editDistance,
  likelySameWork,
  publisherSimilarity,
  titleSimilarity,
  yearCloseness,
} from '../src/domain/similarity.js';
import { withoutTrailingParenthetical } from '../src/domain/titles.js';

const book = bookRecord;

const probe = (fields: Partial<MatchProbe>): MatchProbe => ({
  title: null,
  isbnText: null,
  isbn: null,
  author: null,
  year: null,
  publisher: null,
  ...fields,
});

test('edit distance counts a swap of neighbours as one edit and stops past its bound', (t) => {
  t.is(editDistance('macbeth', 'mabceth', 2), 1);
  t.is(editDistance('kitten', 'sitting', 5), 3);
  t.is(editDistance('kitten', 'sitting', 1), 2);
});

test('a title matches through its series, subtitle, article, punctuation, case, diacritics and typos', (t) => {
  const stone = { title: "Harry Potter and the Sorcerer's Stone", subtitle: null, series: 'Harry Potter', series_number: '1' };
  t.is(titleSimilarity("Harry Potter and the Sorcerer's Stone (Harry Potter, #1)", stone), 1);
  t.is(titleSimilarity('HARRY POTTER AND THE SORCERERS STONE', stone), 1);
  t.is(titleSimilarity("Harry Potter and the Sorcerer's Stone Harry Potter 1", stone), 0.97);
  t.true(titleSimilarity('Harry Poter and the Sorcerers Stone', stone) > 0.95);
  const flu = { title: 'Flu', subtitle: 'The Story of the Great Influenza Pandemic of 1918' };
  t.is(titleSimilarity('Flu: The Story of the Great Influenza Pandemic of 1918', flu), 1);
  t.is(titleSimilarity('Flu', flu), 0.97);
  t.is(titleSimilarity('Hobbit', { title: 'The Hobbit', subtitle: null }), 1);
  t.is(titleSimilarity('Les Misérables', { title: 'Les Miserables', subtitle: null }), 1);
  // A record saying more than the book's title may be another book of that name: it counts less.
  t.is(titleSimilarity('Pride and Prejudice (Penguin Classics)', { title: 'Pride and Prejudice', subtitle: null }), 0.85);
  t.is(titleSimilarity('Pride and Prejudice', { title: 'Pride and Prejudice (Penguin Classics)', subtitle: null }), 0.97);
  t.is(titleSimilarity('Cien años de soledad', { title: 'Cien Años de Soledad / One Hundred Years of Solitude', subtitle: null }), 0.97);
});

test('a title spelt as given beats one that only matches up to typos, and other titles are far', (t) => {
  t.true(
    titleSimilarity('The Histories', { title: 'The Histories', subtitle: null }) >
      titleSimilarity('The Histories', { title: 'The Historian', subtitle: null }),
  );
  t.true(titleSimilarity('Catching Fire', { title: 'The Hunger Games', subtitle: null }) < 0.4);
});

test('a trailing parenthetical comes off whole, nested ones included', (t) => {
  t.is(withoutTrailingParenthetical('With a Tangled Skein (Incarnations of Immortality (Paperback))'), 'With a Tangled Skein');
  t.is(withoutTrailingParenthetical('(Untitled)'), '(Untitled)');
});

test('an author matches through initials, surname-first order, typos, suffixes and other credited names', (t) => {
  const credited = ['J.K. Rowling', 'Mary GrandPré'];
  t.is(authorSimilarity('J.K. Rowling', credited), 1);
  t.is(authorSimilarity('Rowling, JK', credited), 1);
  t.is(authorSimilarity('Rowling JK', credited), 0.95);
  t.is(authorSimilarity('Joanne Rowling', credited), 0.9);
  t.is(authorSimilarity('J. Rowlign', credited), 0.9);
  t.is(authorSimilarity('Mary Grandpre', credited), 1);
  t.is(authorSimilarity('Gregory Rabassa; J.K. Rowling', credited), 1);
  t.is(authorSimilarity('Piers Anthony, Larissa Volokhonsky', ['Launius Anthony']), 0.3); // a list, not "Volokhonsky, Larissa Piers Anthony"
  t.is(authorSimilarity('Frank B. Gilbreth', ['Frank B. Gilbreth Jr.']), 0.95); // Jr. or Sr.: nearly certain
  t.is(authorSimilarity('S. Cunningham', ['Scott, Cunningham']), 0.855);
});

test('another surname or another given name is another person', (t) => {
  t.is(authorSimilarity('Robert Fitzgerald', ['Robert Fagles']), 0);
  t.is(authorSimilarity('Emily Brontë', ['Charlotte Brontë']), 0.3);
});

test('year closeness fades over ten years; publishers compare without their legal words', (t) => {
  t.deepEqual(
    [0, 1, 3, 10, 11].map((apart) => yearCloseness(2000, 2000 + apart)),
    [1, 0.75, 0.5, 0.25, 0],
  );
  t.is(publisherSimilarity('Scholastic Inc.', 'Scholastic Press'), 1);
  t.is(publisherSimilarity('Penguin Books', 'Bantam'), 0);
});

test('two works of nearly one title and a shared author are likely one work', (t) => {
  const hobbit = book({ title: 'The Hobbit', authors: [{ id: 'au_1', name: 'J.R.R. Tolkien' }] });
  t.true(
    likelySameWork(
      hobbit,
      book({ title: "The Hobbit (Leatherette Collector's Edition)", authors: [{ id: 'au_1', name: 'J. R. R. Tolkien' }] }),
    ),
  );
  t.false(likelySameWork(hobbit, book({ title: 'The Hobbit', authors: [{ id: 'au_2', name: 'Chuck Dixon' }] })));
  t.false(likelySameWork(hobbit, book({ title: 'The Silmarillion', authors: [{ id: 'au_1', name: 'J.R.R. Tolkien' }] })));
});

test('the ISBN signal says how the given ISBN relates to a candidate', (t) => {
  const isbn = parseIsbn('0439023483');
  const given = probe({ isbnText: '0439023483', isbn });
  const carrier = { id: 'bk_a', work_id: 'wk_a' };
  t.is(isbnSignal(probe({}), carrier, book({})), 'absent');
  t.is(isbnSignal(probe({ isbnText: '123' }), carrier, book({})), 'invalid');
  t.is(isbnSignal(given, carrier, book({ id: 'bk_a', work_id: 'wk_a', isbn_13: '9780439023481' })), 'match');
  t.is(isbnSignal(given, carrier, book({ id: 'bk_b', work_id: 'wk_a' })), 'other_edition');
  t.is(isbnSignal(given, carrier, book({ id: 'bk_c', work_id: 'wk_c' })), 'mismatch');
  t.is(isbnSignal(given, null, book({ id: 'bk_c', work_id: 'wk_c' })), 'unknown');
});

test('confidence: a matching ISBN decides even against the title; a wrong author or a contradicting ISBN keeps a title below the threshold', (t) => {
  const hungerGames = book({ title: 'The Hunger Games', authors: [{ id: 'au_1', name: 'Suzanne Collins' }], year: 2008 });
  t.is(assess(probe({ isbnText: 'x', isbn: parseIsbn('0439023483') }), hungerGames, 'match').confidence, 1);
  const contradicted = assess(probe({ title: 'Gone Girl', isbnText: 'x', isbn: parseIsbn('0439023483') }), hungerGames, 'match');
  t.true(contradicted.confidence >= MATCH_THRESHOLD && contradicted.confidence < 0.9);
  t.is(assess(probe({ title: 'The Hunger Games', author: 'Suzanne Collins', year: 2008 }), hungerGames, 'absent').confidence, 1);
  t.true(assess(probe({ title: 'The Hunger Games', author: 'Jane Austen' }), hungerGames, 'absent').confidence < MATCH_THRESHOLD);
  t.true(assess(probe({ title: 'The Hunger Games', author: 'Suzanne Collins' }), hungerGames, 'mismatch').confidence < 0.85);
  t.deepEqual(assess(probe({ title: 'Hunger Games' }), hungerGames, 'absent').signals, {
    isbn: 'absent',
    title: 1,
    author: null,
    year: null,
    publisher: null,
  });
});

test('a surname of six letters or more survives two typos, for less than one typo', (t) => {
  const twoTypos = authorSimilarity('George Orwekk', ['George Orwell']);
  t.true(twoTypos > 0.5 && twoTypos < authorSimilarity('George Orwel', ['George Orwell']));
  t.true(authorSimilarity('Dean Koon', ['Dean Koontz']) > 0.5);
  // A short surname does not: two edits in five letters make another name.
  t.is(authorSimilarity('Jane Brown', ['Jane Bowen']), 0);
});

// How alike two titles, author names, years or publishers are, from 0 (nothing shared) to 1 (the
// same once folded): the evidence /v1/match weighs. Pure functions over the keys of titles.ts and
// names.ts, so "The Hobbit" and "Hobbit, The", or "J.K. Rowling" and "Rowling, JK", compare equal.

import { authorKey, isGenerationWord, isInitials, splitAuthorList } from './names.js';
import type { BookRecord } from './records.js';
import { foldText } from './text.js';
import { splitTitle, titleKey, withoutTrailingParenthetical } from './titles.js';

/** Edit distance of a and b counting a swap of neighbours as one edit, or max + 1 as soon as it must exceed max. */
export function editDistance(a: string, b: string, max: number): number {
  if (Math.abs(a.length - b.length) > max) return max + 1;
  let before: number[] = [];
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const current = [i];
    let best = i;
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let value = Math.min((previous[j] ?? 0) + 1, (current[j - 1] ?? 0) + 1, (previous[j - 1] ?? 0) + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) value = Math.min(value, (before[j - 2] ?? 0) + 1);
      current.push(value);
      best = Math.min(best, value);
    }
    if (best > max) return max + 1;
    before = previous;
    previous = current;
  }
  return previous[b.length] ?? 0;
}

/** Typos a word of this length may carry and still be the same word. */
const typosAllowed = (length: number): number => (length >= 8 ? 2 : length >= 4 ? 1 : 0);

/** The same word up to typos: one edit in 4 to 7 letters, two from 8 letters; short words exactly. */
function sameWord(a: string, b: string): boolean {
  if (a === b) return true;
  const allowed = typosAllowed(Math.min(a.length, b.length));
  return editDistance(a, b, allowed) <= allowed;
}

// A word that matches only up to typos counts for a little less than an exact one, so of two
// titles the one spelt as given wins ("The Histories" over "The Historian").
const TYPO_CREDIT = 0.9;

/** Dice coefficient of two word lists, words matching up to typos (for less), each word used once. */
function wordOverlap(a: readonly string[], b: readonly string[]): number {
  return a.length === 0 || b.length === 0 ? 0 : (2 * sharedWords(a, b).shared) / (a.length + b.length);
}

/** How many words of a are in b, up to typos (for less), each word of b used once; the words of a matched up to typos; and the words of each left over. */
function sharedWords(a: readonly string[], b: readonly string[]): { shared: number; typedA: string[]; onlyA: string[]; onlyB: string[] } {
  const unused = [...b];
  const typedA: string[] = [];
  const onlyA: string[] = [];
  let shared = 0;
  for (const word of a) {
    const exact = unused.indexOf(word);
    const index = exact >= 0 ? exact : unused.findIndex((other) => sameWord(word, other));
    if (index < 0) {
      onlyA.push(word);
      continue;
    }
    unused.splice(index, 1);
    shared += exact >= 0 ? 1 : TYPO_CREDIT;
    if (exact < 0) typedA.push(word);
  }
  return { shared, typedA, onlyA, onlyB: unused };
}

/**
 * Whether a word of a given title is misspelt: no catalogue title holds it, as written or by its
 * stem (stores/elasticsearch/titleWords.ts). A misspelt word near a word of the book's title is
 * that word, where a real word as near may be another ("Prince's" is not "Princess"); knowing
 * nothing, every word counts as a real one.
 */
export type Misspelt = (word: string) => boolean;
const NOTHING_MISSPELT: Misspelt = () => false;

// Two typos in one word of five letters or more ("Shnining" for "Shining"), among words that match
// nothing else, still make the word, for less than one typo; so do up to two in a misspelt word of
// three letters or more ("Haagf Bad" for "Half Bad", "Col" for "Cold"). Never in a number.
const TWO_TYPOS_WORD_FROM = 5;
const MISSPELT_WORD_FROM = 3;
const TWO_TYPOS_WORD_CREDIT = 0.85;

/** Whether a word of the given title left unpaired is a word of the book's, also left unpaired, with up to two typos. */
function twoTyposApart(word: string, other: string, misspelt: Misspelt): boolean {
  const long = word.length >= TWO_TYPOS_WORD_FROM && other.length >= TWO_TYPOS_WORD_FROM;
  const misspeltWord = misspelt(word) && Math.min(word.length, other.length) >= MISSPELT_WORD_FROM && !/\p{N}/u.test(word + other);
  return (long || misspeltWord) && editDistance(word, other, 2) <= 2;
}

// Words that tell titles apart only with others around them.
const MINOR_WORDS = new Set([
  'a',
  'an',
  'the',
  'of',
  'and',
  'in',
  'on',
  'at',
  'to',
  'for',
  'with',
  'from',
  'by',
  'or',
  'de',
  'la',
  'le',
  'les',
  'el',
  'los',
  'las',
  'der',
  'die',
  'das',
  'und',
  'et',
  'y',
  'du',
  'des',
  'il',
]);
// A distinctive word where the book's title has another one says another book: "Death of a Cad" is
// not "Death of a Gossip", though they share three words of four. Each such pair costs this much of
// the likeness. A word only added or left out costs what the overlap says.
const OTHER_WORD_COST = 0.25;

/**
 * Words of one title that, after pairing, stand where the other has a distinctive word of its own:
 * not a piece of it ("spider" and "spiderman"), nor a short word with typos ("grli" and "girl").
 * Another number is always another word: "Book 2" is not "Book 3".
 */
function otherWords(onlyA: readonly string[], onlyB: readonly string[]): number {
  const akin = (word: string, other: string) =>
    !/\p{N}/u.test(word + other) && (other.includes(word) || word.includes(other) || editDistance(word, other, 2) <= 2);
  const distinctive = (words: readonly string[], others: readonly string[]) =>
    words.filter((word) => !MINOR_WORDS.has(word) && !others.some((other) => akin(word, other))).length;
  return Math.min(distinctive(onlyA, onlyB), distinctive(onlyB, onlyA));
}

/** How alike a title as given is to a book's, and whether they differ only in misspelt words of the given one. */
export interface TitleLikeness {
  likeness: number;
  /** The titles differ, each word of the given one matches one of the book's and those matched up to typos are misspelt. */
  misspeltOnly: boolean;
}

/**
 * Likeness of a title as given to a book's (keys): the better of shared words and shared
 * characters (which sees "spider man" in "spiderman"), less for each distinctive word the two
 * titles put in one place (see OTHER_WORD_COST). Words the record adds count more against it
 * than words it leaves out: "The Hunger Games Cookbook" says it is another book than "The Hunger
 * Games", while "Hunger Games" only says less.
 */
function keySimilarity(given: string, book: string, misspelt: Misspelt): TitleLikeness {
  if (given === book) return { likeness: given === '' ? 0 : 1, misspeltOnly: false };
  const longest = Math.max(given.length, book.length);
  const characters = 1 - editDistance(given, book, Math.ceil(longest / 2)) / longest;
  const a = given.split(' ');
  const b = book.split(' ');
  const paired = sharedWords(a, b);
  const onlyB = [...paired.onlyB];
  const typedA = [...paired.typedA];
  const onlyA = paired.onlyA.filter((word) => {
    const index = onlyB.findIndex((other) => twoTyposApart(word, other, misspelt));
    if (index < 0) return true;
    onlyB.splice(index, 1);
    typedA.push(word);
    return false;
  });
  const shared = paired.shared + TWO_TYPOS_WORD_CREDIT * (paired.onlyA.length - onlyA.length);
  const words = a.length > b.length ? shared / a.length : (2 * shared) / (a.length + b.length);
  // Titles with no word in common are far apart already: the cost is for those alike in the rest.
  const otherWordsCost = shared > 0 ? OTHER_WORD_COST * otherWords(onlyA, onlyB) : 0;
  return {
    likeness: Math.max(0, Math.max(words, characters) - otherWordsCost),
    misspeltOnly: onlyA.length === 0 && onlyB.length === 0 && typedA.every(misspelt),
  };
}

// "Cien Años de Soledad / One Hundred Years of Solitude": one book under two titles.
const TITLE_ALTERNATIVES = /\s+\/\s+/u;
// A likeness found only after taking the book's title apart counts a little less than one of the
// title as written (the record dropped a subtitle or an imprint), so "Batman: Hush" prefers
// "Batman: Hush" to "Batman: Year One". Taking the given title apart counts much less: a record
// that says more than the book's title ("Providence (Vintage Contemporaries)" against
// "Providence") may well be another book of the same name.
const BOOK_PART_CREDIT = 0.97;
const GIVEN_PART_CREDIT = 0.85;

/** What titleSimilarity needs of a book. */
export type TitleFields = Pick<BookRecord, 'title' | 'subtitle'> & Partial<Pick<BookRecord, 'series' | 'series_number'>>;

/**
 * The keys of a title as written (series parenthetical aside; without a second leading article, as
 * in "The Der Verehrer", too), and the keys of its parts: without the subtitle or a trailing
 * parenthetical, each side of " / ", and followed by its series as a record without punctuation
 * writes it ("Dead Heat Alpha and Omega 4").
 */
function titleForms(book: TitleFields): { whole: string[]; parts: string[] } {
  const { title: main, subtitle: parsedSubtitle } = splitTitle(book.title);
  const sub = book.subtitle ?? parsedSubtitle;
  const key = titleKey(sub ? `${main} ${sub}` : main);
  // titleKey drops one leading article; a key of a key drops a second one.
  const whole = [...new Set([key, titleKey(key)])];
  const series = book.series ? [`${main} ${book.series}`, `${main} ${book.series} ${book.series_number ?? ''}`] : [];
  const parts = [main, withoutTrailingParenthetical(main), ...main.split(TITLE_ALTERNATIVES), ...series].map(titleKey);
  return { whole, parts: [...new Set(parts)].filter((part) => part !== '' && !whole.includes(part)) };
}

/** Whether the trailing parenthetical of a title names the book's series: "(Honor Harrington Series, Book 6)". */
function namesSeries(title: string, book: TitleFields): boolean {
  const main = splitTitle(title).title;
  const rest = withoutTrailingParenthetical(main);
  if (!book.series || rest === main) return false;
  return wordOverlap(titleKey(main.slice(rest.length)).split(' '), titleKey(book.series).split(' ')) >= 0.5;
}

/**
 * How alike a title as given is to a book's title. Sees through a series in parentheses (or
 * without them), a dropped or added subtitle, a trailing "(Penguin Classics)", either side of
 * "original / translation", leading articles, punctuation, case, diacritics and typos.
 */
export function titleSimilarity(given: string, book: TitleFields): number {
  return titleLikeness(given, book).likeness;
}

/** titleSimilarity, knowing which words of the given title are misspelt, and whether the titles differ only in those. */
export function titleLikeness(given: string, book: TitleFields, misspelt: Misspelt = NOTHING_MISSPELT): TitleLikeness {
  const mine = titleForms({ title: given, subtitle: null });
  const theirs = titleForms(book);
  const credited = (forms: { whole: string[]; parts: string[] }, partCredit: number) => [
    ...forms.whole.map((key) => ({ key, credit: 1 })),
    ...forms.parts.map((key) => ({ key, credit: partCredit })),
  ];
  let best: TitleLikeness = { likeness: 0, misspeltOnly: false };
  for (const form of credited(mine, namesSeries(given, book) ? BOOK_PART_CREDIT : GIVEN_PART_CREDIT)) {
    for (const other of credited(theirs, BOOK_PART_CREDIT)) {
      const keys = keySimilarity(form.key, other.key, misspelt);
      const likeness = form.credit * other.credit * keys.likeness;
      if (likeness > best.likeness || (likeness === best.likeness && keys.misspeltOnly))
        best = { likeness, misspeltOnly: keys.misspeltOnly };
    }
  }
  return best;
}

/**
 * Whether a piece of a credit line with a comma is one name written surname first ("Rowling, J.K.",
 * "Vonnegut, Kurt", "Le Guin, Ursula K.") rather than a list ("Piers Anthony, Larissa
 * Volokhonsky"): one comma, and one side a single word or ending in initials.
 */
function isSurnameFirst(piece: string): boolean {
  const capitalsAreInitials = /\p{Ll}/u.test(piece);
  const sides = piece.split(',').map((side) => side.trim().split(/\s+/u));
  return sides.length === 2 && sides.some((words) => words.length === 1 || isInitials(words.at(-1) ?? '', capitalsAreInitials));
}

/** The names a credit line may hold: each of a list, and a piece that is one name written surname first. */
function creditedNames(line: string): string[] {
  const pieces = line.split(/\s*(?:;|&|\band\b|\bwith\b)\s*/iu);
  const names = pieces.flatMap((piece) => (!piece.includes(',') || isSurnameFirst(piece) ? [piece] : splitAuthorList(piece)));
  return [...new Set(names.map(authorKey).filter((key) => key !== ''))];
}

// A surname of six letters or more survives two typos ("Clavzl" for "Clavell", "Koon" for
// "Koontz"), for less: two edits in a short name could make another name.
const SURNAME_TWO_TYPOS_FROM = 6;
const SURNAME_TYPED_AT_LEAST = 4;
const TWO_TYPOS_CREDIT = 0.75;

/** How surely two surnames are one: 1 up to the typos sameWord allows, less up to two typos in a surname of six letters or more, else 0. */
function surnameLikeness(a: string, b: string): number {
  if (sameWord(a, b)) return 1;
  const long = Math.max(a.length, b.length) >= SURNAME_TWO_TYPOS_FROM && Math.min(a.length, b.length) >= SURNAME_TYPED_AT_LEAST;
  return long && editDistance(a, b, 2) <= 2 ? TWO_TYPOS_CREDIT : 0;
}

/** Same surname (up to typos): 0.9 with given names or initials that agree, 0.8 for a surname alone, 0.3 for another given name. */
function sameSurname(words: string[], other: string[]): number {
  const surname = surnameLikeness(words.at(-1) ?? '', other.at(-1) ?? '');
  if (surname === 0) return 0;
  const given = words.slice(0, -1);
  const otherGiven = other.slice(0, -1);
  if (given.length === 0 || otherGiven.length === 0) return 0.8 * surname;
  return (given[0]?.[0] === otherGiven[0]?.[0] ? 0.9 : 0.3) * surname;
}

/**
 * How alike two author keys are. The same surname (up to typos) with compatible given names or
 * initials ("j rowling", "jk rowling", "joanne k rowling") is nearly certain; the same words in
 * another order almost so; the same surname with a different given name ("emily bronte",
 * "charlotte bronte") is another person. A name stored surname first without a comma
 * ("Scott, Cunningham" read as given name Cunningham) is tried the other way round too.
 */
function nameSimilarity(a: string, b: string): number {
  if (a === b) return 1;
  // Generations end a key ("frank b gilbreth jr") but are not the surname.
  const wordsA = a.split(' ').filter((word) => !isGenerationWord(word));
  const wordsB = b.split(' ').filter((word) => !isGenerationWord(word));
  if (wordOverlap(wordsA, wordsB) === 1) return 0.95; // same words, another order
  const reversed = [...wordsB.slice(1), ...wordsB.slice(0, 1)];
  return Math.max(sameSurname(wordsA, wordsB), 0.95 * sameSurname(wordsA, reversed));
}

/**
 * How well an author as given matches the authors credited on a book: the best pair, so an
 * illustrator or translator listed as well (or instead) costs nothing while one credited author
 * matches. Sees through initials, surname-first order, diacritics and typos.
 */
export function authorSimilarity(given: string, credited: readonly string[]): number {
  const keys = credited.map(authorKey);
  let best = 0;
  for (const name of creditedNames(given)) {
    for (const key of keys) best = Math.max(best, nameSimilarity(name, key));
  }
  return best;
}

/** Editions of one work appear in different years, so a year only weighs a little and fades over a few years. */
export function yearCloseness(given: number, year: number): number {
  const apart = Math.abs(given - year);
  return apart === 0 ? 1 : apart === 1 ? 0.75 : apart <= 3 ? 0.5 : apart <= 10 ? 0.25 : 0;
}

// Words that say a name is a publisher without telling publishers apart.
const PUBLISHER_NOISE = new Set([
  'inc',
  'ltd',
  'llc',
  'co',
  'company',
  'corp',
  'publishing',
  'publishers',
  'publisher',
  'publications',
  'press',
  'books',
  'book',
  'group',
  'the',
  'and',
]);

const publisherWords = (name: string): string[] =>
  foldText(name)
    .split(/[^\p{L}\p{N}]+/u)
    .filter((word) => word !== '' && !PUBLISHER_NOISE.has(word));

/** How alike two publisher names are ("Scholastic Inc." and "Scholastic Press" are alike). */
export function publisherSimilarity(given: string, publisher: string): number {
  return wordOverlap(publisherWords(given), publisherWords(publisher));
}

type TitledBook = TitleFields & Pick<BookRecord, 'authors'>;

/**
 * Whether two books are probably editions of one work that the catalogue keeps apart ("The Hobbit"
 * and "The Hobbit (Leatherette Collector's Edition)"): nearly the same title and a shared author.
 * Either way round: title likeness weighs words a given title adds more than words it lacks, so a
 * label one title carries ("(Now in Paperback!)") counts on one side only.
 */
export function likelySameWork(a: TitledBook, b: TitledBook): boolean {
  return likelyEditionOf(a, b) || likelyEditionOf(b, a);
}

function likelyEditionOf(given: TitledBook, book: TitledBook): boolean {
  if (titleSimilarity(given.title, book) < 0.9) return false;
  const credited = book.authors.map((author) => author.name);
  return given.authors.some((author) => authorSimilarity(author.name, credited) >= 0.8);
}

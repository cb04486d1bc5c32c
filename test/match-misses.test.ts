import test from 'ava';
import { assess, MATCH_THRESHOLD, type MatchProbe } from '../src/domain/matching.js';
import type { BookRecord } from '../src/domain/records.js';
import { titleSimilarity } from '../src/domain/similarity.js';
import { bookRecord } from './helpers/records.js';

const book = (title: string, author: string) => bookRecord({ title, authors: [{ id: 'au_000000000001', name: author }] });
const probe = (title: string, author: string): MatchProbe => ({ title, author, isbnText: null, isbn: null, year: null, publisher: null });
const confidence = (title: string, author: string, of: BookRecord) => assess(probe(title, author), of, 'absent').confidence;

test('a title that opens like another book of the author but ends in another distinctive word is not that book', (t) => {
  const gossip = book('Death of a Gossip', 'M.C. Beaton');
  t.true(confidence('Death of a Cad', 'M.C. Beaton', gossip) < MATCH_THRESHOLD);
  t.true(
    confidence('The World According to Lighthouse', 'John Irving', book('The World According to Garp', 'John Irving')) < MATCH_THRESHOLD,
  );
  t.true(confidence('Book 3', 'Anyone', book('Book 2', 'Anyone')) < MATCH_THRESHOLD);
  // The book itself, and its title with a typo, a word left out or a word run together, still match.
  t.is(confidence('Death of a Gossip', 'M.C. Beaton', gossip), 1);
  t.true(confidence('Death of a Gosip', 'Beaton', gossip) >= MATCH_THRESHOLD);
  t.true(titleSimilarity('Spider Man', { title: 'Spiderman', subtitle: null }) >= 0.9);
});

test('two typos in one word of the title, with the surname alone, still match', (t) => {
  t.true(confidence('Ecilpes', 'Meyer', book('Eclipse', 'Stephenie Meyer')) >= MATCH_THRESHOLD);
  t.true(confidence('The Mdixife', 'Worth', book('The Midwife', 'Jennifer Worth')) >= MATCH_THRESHOLD);
  // Given alone, such a title is too unsure.
  t.true(assess({ ...probe('Ecilpes', ''), author: null }, book('Eclipse', 'Stephenie Meyer'), 'absent').confidence < MATCH_THRESHOLD);
});

// Words no catalogue title holds, as the index would say for these records.
const misspelt =
  (...words: string[]) =>
  (word: string) =>
    words.includes(word);
const alone = (title: string): MatchProbe => ({ ...probe(title, ''), author: null });

test('a title given alone that differs from a book only in misspelt words is that book; a real word as near is another book', (t) => {
  const victim = book('The First Victim', 'Ridley Pearson');
  t.true(assess(alone('The First Vcitim'), victim, 'absent', null, misspelt('vcitim')).confidence >= MATCH_THRESHOLD);
  // Not known to be misspelt, the word may be another: the title is too unsure alone.
  t.true(assess(alone('The First Vcitim'), victim, 'absent').confidence < MATCH_THRESHOLD);
  const princess = book('The Princess Bride', 'William Goldman');
  t.true(assess(alone("The Prince's Bride"), princess, 'absent', null, misspelt()).confidence < MATCH_THRESHOLD);
  // A word more or less is no misspelling, whatever else is misspelt.
  t.true(assess(alone('The First Vcitim Returns'), victim, 'absent', null, misspelt('vcitim')).confidence < MATCH_THRESHOLD);
});

test('a misspelt short word of the title may carry two typos, with the surname alone', (t) => {
  const halfBad = book('Half Bad', 'Sally Green');
  t.true(confidence('Haagf Bad', 'Green', halfBad) < MATCH_THRESHOLD);
  t.true(assess(probe('Haagf Bad', 'Green'), halfBad, 'absent', null, misspelt('haagf')).confidence >= MATCH_THRESHOLD);
  t.true(
    assess(probe('The Col Dishh', 'Johnson'), book('The Cold Dish', 'Craig Johnson'), 'absent', null, misspelt('col', 'dishh'))
      .confidence >= MATCH_THRESHOLD,
  );
});

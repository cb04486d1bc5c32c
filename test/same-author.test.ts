import test from 'ava';
import { sameAuthorNames } from '../src/domain/names.js';

test('names that can be one person: initials for given names, a middle name more or less, surname first, capitals', (t) => {
  for (const [a, b] of [
    ['J.K. Rowling', 'Joanne K. Rowling'],
    ['J.K. Rowling', 'Joanne Rowling'],
    ['Rowling, J.K.', 'J. K. Rowling'],
    ['Ursula K. Le Guin', 'Ursula Le Guin'],
    ['Dean R. Koontz', 'Dean Koontz'],
    ['J.R.R. Tolkien', 'John Ronald Reuel Tolkien'],
    ['STEPHEN KING', 'Stephen King'],
    ['Sir Arthur Conan Doyle', 'Arthur Conan Doyle'],
    ['Andre Dubus III', 'Andre Dubus III'],
    ['Homer', 'Homer'],
    ['David B.', 'DAVID B.'],
  ]) {
    t.true(sameAuthorNames(a!, b!), `${a} / ${b}`);
    t.true(sameAuthorNames(b!, a!), `${b} / ${a}`);
  }
});

test('names that are other people, or too unsure to join: another given name, a generation, a nickname, a surname alone', (t) => {
  for (const [a, b] of [
    ['Emily Bronte', 'Charlotte Brontë'],
    ['Christopher Tolkien', 'J.R.R. Tolkien'],
    ['Kurt Vonnegut Jr.', 'Kurt Vonnegut'],
    ['Andre Dubus III', 'Andre Dubus'],
    ['Jeff Deaver', 'Jeffery Deaver'],
    ['Homer', 'Bart Homer'],
    ['Suzanne Collins', 'Jane Collins'],
    ['OL123A', 'Stephen King'],
  ]) {
    t.false(sameAuthorNames(a!, b!), `${a} / ${b}`);
    t.false(sameAuthorNames(b!, a!), `${b} / ${a}`);
  }
});

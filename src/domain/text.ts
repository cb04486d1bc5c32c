// Text normalization shared by title and author keys, so both fold text the same way.

import { rememberingAnswers } from './memo.js';

// Letters that are not a base letter plus a combining mark, so NFKD leaves them whole.
const LETTERS_WITHOUT_DECOMPOSITION: Readonly<Record<string, string>> = {
  ß: 'ss',
  æ: 'ae',
  œ: 'oe',
  ø: 'o',
  đ: 'd',
  ð: 'd',
  þ: 'th',
  ł: 'l',
  ı: 'i',
  ħ: 'h',
};
const LETTER_WITHOUT_DECOMPOSITION = new RegExp(`[${Object.keys(LETTERS_WITHOUT_DECOMPOSITION).join('')}]`, 'gu');
const COMBINING_MARK = /\p{M}/gu;

/** Lower case with diacritics folded away: "Brontë" → "bronte", "Straße" → "strasse", "Møller" → "moller". */
export const foldText = rememberingAnswers(function foldText(s: string): string {
  return s
    .toLowerCase()
    .normalize('NFKD')
    .replace(COMBINING_MARK, '')
    .replace(LETTER_WITHOUT_DECOMPOSITION, (letter) => LETTERS_WITHOUT_DECOMPOSITION[letter] ?? letter);
});

/** How many diacritics the text carries: combining marks plus letters such as ß or ø. */
export function countDiacritics(s: string): number {
  const decomposed = s.toLowerCase().normalize('NFKD');
  return (decomposed.match(COMBINING_MARK)?.length ?? 0) + (decomposed.match(LETTER_WITHOUT_DECOMPOSITION)?.length ?? 0);
}

/** Runs of whitespace become one space; the ends are trimmed. */
export function collapseWhitespace(s: string): string {
  return s.replace(/\s+/gu, ' ').trim();
}

/** Client text quoted in a message: JSON escapes (control characters stay visible), at most 64 characters. */
export function quoted(text: string): string {
  return JSON.stringify(text.length > 64 ? `${text.slice(0, 64)}…` : text);
}

// A word split where its apostrophe was, as spreadsheets, OCR and other systems' exports write it:
// an elided first letter before a word ("o connor", "l engle", "d artagnan"), and a clitic after
// one ("handmaid s", "don t", "you re", "we ll", "she d") or after "I" ("i ve", "i m", "i ll", "i d").
// A letter among initials is none of them ("j d salinger", "a s byatt", "caragh m. o brien").
const ELIDED_LETTER = /(?<![\p{L}\p{M}\p{N}'’])(?<!(?:^|\s)\p{L} )([dlo]) (?=\p{L}{2})/giu;
const CLITIC = /(?<=(?:^|\s)(?:\p{L}{2,}|i)) (s|t|re|ll|ve|m|d)(?![\p{L}\p{M}\p{N}'’.])/giu;

/**
 * The text with words split at an apostrophe joined again ("flannery o connor" → "flannery
 * o'connor", "the handmaid s tale" → "the handmaid's tale"), or null when it has none. A reading,
 * not a correction: "O Pioneers!" reads the same way, so callers look for both texts.
 */
export function rejoinedApostrophes(text: string): string | null {
  const joined = text.replace(ELIDED_LETTER, "$1'").replace(CLITIC, "'$1");
  return joined === text ? null : joined;
}

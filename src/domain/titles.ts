// Book titles: the series suffix and subtitle Goodreads packs into one string, and the key that
// groups editions of one work.

import { collapseWhitespace, foldText } from './text.js';

/** A raw title taken apart. `title` is never empty. */
export interface TitleParts {
  title: string;
  subtitle: string | null;
  series: string | null;
  /** As written after `#`: "1", "0.5", "1-3"; null when no number follows. */
  seriesNumber: string | null;
}

/**
 * Splits "Mort (Death, #1; Discworld, #4)" into title "Mort", series "Death", number "1", and
 * "Flu: The Story of the Great Influenza Pandemic" into title "Flu" and its subtitle.
 *
 * Only a trailing parenthetical with a `#` names a series; when it lists several, the first is
 * kept. Other trailing parentheticals stay in the title: they are as often part of it
 * ("I Am America (And So Can You!)") as an imprint ("(Penguin Classics)"), and dropping words
 * from a title loses more than keeping them.
 */
export function splitTitle(raw: string): TitleParts {
  const text = collapseWhitespace(raw);
  const { rest, series, seriesNumber } = takeSeriesSuffix(text);
  const { title, subtitle } = takeSubtitle(rest);
  if (title === '') return { title: text === '' ? raw : text, subtitle: null, series: null, seriesNumber: null };
  return { title, subtitle, series, seriesNumber };
}

interface SeriesSuffix {
  rest: string;
  series: string | null;
  seriesNumber: string | null;
}

// The first entry of a series parenthetical: "The Hunger Games, #1", "Dune Chronicles #1",
// "Day by Day Armageddon,# 2"; the name ends before the `#`, minus separators.
const SERIES_ENTRY = /^(.*?)[\s,.;:]*#\s*(.*)$/su;
// "1", "0.5", "1-2", "1–3", "3" in "3: Part 2 of 2"; anything after the number is dropped.
const SERIES_NUMBER = /^\d+(?:\.\d+)?(?:\s*[-–]\s*\d+(?:\.\d+)?)?/u;

function takeSeriesSuffix(text: string): SeriesSuffix {
  const none = { rest: text, series: null, seriesNumber: null };
  const open = openingOfTrailingParenthetical(text);
  if (open === null) return none;
  const inner = text.slice(open + 1, -1);
  const entry = SERIES_ENTRY.exec(inner);
  const series = entry?.[1]?.trim() ?? '';
  if (series === '') return none;
  const number = SERIES_NUMBER.exec(entry?.[2] ?? '');
  return {
    rest: text.slice(0, open).trim(),
    series,
    seriesNumber: number ? number[0].replace(/\s*[-–]\s*/u, '-') : null,
  };
}

/** Where the parenthetical that ends the text opens, balancing nested pairs: "Ranma ½ (US 2nd)". */
function openingOfTrailingParenthetical(text: string): number | null {
  if (!text.endsWith(')')) return null;
  let depth = 0;
  for (let i = text.length - 1; i >= 0; i--) {
    if (text[i] === ')') depth++;
    if (text[i] === '(' && --depth === 0) return i;
  }
  return null;
}

/** The title without a trailing parenthetical, nested ones included: "With a Tangled Skein (Incarnations of Immortality (Paperback))". */
export function withoutTrailingParenthetical(title: string): string {
  const text = title.trimEnd();
  const open = openingOfTrailingParenthetical(text);
  return open === null ? text : text.slice(0, open).trim() || text;
}

/** Splits at the first ": " outside parentheses; both sides must be non-empty. */
function takeSubtitle(text: string): { title: string; subtitle: string | null } {
  let depth = 0;
  for (let i = 0; i < text.length - 1; i++) {
    const character = text[i];
    if (character === '(' || character === '[') depth++;
    if ((character === ')' || character === ']') && depth > 0) depth--;
    if (character === ':' && text[i + 1] === ' ' && depth === 0) {
      const title = text.slice(0, i).trim();
      const subtitle = text.slice(i + 2).trim();
      if (title !== '' && subtitle !== '') return { title, subtitle };
    }
  }
  return { title: text, subtitle: null };
}

const LEADING_ARTICLES = new Set(['the', 'a', 'an', 'le', 'la', 'les', 'der', 'die', 'das', 'el']);
// Characters that join the parts of one word: "Ender's", "Dr.", "U.S.A."; other punctuation separates words.
const JOINING_PUNCTUATION = /['’ʼ.]/gu;
const ELIDED_ARTICLE = /^l['’]/u; // "L'Étranger"

/**
 * The key that groups editions of one work and matches messy titles: folded, lower case, `&` read
 * as "and", punctuation removed, a leading article dropped, whitespace collapsed.
 * "The Lord of the Rings" and "Lord of the Rings" give "lord of the rings". Pass the title only
 * (`splitTitle(raw).title`): series and subtitles are not part of the key.
 */
export function titleKey(title: string): string {
  const words = foldText(title)
    .replace(ELIDED_ARTICLE, '')
    .replace(/&/gu, ' and ')
    .replace(JOINING_PUNCTUATION, '')
    .split(/[^\p{L}\p{N}]+/u)
    .filter((word) => word !== '');
  // An article alone is the whole title ("A"), so it stays.
  if (words.length > 1 && LEADING_ARTICLES.has(words[0] ?? '')) words.shift();
  return words.join(' ');
}

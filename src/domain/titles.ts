// Book titles: the series suffix and subtitle Goodreads packs into one string, and the key that
// groups editions of one work.

import { collapseWhitespace, foldText } from './text.js';
import { rememberingAnswers } from './memo.js';

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
export const titleKey = rememberingAnswers(function titleKey(title: string): string {
  const words = foldText(title)
    .replace(ELIDED_ARTICLE, '')
    .replace(/&/gu, ' and ')
    .replace(JOINING_PUNCTUATION, '')
    .split(/[^\p{L}\p{N}]+/u)
    .filter((word) => word !== '');
  // An article alone is the whole title ("A"), so it stays.
  if (words.length > 1 && LEADING_ARTICLES.has(words[0] ?? '')) words.shift();
  return words.join(' ');
});

// A trailing parenthetical that reads on from the title is part of it: "I Am America (And So Can
// You!)", "Fifty Shades (of Grey)". One that names an imprint, format, language edition, volume,
// reading-group label or the series ("(Signet Classics (Paperback))", "(Spanish Language Edition)",
// "(Book 1)", "(Oprah's Book Club)", "(Discworld Novels)") labels an edition.
const READS_ON =
  /^(?:and|or|but|nor|so|yet|of|from|with|without|to|for|in|on|at|by|as|if|when|where|how|why|what|who|which|that|than|not)\b|[!?]$/iu;
const STARTS_LOWER = /^\p{Ll}/u;
// "Good Mother, The": a leading article written after the title.
const TRAILING_ARTICLE = /,\s*(?:the|a|an)$/iu;

/**
 * The title a work is known by, without what labels one edition: trailing parentheticals that do
 * not read on from the title, and a leading article written last. "1984 (Signet Classics
 * (Paperback))" and "1984 (Spanish Language Edition)" are "1984"; "I Am America (And So Can You!)"
 * stays whole. Pass the title only (`splitTitle(raw).title`).
 */
export function workTitle(title: string): string {
  let text = collapseWhitespace(title);
  for (;;) {
    const open = openingOfTrailingParenthetical(text);
    if (open === null) break;
    const inner = text.slice(open + 1, -1).trim();
    const rest = text.slice(0, open).trim();
    if (rest === '' || STARTS_LOWER.test(inner) || READS_ON.test(inner)) break;
    text = rest;
  }
  return text.replace(TRAILING_ARTICLE, '') || text;
}

/**
 * What a work is: one book, or a set of books sold together (`boxset`), several books in one
 * volume (`omnibus`), or a book about or after books (`companion`: guides, summaries, study notes,
 * screenplays and graphic-novel retellings, the world of a series). A boxset, omnibus or companion
 * is a work of its own and never stands in for the books it gathers or accompanies.
 */
export type WorkKind = 'book' | 'boxset' | 'omnibus' | 'companion';
export const WORK_KINDS: readonly WorkKind[] = ['book', 'boxset', 'omnibus', 'companion'];

const BOXSET = /\bbox(?:ed)?[\s-]*sets?\b|\bboxset\b|\bgift\s+set\b|\bslipcase\b|\b\d+[\s-]*(?:copy|book|volume)\s+(?:boxed\s+)?set\b/iu;
const COMPANION =
  /\bcompanion\b|\b(?:official|ultimate|unofficial|illustrated|definitive|visual|essential)\s+guide\b|\bguide\s+to\s+the\s+(?:world|films?|movies?|series)\b|\bpage\s+to\s+screen\b|\bscreenplay\b|\bthe\s+making\s+of\b|\bbehind\s+the\s+scenes\b|\bcoloring\s+book\b|\bcookbook\b|\bencyclopedia\b|\bfilm\s+wizardry\b|\bmovie\s+(?:scrapbook|storybook)\b/iu;
// A book that helps read another: a summary, a study guide or notes (the publishers' own names for
// them too), a teacher's or reading group's guide, a workbook to it. Placed where they say so
// ("Summary of …", "… : A Novel Study", "… - Workbook"), so that books of such words ("Notes from
// a Small Island", "The Anxiety and Phobia Workbook", "Summary Judgment") stay books.
const STUDY_AID = new RegExp(
  [
    String.raw`\b(?:spark\s*notes|cliff['’]?s?\s*notes|(?:york|monarch|coles|brodie['’]?s|barron['’]?s\s+book|bright|max)\s*notes|bookrags|gradesaver|shmoop|litcharts|instaread|novel[\s-]+(?:units?|ties))\b`,
    String.raw`\b(?:study|reading(?:\s+group)?|readers?['’]?s?|discussion|literature|teachers?['’]?s?|teaching|book\s+club)\s+(?:guide|notes|unit|kit)s?\b`,
    String.raw`\bnovel\s+stud(?:y|ies)\b|\blesson\s+plans?\b|\bsummary\s+(?:&|and)\s+analysis\b`,
    // At the start of the title or subtitle: "Summary of …", "Analysis of …", "Workbook for …", "…: A Summary".
    String.raw`(?:^|:\s)(?:an?\s+)?(?:(?:summary|synopsis)\s*(?:of\b|:|$)|(?:critical\s+|literary\s+)?analysis\s+of\b|(?:companion\s+|student\s+)?workbook\s*(?:(?:for|to|on)\b|:|$))`,
    // As a label: "… - Workbook", "(Companion Workbook)", "Hamlet: Notes".
    String.raw`(?:\s[-–]\s*|\()(?:companion\s+|student\s+)?workbook\b|:\s(?:study\s+)?notes$`,
  ].join('|'),
  'iu',
);
// A book retold in another form: "Twilight: The Graphic Novel", "The Hobbit: Graphic Novel",
// "Coraline (Graphic Novel)". "A Graphic Novel" is as often a book first written so ("Seconds: A
// Graphic Novel"), so it stays a book.
const ADAPTATION = /\bthe\s+graphic\s+novel\b|:\s+graphic\s+novel\b|\(\s*graphic\s+novel\s*\)|\bgraphic\s+novel\s+adaptation\b/iu;
const OMNIBUS =
  /\bomnibus\b|\bcollection\b|\bcomplete\b|\btrilogy\b|\bquartet\b|\bsaga\s+set\b|\b(?:books|volumes|vols\.?)\s+\d+\s*(?:-|–|to|&|and)\s*\d+\b|\b\d+\s*(?:-|–)\s*\d+\s+(?:books|novels)\b/iu;
// A series number that is a range or a list of volumes: "1-3", "1-7".
const VOLUME_RANGE = /[-–,&]/u;

/**
 * The kind of a work from one edition's title (with its qualifiers, `splitTitle(raw).title`), its
 * subtitle and series number. A boxset or companion says so anywhere in its title; an omnibus in
 * the work's own title ("The Complete Sherlock Holmes", not "(Hitchhiker's Trilogy)", which labels
 * one volume) or by a range of volumes ("#1-3").
 */
export function workKind(edition: { title: string; subtitle: string | null; seriesNumber: string | null }): WorkKind {
  const whole = edition.subtitle ? `${edition.title}: ${edition.subtitle}` : edition.title;
  if (BOXSET.test(whole)) return 'boxset';
  if (COMPANION.test(whole) || STUDY_AID.test(whole) || ADAPTATION.test(whole)) return 'companion';
  const own = edition.subtitle ? `${workTitle(edition.title)}: ${edition.subtitle}` : workTitle(edition.title);
  if (OMNIBUS.test(own) || VOLUME_RANGE.test(edition.seriesNumber ?? '')) return 'omnibus';
  return 'book';
}

// Author names: splitting goodbooks author lists, cleaning capitals, and an identity key that
// treats "J.K. Rowling", "J. K. Rowling", "JK Rowling" and "Rowling, J.K." as one person.

import { collapseWhitespace, countDiacritics, foldText } from './text.js';

export { foldText } from './text.js';

// ---------------------------------------------------------------------------------------------
// Tokens

const HAS_LOWER_CASE = /\p{Ll}/u;
const HAS_UPPER_CASE = /\p{Lu}/u;
// "J." "J.K." "J.R.R." and also "J.K" without the final period.
const INITIALS_WITH_PERIODS = /^\p{L}(?:\.\p{L})*\.$|^\p{L}(?:\.\p{L})+$/u;
const SINGLE_LETTER = /^\p{L}$/u;
// "JK", "JRR", "CS": only read as initials inside a name that is not all capitals.
const CAPITALS_AS_INITIALS = /^\p{Lu}{2,3}$/u;
// "J.K.Rowling": initials run into the surname without a space.
const INITIAL_RUN_INTO_WORD = /(\p{Lu}\.)(?=\p{Lu}\p{Ll})/gu;

/** Letters only, no case, no diacritics: what two spellings of a token must share to be the same. */
function bareToken(token: string): string {
  return foldText(token).replace(/[^\p{L}\p{N}]/gu, '');
}

function isAllCaps(text: string): boolean {
  return HAS_UPPER_CASE.test(text) && !HAS_LOWER_CASE.test(text);
}

function count(text: string, pattern: RegExp): number {
  return text.match(pattern)?.length ?? 0;
}

// ---------------------------------------------------------------------------------------------
// Affixes: words around a name that are not given names or surnames

type AffixKind = 'generation' | 'degree' | 'honorific';

const AFFIXES: ReadonlyMap<string, AffixKind> = new Map([
  // A generation tells people apart: Andre Dubus III is not his father Andre Dubus.
  ['jr', 'generation'],
  ['sr', 'generation'],
  ['ii', 'generation'],
  ['iii', 'generation'],
  ['iv', 'generation'],
  // Degrees identify nobody; Book-Crossing scatters them inside names ("ANDREW MD WEIL").
  ['md', 'degree'],
  ['phd', 'degree'],
  // Titles said before a name ("Thomas, Sir Malory" is Sir Thomas Malory).
  ['dr', 'honorific'],
  ['sir', 'honorific'],
  ['rev', 'honorific'],
]);

function affixKind(token: string): AffixKind | null {
  return AFFIXES.get(bareToken(token)) ?? null;
}

function tokensOf(text: string): string[] {
  return collapseWhitespace(text.replace(INITIAL_RUN_INTO_WORD, '$1 '))
    .split(' ')
    .filter((token) => token !== '');
}

/**
 * The tokens of a name in reading order, given name first, generation suffixes last.
 *
 * A comma means one of three things. "Rowling, J.K." is surname first. "Bill Martin, Jr." only
 * sets off a suffix. Book-Crossing also writes "Kurt, Jr. Vonnegut" and "E.D., Jr. Hirsch":
 * given name, then affix and surname. When neither side starts with an affix, the side holding
 * initials is the given name; without initials, surname first is assumed ("Vonnegut, Kurt").
 */
function tokensInReadingOrder(name: string): string[] {
  const honorifics: string[] = [];
  const generations: string[] = [];
  const nameParts: Array<{ tokens: string[]; afterAffix: boolean }> = [];
  name.split(',').forEach((part, index) => {
    const tokens = tokensOf(part);
    // Affixes lead a part after a comma ("Kurt, Jr. Vonnegut") or make up a whole part ("King, Jr.").
    let start = 0;
    while (start < tokens.length && affixKind(tokens[start] ?? '') !== null) start++;
    if (index === 0 && start < tokens.length) start = 0;
    for (const token of tokens.slice(0, start)) {
      const kind = affixKind(token);
      if (kind === 'honorific') honorifics.push(token);
      if (kind === 'generation') generations.push(token);
    }
    if (start < tokens.length) nameParts.push({ tokens: tokens.slice(start), afterAffix: start > 0 });
  });

  const [head, tail, ...rest] = nameParts;
  let ordered: string[];
  if (head === undefined) ordered = [];
  else if (tail === undefined) ordered = head.tokens;
  else {
    const givenNameFirst = tail.afterAffix || (hasInitials(head.tokens) && !hasInitials(tail.tokens));
    ordered = givenNameFirst ? [...head.tokens, ...tail.tokens] : [...tail.tokens, ...head.tokens];
    ordered.push(...rest.flatMap((part) => part.tokens));
  }
  return [...honorifics, ...withGenerationsLast(ordered), ...generations];
}

function hasInitials(tokens: string[]): boolean {
  return tokens.some((token) => INITIALS_WITH_PERIODS.test(token) || SINGLE_LETTER.test(token));
}

/** "ANDRE III DUBUS" → "ANDRE DUBUS III"; degrees after the first token are dropped. */
function withGenerationsLast(tokens: string[]): string[] {
  const kept: string[] = [];
  const generations: string[] = [];
  tokens.forEach((token, index) => {
    const kind = index === 0 ? null : affixKind(token);
    if (kind === 'generation') generations.push(token);
    else if (kind !== 'degree') kept.push(token);
  });
  return [...kept, ...generations];
}

// ---------------------------------------------------------------------------------------------
// Public functions

/**
 * The identity key of an author: folded, lower case, no punctuation, in reading order, with
 * consecutive initials joined. "J.K. Rowling", "J. K. Rowling", "JK Rowling", "j k rowling",
 * "J.K. ROWLING" and "Rowling, J.K." all give "jk rowling".
 *
 * A token counts as initials when written with periods, when it is a single letter, or when it
 * is in capitals ("JK") inside a name that is not all capitals. So "Li" and "Wu" stay names,
 * and "JK ROWLING" gives "jk rowling" anyway, because joined initials read the same as the token.
 */
export function authorKey(name: string): string {
  return keyWords(name)
    .map((word) => word.text)
    .join(' ');
}

/** The words of a name's identity key (see authorKey), each marked as joined initials or a word. */
function keyWords(name: string): { text: string; initials: boolean }[] {
  const tokens = tokensInReadingOrder(name);
  const capitalsAreInitials = !isAllCaps(name);
  const words: { text: string; initials: boolean }[] = [];
  let initials = '';
  for (const token of tokens) {
    if (isInitials(token, capitalsAreInitials)) {
      initials += bareToken(token);
      continue;
    }
    if (initials !== '') words.push({ text: initials, initials: true });
    initials = '';
    // Hyphens and other inner punctuation separate words: "Saint-Exupéry" matches "Saint Exupery".
    for (const text of foldText(token)
      .replace(/[.'’]/gu, '')
      .split(/[^\p{L}\p{N}]+/u))
      words.push({ text, initials: false });
  }
  if (initials !== '') words.push({ text: initials, initials: true });
  return words.filter((word) => word.text !== '');
}

/**
 * Whether a token of a name is initials: "J.", "J.K.", "J.K", a single letter, or "JK" where
 * `capitalsAreInitials` (the name is not all capitals); never a suffix such as "III" or "Jr.".
 */
export function isInitials(token: string, capitalsAreInitials: boolean): boolean {
  if (affixKind(token) !== null) return false; // "III" and "Jr." are not initials
  return INITIALS_WITH_PERIODS.test(token) || SINGLE_LETTER.test(token) || (capitalsAreInitials && CAPITALS_AS_INITIALS.test(token));
}

/** Whether a word of an identity key is a generation suffix ("jr", "iii"). */
export const isGenerationWord = (word: string): boolean => affixKind(word) === 'generation';

/**
 * The author part of the key that groups editions into works (an identity key in, a shorter key
 * out): the initial of the first name and the surname, generation suffixes aside. "kurt vonnegut jr",
 * "dean r koontz" and "jk rowling" give "k vonnegut", "d koontz" and "j rowling". Book-Crossing
 * credits one book to "Kurt Vonnegut Jr." and "Kurt Vonnegut", "Patricia Daniels Cornwell" and
 * "Patricia Cornwell", "Jeffery Deaver" and "Jeff Deaver"; two people of one surname and initial
 * with a book of the same title are rarer than one author written two ways. Authors themselves stay
 * apart (a generation tells a father from his son): this only groups editions.
 */
export function workAuthorKey(key: string): string {
  const words = key.split(' ').filter((word) => word !== '' && !isGenerationWord(word));
  const [first, ...rest] = words;
  if (first === undefined) return key;
  return rest.length === 0 ? first : `${first[0]} ${rest.at(-1)}`;
}

/** A given name as a key holds it: a word, or one initial. */
type GivenName = { word: string } | { initial: string };

const sameGivenName = (a: GivenName, b: GivenName): boolean =>
  'word' in a && 'word' in b ? a.word === b.word : ('word' in a ? a.word[0] : a.initial) === ('word' in b ? b.word[0] : b.initial);

/** A name as its identity key reads it: given names (joined initials one per letter), surname, generation suffixes. */
function nameParts(name: string): { given: GivenName[]; surname: string; generations: string } {
  const words = keyWords(name).filter((word) => affixKind(word.text) === null);
  const surname = words.pop();
  return {
    given: words.flatMap<GivenName>((word) => (word.initials ? [...word.text].map((initial) => ({ initial })) : [{ word: word.text }])),
    surname: surname === undefined || surname.initials ? '' : surname.text,
    generations: keyWords(name)
      .map((word) => word.text)
      .filter(isGenerationWord)
      .join(' '),
  };
}

/**
 * Whether two names can be one person, for joining author records that other evidence (a shared
 * book or work) already ties: the same surname and generation suffix, the same first given name
 * or its initial, and the given names of the shorter in the longer, in order ("J.K. Rowling",
 * "Joanne K. Rowling", "Joanne Rowling"; "Ursula K. Le Guin", "Ursula Le Guin"). Spelling
 * variants, nicknames and typos ("Jeff" and "Jeffery") are refused: a wrong merge of two people
 * costs more than two records of one. A surname alone is one only with a surname alone ("Homer");
 * one identity key is one name whatever it holds ("David B.").
 */
export function sameAuthorNames(a: string, b: string): boolean {
  if (authorKey(a) === authorKey(b)) return authorKey(a) !== '';
  const one = nameParts(a);
  const other = nameParts(b);
  if (one.surname === '' || one.surname !== other.surname || one.generations !== other.generations) return false;
  const [shorter, longer] = one.given.length <= other.given.length ? [one.given, other.given] : [other.given, one.given];
  const [first, ...rest] = shorter;
  const [longerFirst, ...longerRest] = longer;
  if (first === undefined || longerFirst === undefined) return longerFirst === undefined;
  if (!sameGivenName(first, longerFirst)) return false;
  let at = 0;
  for (const name of rest) {
    while (at < longerRest.length && !sameGivenName(name, longerRest[at]!)) at++;
    if (at === longerRest.length) return false;
    at++;
  }
  return true;
}

// Lower-case particles of surnames, when they are not the first or last word of the name.
const PARTICLES = new Set(['da', 'das', 'de', 'del', 'della', 'der', 'den', 'di', 'do', 'dos', 'du', 'ten', 'ter', 'van', 'von']);
// "Le" and "La" are usually capitalized (Le Guin, La Plante) except right after a particle (de la Mare).
const PARTICLES_AFTER_PARTICLE = new Set(['la', 'le', 'las', 'los']);
// Words whose spelling is not the plain capitalization of their letters.
const SPELLINGS: ReadonlyMap<string, string> = new Map([
  ['dr', 'Dr'],
  ['jr', 'Jr'],
  ['sr', 'Sr'],
  ['st', 'St'],
  ['mr', 'Mr'],
  ['mrs', 'Mrs'],
  ['ms', 'Ms'],
  ['phd', 'PhD'],
  ['md', 'MD'],
  ['ii', 'II'],
  ['iii', 'III'],
  ['iv', 'IV'],
  ['ng', 'Ng'], // a surname, though it has no vowel
]);
const WITHOUT_VOWEL = /^[^AEIOUY]+$/u;

/**
 * A name fit to display: whitespace collapsed and, only when the whole name is in capitals,
 * capitalized word by word ("JOHN SAUL" → "John Saul"). Initials stay as they are ("J.R.R."),
 * so do 2–3 capitals without a vowel ("JK", "DBC"); particles are lower case ("LOUIS DE BERNIERES"
 * → "Louis de Bernieres"); "MCEWAN" → "McEwan", "O'BRIEN" → "O'Brien". "MAC" names get plain
 * capitals ("Macdonald"): MacDonald and Machado cannot be told apart, and Macdonald is a real spelling.
 * Mixed-case names are left as written.
 */
export function cleanAuthorName(name: string): string {
  const collapsed = collapseWhitespace(name);
  if (!isAllCaps(collapsed)) return collapsed;
  const tokens = collapsed.split(' ');
  const cleaned: string[] = [];
  tokens.forEach((token, index) => {
    const bare = bareToken(token);
    const isInnerWord = index > 0 && index < tokens.length - 1;
    const afterParticle = index > 0 && PARTICLES.has(bareToken(tokens[index - 1] ?? ''));
    if (isInnerWord && (PARTICLES.has(bare) || (afterParticle && PARTICLES_AFTER_PARTICLE.has(bare)))) {
      cleaned.push(token.toLowerCase());
    } else {
      cleaned.push(capitalizeToken(token));
    }
  });
  return cleaned.join(' ');
}

function capitalizeToken(token: string): string {
  const spelling = SPELLINGS.get(token.replace(/\.$/u, '').toLowerCase());
  if (spelling !== undefined) return spelling + (token.endsWith('.') ? '.' : '');
  if (INITIALS_WITH_PERIODS.test(token) || SINGLE_LETTER.test(token)) return token;
  if (CAPITALS_AS_INITIALS.test(token) && WITHOUT_VOWEL.test(token)) return token;
  return token.split('-').map(capitalizeWord).join('-');
}

function capitalizeWord(word: string): string {
  const lower = word.toLowerCase();
  const mc = /^(mc)(\p{L})(.*)$/u.exec(lower);
  if (mc) return `Mc${(mc[2] ?? '').toUpperCase()}${mc[3] ?? ''}`;
  // O'Brien, D'Alessandro, L'Engle: one letter and an apostrophe, then a capital.
  const elided = /^(\p{L})(['’])(\p{L})(.*)$/u.exec(lower);
  if (elided) return `${(elided[1] ?? '').toUpperCase()}${elided[2]}${(elided[3] ?? '').toUpperCase()}${elided[4]}`;
  return lower.replace(/\p{L}/u, (letter) => letter.toUpperCase());
}

/**
 * Which of two spellings of one author to display. Deterministic and order-independent: each
 * spelling is ranked on these criteria, in order, and the first difference decides:
 * 1. mixed case over all capitals or all lower case ("John Saul" over "JOHN SAUL");
 * 2. more diacritics ("Mary GrandPré" over "Mary GrandPre");
 * 3. reading order over surname first ("J.K. Rowling" over "Rowling, J.K.");
 * 4. more periods, which mark initials ("J.K. Rowling" over "JK Rowling");
 * 5. more capitals inside words ("Anne McCaffrey" over "Anne Mccaffrey");
 * 6. less whitespace: initials written close, as Goodreads does ("J.K." over "J. K.");
 * 7. failing all that, the one that sorts first by code unit.
 * Returns one of its arguments unchanged.
 */
export function preferredName(a: string, b: string): string {
  const rankA = displayRank(a);
  const rankB = displayRank(b);
  for (let i = 0; i < rankA.length; i++) {
    const difference = (rankA[i] ?? 0) - (rankB[i] ?? 0);
    if (difference !== 0) return difference > 0 ? a : b;
  }
  return a <= b ? a : b;
}

/** Higher is better at every position; see preferredName. */
function displayRank(name: string): number[] {
  return [
    HAS_UPPER_CASE.test(name) && HAS_LOWER_CASE.test(name) ? 1 : 0,
    countDiacritics(name),
    name.includes(',') ? 0 : 1,
    count(name, /\./gu),
    count(name, /\p{Ll}\p{Lu}/gu),
    -count(name, /\s/gu),
  ];
}

/**
 * The authors of a goodbooks `authors` field, which is one comma-separated string mixing authors
 * with illustrators and translators: "J.K. Rowling, Mary GrandPré" → ["J.K. Rowling", "Mary GrandPré"].
 * Entries are trimmed and collapsed, empty ones dropped, and a lone suffix ("Jr.") rejoins the name
 * before it. Duplicates by authorKey keep the first position and the preferred spelling.
 */
export function splitAuthorList(raw: string): string[] {
  const names: string[] = [];
  for (const entry of raw.split(',')) {
    const name = collapseWhitespace(entry);
    const previous = names.length - 1;
    if (name === '') continue;
    if (previous >= 0 && tokensOf(name).every((token) => affixKind(token) === 'generation')) {
      names[previous] = `${names[previous]} ${name}`;
    } else {
      names.push(name);
    }
  }

  const byKey = new Map<string, string>();
  for (const name of names) {
    const key = authorKey(name);
    if (key === '') continue;
    const seen = byKey.get(key);
    byKey.set(key, seen === undefined ? name : preferredName(seen, name));
  }
  return [...byKey.values()];
}

// The toolkit of the synthetic data generators (generate-catalogue.ts, generate-openlibrary.ts):
// seeded randomness and id permutations, an author pool, book titles, ISBN-10s, back-pressure and
// their command lines' integers.

import type { Writable } from 'node:stream';

/** A command-line option that must be an integer; `fallback` when it is absent and has one. */
export function integerOption(name: string, text: string | undefined, usage: string, fallback?: number): number {
  if (text === undefined && fallback !== undefined) return fallback;
  const value = Number(text);
  if (text === undefined || !/^-?\d+$/.test(text) || !Number.isSafeInteger(value))
    throw new Error(`--${name} must be an integer\n${usage}`);
  return value;
}

/** Waits for 'drain'; fails if the stream errors or closes first, so a dead output cannot hang the generator. */
export function drained(writable: Writable): Promise<void> {
  return new Promise((resolve, reject) => {
    const stopListening = (): void => {
      writable.off('drain', onDrain);
      writable.off('error', onError);
      writable.off('close', onClose);
    };
    const onDrain = (): void => {
      stopListening();
      resolve();
    };
    const onError = (error: Error): void => {
      stopListening();
      reject(error);
    };
    const onClose = (): void => {
      stopListening();
      reject(writable.errored ?? new Error('the output closed before the catalogue was complete'));
    };
    writable.on('drain', onDrain).on('error', onError).on('close', onClose);
  });
}

// The check digit is computed here rather than taken from src/domain/isbn.ts, whose exports are
// fixed; the tests check every generated ISBN with parseIsbn, so the two cannot drift apart unseen.
export function isbn10FromBody(body: number): string {
  const digits = String(body).padStart(9, '0');
  let sum = 0;
  for (let i = 0; i < 9; i++) sum += (10 - i) * (digits.charCodeAt(i) - 48);
  const check = (11 - (sum % 11)) % 11;
  return digits + (check === 10 ? 'X' : String(check));
}

// ---------------------------------------------------------------------------------------------
// Authors

/**
 * Authors ranked by popularity; each rank's name is a pure function of seed and rank, so the pool
 * costs no memory. Books pick a rank Zipf–Mandelbrot-like, P(rank) ∝ 1 / (rank + 50): a few
 * authors write thousands of books in a million, most write one or two.
 */
export class AuthorPool {
  private static readonly FLATTENING = 50;

  // Re-seeded for every draw about one author: a name is a pure function of seed and rank.
  private readonly random = new Random(0);

  constructor(
    readonly size: number,
    private readonly seed: number,
  ) {}

  /** A rank for a uniform draw `u`, by inverting the continuous form of the distribution. */
  popularRank(u: number): number {
    const q = AuthorPool.FLATTENING;
    const rank = Math.floor(q * ((this.size + q) / q) ** u - q);
    return Math.min(this.size - 1, Math.max(0, rank));
  }

  name(rank: number): string {
    const last = this.surname(rank); // first: it re-seeds the same scratch stream
    const random = this.random.reseed(hash32(this.seed, 1_000_003 + rank));
    const first = random.pick(FIRST_NAMES);
    const style = random.next();
    if (style < 0.07) return `${initials(random, 2 + random.below(2))} ${last}`; // "J.R.R. Tolkien"
    if (style < 0.19) return `${first} ${initials(random, 1)} ${last}`; // "Stephen R. Donaldson"
    if (style < 0.24) return `${first} ${random.pick(PARTICLES)} ${last}`; // "Antoine de Saint-Exupéry"
    if (style < 0.29) return `${first} ${random.pick(SURNAMES)}-${last}`;
    return `${first} ${last}`;
  }

  /** A third from a list of common surnames; the rest built from parts, so that a large pool rarely repeats a name. */
  surname(rank: number): string {
    const random = this.random.reseed(hash32(this.seed, 2_000_003 + rank));
    if (random.next() < 0.35) return random.pick(SURNAMES);
    const middle = random.next() < 0.5 ? '' : random.pick(SURNAME_MIDDLES);
    return random.pick(SURNAME_STARTS) + middle + random.pick(SURNAME_ENDINGS);
  }

  /** An author's first or second series. */
  seriesName(rank: number, which: 0 | 1): string {
    const surname = this.surname(rank); // first: it re-seeds the same scratch stream
    const random = this.random.reseed(hash32(this.seed, 3_000_017 + 2 * rank + which));
    const pattern = random.next();
    if (pattern < 0.3) return `The ${random.pick(NOUNS)} ${random.pick(SERIES_WORDS)}`;
    if (pattern < 0.5) return `${random.pick(PLACES)} ${random.pick(SERIES_WORDS)}`;
    if (pattern < 0.7) return `${random.pick(FIRST_NAMES)} ${surname}`; // a detective's name
    if (pattern < 0.85) return `${random.pick(ADJECTIVES)} ${random.pick(NOUNS)}`;
    return `The ${random.pick(ADJECTIVES)} ${random.pick(NOUNS)}s`;
  }
}

function initials(random: Random, howMany: number): string {
  let text = '';
  for (let i = 0; i < howMany; i++) text += `${random.pick(INITIAL_LETTERS)}.`;
  return text;
}

// ---------------------------------------------------------------------------------------------
// Titles

/** A title of one to a dozen words, sometimes with a subtitle, commas, quotes or an ampersand. */
export function bookTitle(random: Random, authorSurname: string): string {
  const main = mainTitle(random, authorSurname);
  const subtitle = random.next();
  if (subtitle < 0.06) return `${main}: A Novel`;
  if (subtitle < 0.14) return `${main}: ${random.pick(SUBTITLE_OPENINGS)} ${random.pick(NOUNS)} of ${random.pick(PLACES)}`;
  return main;
}

function mainTitle(random: Random, authorSurname: string): string {
  const pattern = random.next();
  if (pattern < 0.22) return `The ${random.pick(ADJECTIVES)} ${random.pick(NOUNS)}`;
  if (pattern < 0.38) return `The ${random.pick(NOUNS)} of ${random.pick(PLACES)}`;
  if (pattern < 0.5) return random.pick(NOUNS);
  if (pattern < 0.6) return `${random.pick(ADJECTIVES)} ${random.pick(NOUNS)}s`;
  if (pattern < 0.68) return `A ${random.pick(NOUNS)} of ${random.pick(NOUNS)}s and ${random.pick(NOUNS)}s`;
  if (pattern < 0.75) return `${random.pick(FIRST_NAMES)}'s ${random.pick(NOUNS)}`;
  if (pattern < 0.8) return `${random.pick(NOUNS)} & ${random.pick(NOUNS)}`;
  if (pattern < 0.85) return `${random.pick(NOUNS)}, ${random.pick(NOUNS)}, and ${random.pick(NOUNS)}`;
  if (pattern < 0.87) return `The "${random.pick(ADJECTIVES)}" ${random.pick(NOUNS)}`;
  if (pattern < 0.92) {
    return `The ${random.pick(PEOPLE)} Who ${random.pick(VERBS)} the ${random.pick(ADJECTIVES)} ${random.pick(NOUNS)}`;
  }
  if (pattern < 0.96) return `${random.pick(PLACES)}`;
  return `The ${authorSurname} ${random.pick(NOUNS)}`;
}

/** The goodbooks series suffix: " (The Hunger Games, #1)", sometimes without the comma. */
export function seriesSuffix(random: Random, series: string): string {
  const kind = random.next();
  let number: string;
  if (kind < 0.03)
    number = `${random.below(8)}.5`; // a novella between books
  else if (kind < 0.05)
    number = `1-${2 + random.below(4)}`; // an omnibus
  else number = String(1 + Math.floor(15 * random.next() ** 2)); // early volumes are more common
  return random.next() < 0.9 ? ` (${series}, #${number})` : ` (${series} #${number})`;
}

// ---------------------------------------------------------------------------------------------
// Randomness

/**
 * mulberry32: a tiny, fast 32-bit PRNG. It can be re-seeded, so the draws that belong to one
 * author (name, series) come from their own stream without allocating one per row.
 */
export class Random {
  private state = 0;

  constructor(seed: number) {
    this.reseed(seed);
  }

  reseed(seed: number): this {
    this.state = seed >>> 0;
    return this;
  }

  /** A float in [0, 1). */
  next(): number {
    this.state = (this.state + 0x6d2b79f5) >>> 0;
    let t = this.state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  }

  /** An integer in [0, n). */
  below(n: number): number {
    return Math.floor(this.next() * n);
  }

  pick<T>(items: readonly T[]): T {
    const item = items[this.below(items.length)];
    if (item === undefined) throw new Error('pick from an empty list');
    return item;
  }
}

/**
 * A 32-bit hash of two integers (lowbias32 mixing), to seed independent streams per purpose.
 * Seeds beyond 32 bits contribute their high part too.
 */
export function hash32(seed: number, n: number): number {
  let x = (Math.imul(seed | 0, 0x9e3779b1) ^ (seed / 4294967296) ^ n) >>> 0;
  for (let round = 0; round < 2; round++) {
    x ^= x >>> 16;
    x = Math.imul(x, 0x7feb352d);
    x ^= x >>> 15;
    x = Math.imul(x, 0x846ca68b);
    x ^= x >>> 16;
  }
  return x >>> 0;
}

/**
 * i ↦ (a·i + b) mod m with a coprime to m: a bijection on 0..m-1, so successive values never repeat
 * and no set of used values is needed. m is a power of ten, so a must be odd and not a multiple of 5.
 */
export class AffinePermutation {
  private value: number;
  private readonly step: number;

  constructor(
    private readonly modulus: number,
    seed: number,
    purpose: number,
  ) {
    if (modulus > 2 ** 31) throw new RangeError('modulus must fit in 31 bits'); // so that `| 1` is safe
    let step = (hash32(seed, purpose) % modulus) | 1;
    if (step % 5 === 0) step = (step + 2) % modulus;
    this.step = step;
    this.value = hash32(seed, purpose + 100) % modulus;
  }

  next(): number {
    const current = this.value;
    this.value += this.step;
    if (this.value >= this.modulus) this.value -= this.modulus;
    return current;
  }
}

// ---------------------------------------------------------------------------------------------
// Word lists

const INITIAL_LETTERS = [...'ABCDEFGHJKLMNPRSTW'];

const FIRST_NAMES = [
  'James',
  'Mary',
  'John',
  'Patricia',
  'Robert',
  'Jennifer',
  'Michael',
  'Linda',
  'William',
  'Elizabeth',
  'David',
  'Barbara',
  'Richard',
  'Susan',
  'Joseph',
  'Jessica',
  'Thomas',
  'Sarah',
  'Charles',
  'Karen',
  'Christopher',
  'Nancy',
  'Daniel',
  'Lisa',
  'Matthew',
  'Margaret',
  'Anthony',
  'Sandra',
  'Mark',
  'Ashley',
  'Stephen',
  'Emily',
  'Paul',
  'Donna',
  'Andrew',
  'Michelle',
  'Kenneth',
  'Carol',
  'George',
  'Amanda',
  'Neil',
  'Ursula',
  'Terry',
  'Agatha',
  'Kurt',
  'Virginia',
  'Ray',
  'Toni',
  'Haruki',
  'Chimamanda',
  'José',
  'Zoë',
  'Björn',
  'Søren',
  'François',
  'Anaïs',
  'Łukasz',
  'Renée',
  'Jürgen',
  'Inés',
  'Gabriel',
  'Isabel',
  'Orhan',
  'Elif',
  'Kazuo',
  'Arundhati',
  'Jhumpa',
  'Khaled',
  'Yaa',
  'Ngozi',
  'Li',
  'Wei',
  'Mei',
  'Min-jun',
  'Ji-woo',
  'Aleksandr',
  'Fyodor',
  'Olga',
  'Hanne',
  'Siobhán',
];

const SURNAMES = [
  'Smith',
  'Johnson',
  'Williams',
  'Brown',
  'Jones',
  'Miller',
  'Davis',
  'Wilson',
  'Anderson',
  'Taylor',
  'Thomas',
  'Moore',
  'Martin',
  'Jackson',
  'Thompson',
  'White',
  'Harris',
  'Clark',
  'Lewis',
  'Robinson',
  'Walker',
  'Young',
  'Allen',
  'King',
  'Wright',
  'Scott',
  'Green',
  'Baker',
  'Adams',
  'Nelson',
  'Hill',
  'Campbell',
  'Mitchell',
  'Roberts',
  'Carter',
  'Phillips',
  'Evans',
  'Turner',
  'Parker',
  'Collins',
  'McCarthy',
  'MacLeod',
  "O'Brien",
  "O'Connor",
  'McEwan',
  'Fitzgerald',
  'Pratchett',
  'Gaiman',
  'Atwood',
  'Vonnegut',
  'García',
  'Müller',
  'Brontë',
  'Núñez',
  'Dvořák',
  'Kovač',
  'Ólafsdóttir',
  'Çelik',
  'Søndergaard',
  'Lefèvre',
  'Márquez',
  'Pérez',
  'Schäfer',
  'Gómez',
  'Håkansson',
  'Nguyen',
  'Kim',
  'Park',
  'Tanaka',
  'Watanabe',
  'Ng',
  'Li',
  'Wu',
  'Chen',
  'Okafor',
  'Adichie',
  'Achebe',
  'Mensah',
  'Ivanova',
  'Petrov',
];

const SURNAME_STARTS = [
  'Al',
  'Bar',
  'Bel',
  'Cal',
  'Dar',
  'Ed',
  'Fen',
  'Gar',
  'Hal',
  'Ker',
  'Lan',
  'Mar',
  'Nor',
  'Or',
  'Pem',
  'Quin',
  'Ros',
  'Sel',
  'Tal',
  'Ver',
  'Wen',
  'Yor',
  'Hart',
  'Ash',
  'Brook',
  'Black',
  'Wood',
  'Stan',
  'Whit',
  'Fair',
];
const SURNAME_MIDDLES = ['en', 'ring', 'a', 'dor', 'ling', 'ber', 'mel', 'is', 'ov', 'an'];
const SURNAME_ENDINGS = [
  'ton',
  'ley',
  'wood',
  'field',
  'more',
  'ridge',
  'son',
  'ford',
  'well',
  'by',
  'worth',
  'dale',
  'ham',
  'wick',
  'stone',
  'croft',
  'ová',
  'ez',
  'escu',
  'ini',
  'sen',
  'berg',
  'stein',
  'ström',
  'ski',
  'ić',
];

const PARTICLES = ['de', 'van', 'von', 'da', 'del', 'van der', 'de la'];

const ADJECTIVES = [
  'Silent',
  'Hidden',
  'Lost',
  'Broken',
  'Golden',
  'Dark',
  'Last',
  'Secret',
  'Burning',
  'Forgotten',
  'Crimson',
  'Wild',
  'Quiet',
  'Endless',
  'Little',
  'Great',
  'Winter',
  'Summer',
  'Midnight',
  'Shattered',
  'Invisible',
  'Hollow',
  'Bright',
  'Stolen',
  'Wicked',
  'Gentle',
  'Iron',
  'Glass',
  'Painted',
  'Drowned',
];

const NOUNS = [
  'Garden',
  'House',
  'River',
  'Kingdom',
  'Shadow',
  'Daughter',
  'Night',
  'Fire',
  'Storm',
  'Queen',
  'Thief',
  'Wolf',
  'Sea',
  'Crown',
  'Bridge',
  'Letter',
  'Promise',
  'Island',
  'Orchard',
  'Sister',
  'Mirror',
  'Heart',
  'Road',
  'Forest',
  'Star',
  'Clock',
  'Tower',
  'Song',
  'Witch',
  'Map',
  'Lighthouse',
  'Secret',
  'Memory',
  'Dragon',
  'Stranger',
  'Bone',
  'Feather',
  'Harbor',
  'Library',
  'Year',
];

const PEOPLE = ['Girl', 'Boy', 'Woman', 'Man', 'Widow', 'Soldier', 'Prince', 'Doctor', 'Thief', 'Stranger', 'Queen', 'Witch'];

const VERBS = ['Loved', 'Stole', 'Forgot', 'Saved', 'Painted', 'Followed', 'Married', 'Betrayed', 'Found', 'Fell for'];

const PLACES = [
  'Avalon',
  'Brooklyn',
  'Paris',
  'Kyoto',
  'the North',
  'Mars',
  'Narnia',
  'Provence',
  'Babylon',
  'Lagos',
  'Havana',
  'Cornwall',
  'Alexandria',
  'Tehran',
  'Oz',
  'Dublin',
  'Saint-Malo',
  'Zürich',
  'Reykjavík',
  'Kraków',
];

const SERIES_WORDS = ['Chronicles', 'Saga', 'Trilogy', 'Cycle', 'Mysteries', 'Quartet', 'Series', 'Legacy'];

const SUBTITLE_OPENINGS = ['The Untold Story of the', 'A History of the', 'How We Lost the', 'The Last', 'Notes on the'];

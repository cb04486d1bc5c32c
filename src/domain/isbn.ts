// ISBN-10 and ISBN-13: validation, conversion, and recovery of the damaged goodbooks-10k columns.

/** A valid ISBN in normal form: digits only, upper-case X. */
export interface Isbn {
  isbn13: string;
  /** Null when the ISBN-13 has no ISBN-10 form (prefix 979). */
  isbn10: string | null;
}

const ISBN10_SHAPE = /^\d{9}[\dX]$/;
const ISBN13_SHAPE = /^\d{13}$/;
const BOOKLAND_PREFIX = /^97[89]/; // EAN-13 numbers for books; other prefixes are not ISBNs
const ISBN10_COMPATIBLE_PREFIX = '978';
// Hyphen-minus, Unicode hyphens and dashes, and any whitespace, as people type or paste them.
const SEPARATORS = /[\s\-\u2010-\u2015]/gu;

function isbn10CheckDigit(body9: string): string {
  let sum = 0;
  for (let i = 0; i < 9; i++) sum += (10 - i) * Number(body9[i]);
  const check = (11 - (sum % 11)) % 11;
  return check === 10 ? 'X' : String(check);
}

function isbn13CheckDigit(body12: string): string {
  let sum = 0;
  for (let i = 0; i < 12; i++) sum += (i % 2 === 0 ? 1 : 3) * Number(body12[i]);
  return String((10 - (sum % 10)) % 10);
}

function isValidIsbn10(candidate: string): boolean {
  return ISBN10_SHAPE.test(candidate) && isbn10CheckDigit(candidate.slice(0, 9)) === candidate[9];
}

function isValidIsbn13(candidate: string): boolean {
  return ISBN13_SHAPE.test(candidate) && BOOKLAND_PREFIX.test(candidate) && isbn13CheckDigit(candidate.slice(0, 12)) === candidate[12];
}

/**
 * An ISBN-10 or ISBN-13 as typed: hyphens and spaces anywhere, lower-case x accepted.
 * Null unless the check digit holds (and, for 13 digits, the prefix is 978 or 979).
 */
export function parseIsbn(input: string): Isbn | null {
  const compact = input.replace(SEPARATORS, '').toUpperCase();
  if (isValidIsbn10(compact)) return { isbn13: isbn10To13(compact), isbn10: compact };
  if (isValidIsbn13(compact)) return { isbn13: compact, isbn10: isbn13To10(compact) };
  return null;
}

/** The ISBN-13 of a valid, normalized ISBN-10: prefix 978 and a new check digit. */
export function isbn10To13(isbn10: string): string {
  if (!ISBN10_SHAPE.test(isbn10)) throw new RangeError(`not a normalized ISBN-10: ${JSON.stringify(isbn10)}`);
  const body12 = ISBN10_COMPATIBLE_PREFIX + isbn10.slice(0, 9);
  return body12 + isbn13CheckDigit(body12);
}

/** The ISBN-10 of a normalized ISBN-13, or null when its prefix is not 978 (979 has no ISBN-10). */
export function isbn13To10(isbn13: string): string | null {
  if (!ISBN13_SHAPE.test(isbn13)) throw new RangeError(`not a normalized ISBN-13: ${JSON.stringify(isbn13)}`);
  if (!isbn13.startsWith(ISBN10_COMPATIBLE_PREFIX)) return null;
  const body9 = isbn13.slice(3, 12);
  return body9 + isbn10CheckDigit(body9);
}

// ---------------------------------------------------------------------------------------------
// goodbooks-10k recovery

/** The outcome of reading one goodbooks row's `isbn` and `isbn13` columns. */
export interface RecoveredIsbn {
  isbn: Isbn | null;
  /** True when the ISBN is not literally in the row: zeros were padded or the ISBN-13 was derived. */
  repaired: boolean;
  /** Why no ISBN could be recovered; null when one was. */
  problem: string | null;
}

type Isbn10Reading =
  | { kind: 'valid'; isbn: Isbn; padded: boolean }
  /** Ten digits whose check digit is wrong: the body may still be right (see recoverGoodbooksIsbn). */
  | { kind: 'checksum-fails'; body9: string }
  | { kind: 'absent' | 'malformed' };

type Isbn13Reading =
  /** Valid ISBN-13s the column may stand for: one when written exactly, one or two when rounded. */
  { kind: 'readable'; isbn13s: string[]; exact: boolean } | { kind: 'absent' | 'not-an-isbn' | 'malformed' };

const ISBN10_PROBLEM: Record<Exclude<Isbn10Reading['kind'], 'valid'>, string> = {
  absent: 'no ISBN-10',
  'checksum-fails': 'ISBN-10 checksum fails',
  malformed: 'ISBN-10 is malformed',
};

const ISBN13_PROBLEM: Record<Exclude<Isbn13Reading['kind'], 'readable'> | 'ambiguous', string> = {
  absent: 'no ISBN-13',
  ambiguous: 'ISBN-13 is ambiguous',
  'not-an-isbn': 'ISBN-13 is not a valid ISBN',
  malformed: 'ISBN-13 is malformed',
};

/**
 * The ISBN of a goodbooks-10k row, repairing the file's known defects and never guessing:
 * `isbn` lost its leading zeros, and `isbn13` is a float rounded to 12 significant digits.
 *
 * A valid ISBN-10 decides, because it is exact. Without one, the ISBN-13 column is used when
 * exactly one ISBN-13 is consistent with it. When the rounded float leaves two, an ISBN-10 whose
 * check digit is wrong may still pick one: goodbooks has ISBN-10s that lost a final X or carry the
 * ISBN-13's check digit, and their first nine digits agree with just one of the two readings.
 */
export function recoverGoodbooksIsbn(rawIsbn: string, rawIsbn13: string): RecoveredIsbn {
  const fromIsbn10 = readIsbn10Column(rawIsbn);
  const fromIsbn13 = readIsbn13Column(rawIsbn13);

  if (fromIsbn10.kind === 'valid') {
    const isbn13GivenExactly = fromIsbn13.kind === 'readable' && fromIsbn13.exact && fromIsbn13.isbn13s[0] === fromIsbn10.isbn.isbn13;
    return { isbn: fromIsbn10.isbn, repaired: fromIsbn10.padded || !isbn13GivenExactly, problem: null };
  }
  if (fromIsbn13.kind !== 'readable') {
    const problem =
      fromIsbn10.kind === 'absent' && fromIsbn13.kind === 'absent'
        ? 'no ISBN'
        : `${ISBN10_PROBLEM[fromIsbn10.kind]} and ${ISBN13_PROBLEM[fromIsbn13.kind]}`;
    return { isbn: null, repaired: false, problem };
  }

  const corroborated =
    fromIsbn10.kind === 'checksum-fails' ? fromIsbn13.isbn13s.filter((isbn13) => isbn13.slice(3, 12) === fromIsbn10.body9) : [];
  const [chosen, ...others] = fromIsbn13.isbn13s.length === 1 ? fromIsbn13.isbn13s : corroborated;
  if (chosen === undefined || others.length > 0) {
    return { isbn: null, repaired: false, problem: `${ISBN10_PROBLEM[fromIsbn10.kind]} and ${ISBN13_PROBLEM.ambiguous}` };
  }
  const isbn = { isbn13: chosen, isbn10: isbn13To10(chosen) };
  return { isbn, repaired: !fromIsbn13.exact || fromIsbn10.kind === 'checksum-fails', problem: null };
}

// The column was written as an integer, so an ISBN-10 starting with 0 lost those zeros.
const ZERO_STRIPPED_ISBN10 = /^\d{0,8}[\dXx]$/;

function readIsbn10Column(raw: string): Isbn10Reading {
  const text = raw.trim();
  if (text === '') return { kind: 'absent' };
  const padded = ZERO_STRIPPED_ISBN10.test(text);
  const candidate = padded ? text.padStart(10, '0') : text;
  const isbn = parseIsbn(candidate);
  if (isbn) return { kind: 'valid', isbn, padded };
  const compact = candidate.replace(SEPARATORS, '').toUpperCase();
  return ISBN10_SHAPE.test(compact) ? { kind: 'checksum-fails', body9: compact.slice(0, 9) } : { kind: 'malformed' };
}

function readIsbn13Column(raw: string): Isbn13Reading {
  const text = raw.trim();
  if (text === '') return { kind: 'absent' };
  const clean = parseIsbn(text);
  if (clean) return { kind: 'readable', isbn13s: [clean.isbn13], exact: true };
  const literal = parseIntegerLiteral(text);
  if (!literal || literal.digits.length !== 13) return { kind: 'malformed' };
  const isbn13s = literal.exact ? [literal.digits].filter(isValidIsbn13) : readingsOfRoundedIsbn13(literal.digits);
  return isbn13s.length > 0 ? { kind: 'readable', isbn13s, exact: literal.exact } : { kind: 'not-an-isbn' };
}

/**
 * The valid ISBN-13s that round to this 13-digit float with 12 significant digits.
 * Its first 12 digits F are round(isbn13 / 10). With the true prefix P and check digit c:
 * c < 5 gives F = P, c > 5 gives F = P + 1, and c = 5 is a tie that may round either way.
 * Each candidate prefix fixes its own check digit, so it is kept only when that digit fits the rounding.
 */
function readingsOfRoundedIsbn13(digits13: string): string[] {
  const rounded = Number(digits13.slice(0, 12)); // 12 digits are exact in a double
  const readings: Array<[prefix: number, checkDigitFits: (check: number) => boolean]> = [
    [rounded, (check) => check <= 5],
    [rounded - 1, (check) => check >= 5],
  ];
  return readings.flatMap(([prefix, checkDigitFits]) => {
    const body12 = String(prefix).padStart(12, '0');
    const isbn13 = body12 + isbn13CheckDigit(body12);
    return checkDigitFits(Number(isbn13[12])) && isValidIsbn13(isbn13) ? [isbn13] : [];
  });
}

interface IntegerLiteral {
  /** The integer written out in full, without leading zeros. */
  digits: string;
  /** False when exponent form kept fewer digits than the integer has, so the tail was rounded. */
  exact: boolean;
}

const NUMERIC_LITERAL = /^(\d+)(?:\.(\d*))?(?:[eE]\+?(\d+))?$/;

/** A non-negative integer written plainly, as "123.0", or in exponent form; null for anything else. */
function parseIntegerLiteral(text: string): IntegerLiteral | null {
  const match = NUMERIC_LITERAL.exec(text);
  if (!match) return null;
  const [, integerPart = '', fractionPart = '', exponent] = match;
  const mantissa = integerPart + fractionPart;
  const pointPosition = integerPart.length + Number(exponent ?? 0);
  const whole = mantissa.slice(0, pointPosition).padEnd(pointPosition, '0');
  if (/[1-9]/.test(mantissa.slice(pointPosition))) return null; // not an integer
  const digits = whole.replace(/^0+(?=\d)/, '');
  // Plain notation writes every integer digit; exponent notation shows only what the writer kept.
  const digitsKept = exponent === undefined ? digits.length : mantissa.replace(/^0+/, '').length;
  return { digits, exact: digitsKept >= digits.length };
}

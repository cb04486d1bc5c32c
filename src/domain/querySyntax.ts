import { parseIsbn } from './isbn.js';

/**
 * The query syntax of book search, for people who know what they want: `title:`, `author:`,
 * `series:`, `subject:`, `publisher:` and `isbn:` followed directly by a word or a quoted phrase,
 * `year:1965` or `year:1960..1969` (either end may be left open), quoted phrases, and `-word` or
 * `-"a phrase"` to leave books out. Only a known field name directly followed by a colon and a value
 * is an operator: in "Star Wars: A New Hope" or "Re: Zero" the colon is text. What the syntax cannot
 * read is refused with a message naming the problem; the query never reaches Elasticsearch's own
 * query parser.
 */

export const QUERY_FIELDS = ['title', 'author', 'series', 'subject', 'publisher', 'isbn', 'year'] as const;
export type QueryField = (typeof QUERY_FIELDS)[number];
export type TextField = Exclude<QueryField, 'isbn' | 'year'>;

export interface FieldTerm {
  field: TextField;
  text: string;
  /** Quoted: the words in this order, next to each other. */
  phrase: boolean;
}

export interface ParsedQuery {
  /** Free words and the words of quoted phrases, in the order typed: what the ranking reads. */
  text: string;
  /** Quoted phrases of the free text: each must appear as written. */
  phrases: string[];
  fields: FieldTerm[];
  /** ISBN-13s named by isbn: (each must be the book's). */
  isbn13s: string[];
  /** year: bounds, both inclusive, null when open. */
  yearFrom: number | null;
  yearTo: number | null;
  /** Words and phrases left out with a minus. */
  excluded: string[];
}

/** A query the syntax cannot read: its message says why. */
export class QuerySyntaxError extends Error {}

const FIELD_OPERATOR = new RegExp(`^(${QUERY_FIELDS.join('|')}):(?=\\S)`, 'iu');
const YEAR = /^(-?\d{1,4})?(?:(\.\.)(-?\d{1,4})?)?$/u;

function yearRange(value: string): { from: number | null; to: number | null } {
  const found = YEAR.exec(value);
  if (!found || (found[1] === undefined && found[3] === undefined)) {
    throw new QuerySyntaxError(`year: takes a year or a range such as 1960..1969, got "${value}"`);
  }
  const from = found[1] === undefined ? null : Number(found[1]);
  const to = found[2] === undefined ? from : found[3] === undefined ? null : Number(found[3]);
  if (from !== null && to !== null && from > to) throw new QuerySyntaxError(`year: range ${value} ends before it starts`);
  return { from, to };
}

/** Reads q. Throws QuerySyntaxError when it cannot. */
export function parseQuery(q: string): ParsedQuery {
  const parsed: ParsedQuery = { text: '', phrases: [], fields: [], isbn13s: [], yearFrom: null, yearTo: null, excluded: [] };
  const words: string[] = [];
  let rest = q.trim();
  // One value: a quoted phrase (to its closing quote) or a word (to the next space).
  const take = (): { value: string; quoted: boolean } => {
    if (rest.startsWith('"')) {
      const end = rest.indexOf('"', 1);
      if (end < 0) throw new QuerySyntaxError('q has a quote that is not closed');
      const value = rest.slice(1, end).trim();
      rest = rest.slice(end + 1);
      return { value, quoted: true };
    }
    const end = rest.search(/\s/u);
    const value = end < 0 ? rest : rest.slice(0, end);
    rest = end < 0 ? '' : rest.slice(end);
    return { value, quoted: false };
  };
  while ((rest = rest.trimStart()) !== '') {
    const operator = FIELD_OPERATOR.exec(rest);
    if (operator) {
      const field = operator[1]!.toLowerCase() as QueryField;
      rest = rest.slice(operator[0].length);
      const { value, quoted } = take();
      if (value === '') throw new QuerySyntaxError(`${field}: has an empty phrase`);
      if (field === 'year') {
        const { from, to } = yearRange(value);
        if (parsed.yearFrom !== null || parsed.yearTo !== null) throw new QuerySyntaxError('q has year: more than once');
        parsed.yearFrom = from;
        parsed.yearTo = to;
      } else if (field === 'isbn') {
        const isbn = parseIsbn(value);
        if (!isbn) throw new QuerySyntaxError(`isbn: takes an ISBN-10 or ISBN-13, got "${value}"`);
        parsed.isbn13s.push(isbn.isbn13);
      } else {
        parsed.fields.push({ field, text: value, phrase: quoted });
      }
      continue;
    }
    const minus = /^-(?=["\p{L}\p{N}])/u.test(rest);
    if (minus) rest = rest.slice(1);
    const { value, quoted } = take();
    if (value === '') continue;
    if (minus) parsed.excluded.push(value);
    else {
      words.push(value);
      if (quoted) parsed.phrases.push(value);
    }
  }
  parsed.text = words.join(' ');
  if (
    parsed.text === '' &&
    parsed.fields.length === 0 &&
    parsed.isbn13s.length === 0 &&
    parsed.yearFrom === null &&
    parsed.yearTo === null
  ) {
    throw new QuerySyntaxError(parsed.excluded.length > 0 ? 'q needs something to look for besides words to leave out' : 'q is required');
  }
  return parsed;
}

import { parseIsbn, type Isbn } from './isbn.js';
import { quoted } from './text.js';

/**
 * One line of an Open Library dump, read into what the catalogue keeps. A dump line is five
 * tab-separated columns: type, key, revision, last_modified, JSON. The JSON is loose: descriptions
 * and bios are a string or a /type/text object, author roles come in two shapes, keys repeat, cover
 * ids may be -1, ISBNs may be hyphenated or wrong. Everything here is pure; the importer writes.
 */

export type OlKind = 'author' | 'work' | 'edition';

/** The scheme of an external identifier a record may carry. */
export type IdentifierScheme = 'openlibrary' | 'goodreads' | 'oclc' | 'lccn' | 'viaf' | 'wikidata' | 'isni';

export interface Identifier {
  scheme: IdentifierScheme;
  value: string;
}

export interface OlAuthor {
  name: string;
  alternateNames: string[];
  birthDate: string | null;
  deathDate: string | null;
  bio: string | null;
  identifiers: Identifier[];
}

export interface OlWork {
  title: string;
  subtitle: string | null;
  /** Open Library author keys ("OL23919A") in credited order, each once. */
  authorKeys: string[];
  subjects: string[];
  description: string | null;
  firstPublishYear: number | null;
  coverUrl: string | null;
}

export interface OlEdition {
  title: string;
  subtitle: string | null;
  isbn: Isbn | null;
  /** True when the ISBN had to be cleaned (hyphens, spaces, a lower-case x) to be read. */
  isbnRepaired: boolean;
  /** ISBNs written in the record that are not valid (wrong check digit, wrong length): never used. */
  invalidIsbns: string[];
  publisher: string | null;
  year: number | null;
  pages: number | null;
  language: string | null;
  physicalFormat: string | null;
  coverUrl: string | null;
  series: string | null;
  subjects: string[];
  description: string | null;
  /** The work's Open Library key ("OL45804W"), or null for an edition without a work. */
  workKey: string | null;
  authorKeys: string[];
  identifiers: Identifier[];
}

interface Header {
  /** The record's Open Library key without its path ("OL7353617M"). */
  key: string;
  kind: OlKind;
  revision: number;
}

export type OlRecord =
  | (Header & { type: 'author'; author: OlAuthor })
  | (Header & { type: 'work'; work: OlWork })
  | (Header & { type: 'edition'; edition: OlEdition })
  /** The record was merged into `location` (a key of the same kind). */
  | (Header & { type: 'redirect'; location: string })
  | (Header & { type: 'delete' });

/** What one line becomes: a record, a line of a type the catalogue does not hold, or a rejection. */
export type OlLine = { record: OlRecord } | { skipped: string } | { rejected: string };

const KIND_OF_PATH: Record<string, OlKind> = { authors: 'author', works: 'work', books: 'edition' };
const SUFFIX: Record<OlKind, string> = { author: 'A', work: 'W', edition: 'M' };

/** The letter a bare key of a kind ends with: OL23919A is an author's. */
export const olKeySuffix = (kind: OlKind): string => SUFFIX[kind];

/**
 * Redirects followed from a key to the key it lands on, at most: a longer chain (a loop among them)
 * ends where the count runs out. One rule for the importers and the API.
 */
export const MAX_REDIRECT_HOPS = 5;
const KEY_SHAPE = /^\/(authors|works|books)\/(OL[1-9]\d*([AWM]))$/;

/** "/books/OL7353617M" as its kind and bare key, or null when it is not such a key. */
export function parseOlKey(path: string): { kind: OlKind; key: string } | null {
  const match = KEY_SHAPE.exec(path.trim());
  if (!match) return null;
  const kind = KIND_OF_PATH[match[1]!]!;
  return SUFFIX[kind] === match[3] ? { kind, key: match[2]! } : null;
}

/** A bare key of the given kind ("OL23919A"), as a client may write it in a URL. */
export function olKeyKind(key: string): OlKind | null {
  const match = /^OL[1-9]\d*([AWM])$/.exec(key);
  if (!match) return null;
  return (Object.keys(SUFFIX) as OlKind[]).find((kind) => SUFFIX[kind] === match[1]) ?? null;
}

const COVER_URL = (id: number): string => `https://covers.openlibrary.org/b/id/${id}-M.jpg`;
const COVER_ID = /^https:\/\/covers\.openlibrary\.org\/b\/id\/([1-9][0-9]*)-M\.jpg$/;

/** The number of an Open Library cover, from its URL as coverUrl makes it; null for any other URL. */
export const olCoverId = (url: string): string | null => COVER_ID.exec(url)?.[1] ?? null;

/** A dump line's first columns, read without its JSON: what a re-import compares with the catalogue. */
export type OlLineHeader = Header & { type: string; path: string; json: string };

/**
 * The type, key and revision of one dump line, checked as parseOlLine checks them; `null` for a blank
 * line. Never throws.
 */
export function parseOlHeader(line: string): { header: OlLineHeader } | { skipped: string } | { rejected: string } | null {
  if (line.trim() === '') return null;
  const columns = line.split('\t');
  if (columns.length !== 5) return { rejected: `expected 5 tab-separated columns, found ${columns.length}` };
  const [type, path, revisionText, , json] = columns as [string, string, string, string, string];
  const recordType = type.trim();
  if (!['/type/author', '/type/work', '/type/edition', '/type/redirect', '/type/delete'].includes(recordType)) {
    return { skipped: `type ${recordType} is not catalogued` };
  }
  const parsedKey = parseOlKey(path);
  if (!parsedKey) return { rejected: `key ${quoted(path)} is not an Open Library author, work or edition key` };
  const revision = Number(revisionText);
  if (!Number.isSafeInteger(revision) || revision < 0) return { rejected: `revision ${quoted(revisionText)} is not a whole number` };
  return { header: { type: recordType, path, key: parsedKey.key, kind: parsedKey.kind, revision, json } };
}

/** Parses one dump line; `null` for a blank line. Never throws. */
export function parseOlLine(line: string): OlLine | null {
  const read = parseOlHeader(line);
  if (read === null || !('header' in read)) return read;
  const { type: recordType, path, json, ...header } = read.header;
  let data: unknown;
  try {
    data = JSON.parse(json);
  } catch (error) {
    return { rejected: `invalid JSON: ${(error as Error).message}` };
  }
  if (!isObject(data)) return { rejected: 'the JSON column is not an object' };

  switch (recordType) {
    case '/type/redirect': {
      const location = parseOlKey(text(data.location) ?? '');
      if (!location || location.kind !== header.kind)
        return { rejected: `redirect to ${quoted(text(data.location) ?? '')} is not a ${header.kind} key` };
      if (location.key === header.key) return { rejected: 'redirect to itself' };
      return { record: { ...header, type: 'redirect', location: location.key } };
    }
    case '/type/delete':
      return { record: { ...header, type: 'delete' } };
    default: {
      const expected = `/type/${header.kind}`;
      if (recordType !== expected) return { rejected: `a ${recordType} record under the ${header.kind} key ${path}` };
      return mapRecord(header, data);
    }
  }
}

function mapRecord(header: Header, data: Record<string, unknown>): OlLine {
  switch (header.kind) {
    case 'author': {
      const name = text(data.name) ?? text(data.personal_name);
      if (!name) return { rejected: 'author has no name' };
      const identifiers: Identifier[] = [{ scheme: 'openlibrary', value: header.key }];
      const remote = isObject(data.remote_ids) ? data.remote_ids : {};
      for (const scheme of ['viaf', 'wikidata', 'isni'] as const) {
        const value = text(remote[scheme]);
        if (value) identifiers.push({ scheme, value });
      }
      const alternateNames = unique([...texts(data.alternate_names), ...[text(data.personal_name)].filter(isString)]).filter(
        (alt) => alt !== name,
      );
      return {
        record: {
          ...header,
          type: 'author',
          author: {
            name,
            alternateNames,
            birthDate: text(data.birth_date),
            deathDate: text(data.death_date),
            bio: longText(data.bio),
            identifiers,
          },
        },
      };
    }
    case 'work': {
      const title = text(data.title);
      if (!title) return { rejected: 'work has no title' };
      return {
        record: {
          ...header,
          type: 'work',
          work: {
            title,
            subtitle: text(data.subtitle),
            authorKeys: keysOf(data.authors, 'author'),
            subjects: subjects(data.subjects),
            description: longText(data.description),
            firstPublishYear: yearOf(text(data.first_publish_date)),
            coverUrl: coverUrl(data.covers),
          },
        },
      };
    }
    case 'edition': {
      const title = text(data.title);
      if (!title) return { rejected: 'edition has no title' };
      const isbns = readIsbns([...texts(data.isbn_13), ...texts(data.isbn_10)]);
      const identifiers: Identifier[] = [{ scheme: 'openlibrary', value: header.key }];
      const ids = isObject(data.identifiers) ? data.identifiers : {};
      for (const value of texts(ids.goodreads)) identifiers.push({ scheme: 'goodreads', value });
      for (const value of texts(data.oclc_numbers)) identifiers.push({ scheme: 'oclc', value });
      for (const value of texts(data.lccn)) identifiers.push({ scheme: 'lccn', value });
      const [workKey] = keysOf(data.works, 'work');
      const pages =
        typeof data.number_of_pages === 'number' && Number.isInteger(data.number_of_pages) && data.number_of_pages > 0
          ? data.number_of_pages
          : null;
      return {
        record: {
          ...header,
          type: 'edition',
          edition: {
            title,
            subtitle: text(data.subtitle),
            ...isbns,
            publisher: texts(data.publishers)[0] ?? null,
            year: yearOf(text(data.publish_date)),
            pages,
            language: languageOf(data.languages),
            physicalFormat: text(data.physical_format),
            coverUrl: coverUrl(data.covers),
            series: texts(data.series)[0] ?? text(data.series),
            subjects: subjects(data.subjects),
            description: longText(data.description),
            workKey: workKey ?? null,
            authorKeys: keysOf(data.authors, 'author'),
            identifiers: uniqueIdentifiers(identifiers),
          },
        },
      };
    }
  }
}

/**
 * The edition's ISBN: the first valid ISBN-13, else the first valid ISBN-10. Separators and a
 * lower-case x are cleaned (a repair: the digits are the record's own); a wrong check digit or
 * length is never fixed, only reported.
 */
function readIsbns(written: readonly string[]): Pick<OlEdition, 'isbn' | 'isbnRepaired' | 'invalidIsbns'> {
  const valid: { isbn: Isbn; repaired: boolean }[] = [];
  const invalidIsbns: string[] = [];
  for (const raw of written) {
    const isbn = parseIsbn(raw);
    if (isbn) valid.push({ isbn, repaired: raw !== isbn.isbn13 && raw !== isbn.isbn10 });
    else invalidIsbns.push(raw);
  }
  // An ISBN-13 names the edition as well as its ISBN-10 does; the first one written is kept.
  const chosen = valid[0];
  return { isbn: chosen?.isbn ?? null, isbnRepaired: chosen?.repaired ?? false, invalidIsbns };
}

const YEAR = /(?<!\d)(1[0-9]{3}|20[0-9]{2})(?!\d)/;

/** The year of a free-text date ("1906", "February 27, 1995", "c1998", "[1985?]"), or null. */
export function yearOf(date: string | null): number | null {
  if (!date) return null;
  const match = YEAR.exec(date);
  if (!match) return null;
  const year = Number(match[1]);
  return year <= new Date().getUTCFullYear() + 1 ? year : null;
}

/** Keys of one kind from `[{key}]` (editions) or `[{author: {key}, type}]` (works' author roles), each once, in order. */
function keysOf(list: unknown, kind: OlKind): string[] {
  if (!Array.isArray(list)) return [];
  const keys: string[] = [];
  for (const item of list) {
    const ref: unknown = isObject(item) && 'author' in item ? item.author : item;
    const path = isObject(ref) ? text(ref.key) : text(ref);
    const parsed = path ? parseOlKey(path) : null;
    if (parsed?.kind === kind && !keys.includes(parsed.key)) keys.push(parsed.key);
  }
  return keys;
}

function languageOf(list: unknown): string | null {
  if (!Array.isArray(list)) return null;
  const first: unknown = list[0];
  const path = isObject(first) ? text(first.key) : null;
  return path?.startsWith('/languages/') ? path.slice('/languages/'.length) || null : null;
}

function coverUrl(covers: unknown): string | null {
  if (!Array.isArray(covers)) return null;
  const id = covers.find((cover): cover is number => typeof cover === 'number' && Number.isInteger(cover) && cover > 0);
  return id === undefined ? null : COVER_URL(id);
}

// Enough subjects to search by; some records list hundreds.
const MAX_SUBJECTS = 50;

function subjects(list: unknown): string[] {
  return unique(texts(list)).slice(0, MAX_SUBJECTS);
}

/** A description or bio, paragraphs kept: a string, or `{"type": "/type/text", "value": "..."}`. */
function longText(value: unknown): string | null {
  const raw = isObject(value) ? value.value : value;
  return typeof raw === 'string' ? storable(raw.replace(/\r\n?/g, '\n')) : null;
}

// Most texts need no cleaning; testing first spares a copy of each (a dump has hundreds of millions).
const UNCOLLAPSED = /\s\s|[^\S ]/;

/** A one-line text: whitespace collapsed; null when nothing is left. */
function text(value: unknown): string | null {
  if (typeof value !== 'string') return null;
  return storable(UNCOLLAPSED.test(value) ? value.replace(/\s+/g, ' ') : value);
}

const SURROGATE = /[\uD800-\uDFFF]/;
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g;

/** Text as PostgreSQL can store it: no NUL and no lone surrogate (both occur in the dumps). */
function storable(value: string): string | null {
  const unstorable = value.includes('\0') || SURROGATE.test(value);
  const cleaned = (unstorable ? value.replace(LONE_SURROGATE, '\uFFFD').replaceAll('\0', '') : value).trim();
  return cleaned === '' ? null : cleaned;
}

function texts(value: unknown): string[] {
  return Array.isArray(value) ? value.map(text).filter(isString) : [];
}

function uniqueIdentifiers(identifiers: readonly Identifier[]): Identifier[] {
  const seen = new Set<string>();
  return identifiers.filter((id) => !seen.has(`${id.scheme}:${id.value}`) && seen.add(`${id.scheme}:${id.value}`));
}

const unique = (values: readonly string[]): string[] => [...new Set(values)];
const isString = (value: string | null): value is string => value !== null;
const isObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);

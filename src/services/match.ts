import { parseIsbn } from '../domain/isbn.js';
import { assess, isbnSignal, MATCH_THRESHOLD, type MatchProbe, type MatchSignals } from '../domain/matching.js';
import type { BookRecord } from '../domain/records.js';
import { collapseWhitespace } from '../domain/text.js';
import { splitTitle, withoutTrailingParenthetical } from '../domain/titles.js';
import { badRequest } from '../errors.js';
import { matchCandidateIds } from '../stores/elasticsearch/matchCandidates.js';
import type { Spelling } from '../stores/elasticsearch/search.js';
import { booksByIds } from '../stores/postgres/catalogue.js';
import type { SearchServices } from './search.js';

/**
 * POST /v1/match: the catalogue book a messy record (title and/or ISBN, maybe author, year,
 * publisher) describes. The ISBN's book and the closest titles in Elasticsearch are the
 * candidates; domain/matching.ts weighs each; the best is the match when its confidence reaches
 * MATCH_THRESHOLD. Records come from PostgreSQL. Answers are kept in the short cache.
 */

/** Candidates shown: the best edition of each of the closest works. */
export const MATCH_CANDIDATES_SHOWN = 5;
// Editions fetched from the index to choose from; several may belong to one work.
const CANDIDATE_POOL = 30;
const TEXT_MAX_LENGTH = 500;

export const MATCH_FIELDS = ['title', 'isbn', 'author', 'year', 'publisher'] as const;

export interface MatchCandidate {
  confidence: number;
  signals: MatchSignals;
  book: BookRecord;
}

export interface MatchResult {
  /** The best candidate when its confidence reaches the threshold, else null. */
  match: BookRecord | null;
  /** Confidence of the best candidate (0 when there is none), whether or not it is the match. */
  confidence: number;
  /** Signals of the best candidate. */
  signals: MatchSignals;
  candidates: MatchCandidate[];
}

function textField(body: Record<string, unknown>, name: string): string | null {
  const value = body[name];
  if (value === undefined || value === null) return null;
  if (typeof value !== 'string') throw badRequest(`${name} must be a string`);
  const text = collapseWhitespace(value);
  if (text.length > TEXT_MAX_LENGTH) throw badRequest(`${name} must be at most ${TEXT_MAX_LENGTH} characters`);
  return text === '' ? null : text;
}

function yearField(body: Record<string, unknown>): number | null {
  const value = body.year;
  if (value === undefined || value === null) return null;
  if (typeof value !== 'number' || !Number.isInteger(value) || Math.abs(value) > 9999) throw badRequest('year must be an integer such as 1997');
  return value;
}

/** Validates a match request body; an empty title or ISBN counts as absent. */
export function parseMatchRequest(body: unknown): MatchProbe {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) throw badRequest('request body must be a JSON object');
  const fields = body as Record<string, unknown>;
  const unknown = Object.keys(fields).find((key) => !(MATCH_FIELDS as readonly string[]).includes(key));
  if (unknown !== undefined) throw badRequest(`unknown field "${unknown}": the fields are ${MATCH_FIELDS.join(', ')}`);
  const title = textField(fields, 'title');
  const isbnText = textField(fields, 'isbn');
  if (title === null && isbnText === null) throw badRequest('title or isbn required');
  const isbn = isbnText === null ? null : parseIsbn(isbnText);
  if (title === null && isbn === null) throw badRequest(`isbn "${isbnText}" is not a valid ISBN-10 or ISBN-13, and there is no title to match instead`);
  return { title, isbnText, isbn, author: textField(fields, 'author'), year: yearField(fields), publisher: textField(fields, 'publisher') };
}

/** The live book with this ISBN, following a merge to the survivor. */
export async function bookWithIsbn({ reads }: Pick<SearchServices, 'reads'>, isbn13: string): Promise<BookRecord | null> {
  const lookup = await reads.bookByIsbn13(isbn13);
  // A merged row names its final survivor, so one more point read reaches a live book.
  const live = lookup && 'mergedInto' in lookup ? await reads.book(lookup.mergedInto) : lookup;
  return live && 'found' in live ? live.found : null;
}

/** The candidates from the ISBN's book and the titles found, assessed, the best edition of each work, best first. */
async function assessedCandidates({ db, elastic, indices }: SearchServices, probe: MatchProbe, isbnBook: BookRecord | null, mode: Spelling): Promise<MatchCandidate[]> {
  const titleIds =
    probe.title === null
      ? []
      : await matchCandidateIds(elastic, indices.books, { title: withoutTrailingParenthetical(splitTitle(probe.title).title), fullTitle: probe.title, author: probe.author }, mode, CANDIDATE_POOL);
  const books = await booksByIds(db, titleIds.filter((id) => id !== isbnBook?.id));
  const assessed = [...(isbnBook ? [isbnBook] : []), ...books]
    .map((book) => ({ ...assess(probe, book, isbnSignal(probe, isbnBook, book)), book }))
    .sort((a, b) => b.confidence - a.confidence || b.book.ratings_count - a.book.ratings_count);
  const bestOfWork = new Map<string, MatchCandidate>();
  for (const candidate of assessed) if (!bestOfWork.has(candidate.book.work_id)) bestOfWork.set(candidate.book.work_id, candidate);
  return [...bestOfWork.values()].slice(0, MATCH_CANDIDATES_SHOWN);
}

/**
 * Titles are looked up as written first; only when that finds no match are typos tolerated, which
 * costs most of the time of a match and which a clean record does not need.
 */
async function findMatch(services: SearchServices, probe: MatchProbe): Promise<MatchResult> {
  const isbnBook = probe.isbn === null ? null : await bookWithIsbn(services, probe.isbn.isbn13);
  let candidates = await assessedCandidates(services, probe, isbnBook, 'exact');
  if (probe.title !== null && (candidates[0]?.confidence ?? 0) < MATCH_THRESHOLD) candidates = await assessedCandidates(services, probe, isbnBook, 'typos');
  const best = candidates[0];
  if (best === undefined) {
    const isbn = probe.isbnText === null ? 'absent' : probe.isbn === null ? 'invalid' : 'unknown';
    return { match: null, confidence: 0, signals: { isbn, title: probe.title === null ? null : 0, author: null, year: null, publisher: null }, candidates };
  }
  return { match: best.confidence >= MATCH_THRESHOLD ? best.book : null, confidence: best.confidence, signals: best.signals, candidates };
}

export async function matchBook(services: SearchServices, body: unknown): Promise<MatchResult> {
  const probe = parseMatchRequest(body);
  return services.shortCache.through(`match:${JSON.stringify(probe)}`, async () => ({ value: await findMatch(services, probe), cacheable: true }));
}

import { parseIsbn } from '../domain/isbn.js';
import { z } from 'zod/v4';
import { assess, isbnSignal, MATCH_THRESHOLD, matchSignals, type MatchProbe } from '../domain/matching.js';
import { bookRecord, type BookRecord } from '../domain/records.js';
import { collapseWhitespace, rejoinedApostrophes } from '../domain/text.js';
import type { Misspelt } from '../domain/similarity.js';
import { splitTitle, titleKey, withoutTrailingParenthetical } from '../domain/titles.js';
import { ApiError, badRequest, parseInput } from '../errors.js';
import { matchCandidates, type CandidateProbe } from '../stores/elasticsearch/matchCandidates.js';
import { knownTitleWords } from '../stores/elasticsearch/titleWords.js';
import type { Spelling } from '../stores/elasticsearch/search.js';
import { perTurn } from '../perTurn.js';
import { booksByIds } from '../stores/postgres/catalogue.js';
import { IDENTIFIER_MAX_LENGTH } from './lookups.js';
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
export const CANDIDATE_POOL = 30;
const TEXT_MAX_LENGTH = 500;

/** A text field: collapsed whitespace, and empty counts as absent. */
const textField = (name: string, description: string, maxLength = TEXT_MAX_LENGTH) =>
  z
    .string({ error: `${name} must be a string` })
    .max(maxLength, `${name} must be at most ${maxLength} characters`)
    .nullish()
    .transform((value) => (value === undefined || value === null ? null : collapseWhitespace(value) || null))
    .meta({ description });

const YEAR_MESSAGE = 'year must be an integer such as 1997';

const matchFields = {
  title: textField('title', 'As written anywhere: with or without subtitle, series in parentheses, leading article.').meta({
    example: 'Harry Potter and the Sorcerers Stone (Harry Potter, #1)',
  }),
  isbn: textField(
    'isbn',
    'ISBN-10 or ISBN-13, hyphens allowed. An invalid one beside a title is ignored (`signals.isbn` is `invalid`). At least one of title and isbn is required.',
    IDENTIFIER_MAX_LENGTH,
  ),
  author: textField('author', 'One name or a credit line, in any common form ("Rowling, J.K.; Mary GrandPré", "J.R.R. Tolkien").').meta({
    example: 'Rowling, J.K.',
  }),
  year: z
    .int({ error: YEAR_MESSAGE })
    .min(-9999, YEAR_MESSAGE)
    .max(9999, YEAR_MESSAGE)
    .nullish()
    .transform((value) => value ?? null)
    .meta({ description: 'Year of publication, e.g. 1997.' }),
  publisher: textField('publisher', 'Publisher, if known.'),
};

/**
 * The body of POST /v1/match, checked for its fields' types (and read by the MCP tools as their
 * arguments); parseMatchRequest adds what the fields must say together. Without an `id`, so that
 * the tools' input schemas show it inline.
 */
export const matchRequest = z
  .strictObject(matchFields, {
    error: (issue) =>
      issue.code === 'unrecognized_keys'
        ? `unknown field "${issue.keys[0]}": the fields are ${Object.keys(matchFields).join(', ')}`
        : 'request body must be a JSON object',
  })
  .meta({ description: 'At least `title` or `isbn`; empty strings and nulls count as absent. Other fields are refused.' });

export const matchCandidate = z
  .object({ confidence: z.number().min(0).max(1), signals: matchSignals, book: bookRecord })
  .meta({ id: 'MatchCandidate' });

export const matchResult = z
  .object({
    match: bookRecord.nullable().meta({ description: `The best candidate when its confidence is at least ${MATCH_THRESHOLD}, else null.` }),
    confidence: z.number().min(0).max(1).meta({ description: 'Of the best candidate, match or not; 0 when there is no candidate.' }),
    signals: matchSignals.meta({ description: 'Signals of the best candidate.' }),
    candidates: z
      .array(matchCandidate)
      .max(MATCH_CANDIDATES_SHOWN)
      .meta({ description: 'The best edition of each of the closest works, best first; the first is the match when there is one.' }),
  })
  .meta({ id: 'MatchResult' });

export type MatchCandidate = z.output<typeof matchCandidate>;
export type MatchResult = z.output<typeof matchResult>;

/** Validates a match request body; an empty title or ISBN counts as absent. */
export function parseMatchRequest(body: unknown): MatchProbe {
  const { title, isbn: isbnText, author, year, publisher } = parseInput(matchRequest, body);
  if (title === null && isbnText === null) throw badRequest('title or isbn required');
  const isbn = isbnText === null ? null : parseIsbn(isbnText);
  if (title === null && isbn === null)
    throw badRequest(`isbn "${isbnText}" is not a valid ISBN-10 or ISBN-13, and there is no title to match instead`);
  return { title, isbnText, isbn, author, year, publisher };
}

/** The live book with this ISBN, following a merge to the survivor. */
export async function bookWithIsbn({ reads }: Pick<SearchServices, 'reads'>, isbn13: string): Promise<BookRecord | null> {
  const lookup = await reads.bookByIsbn13(isbn13);
  // A merged row names its final survivor, so one more point read reaches a live book.
  const live = lookup && 'mergedInto' in lookup ? await reads.book(lookup.mergedInto) : lookup;
  return live && 'found' in live ? live.found : null;
}

/** What to look up in the index for a record that has a title. */
export const candidateProbe = (title: string, author: string | null): CandidateProbe => ({
  title: withoutTrailingParenthetical(splitTitle(title).title),
  fullTitle: title,
  author,
});

/**
 * Which words of the records' titles are misspelt: none that the catalogue's titles hold. Asked
 * only when typos are tolerated; until then every word counts as a real one.
 */
async function misspeltWords(
  { elastic, indices }: SearchServices,
  probes: readonly MatchProbe[],
  mode: Spelling,
): Promise<Misspelt | undefined> {
  if (mode === 'exact') return undefined;
  const asked = new Set(
    probes.flatMap((probe) =>
      probe.title === null
        ? []
        : titleKey(probe.title)
            .split(' ')
            .filter((word) => word !== ''),
    ),
  );
  const known = await knownTitleWords(elastic, indices.books, [...asked]);
  return (word) => asked.has(word) && !known.has(word);
}

/**
 * Of two assessed candidates, the better first: the more confident; at equal confidence a book
 * before a boxset, omnibus or companion (which a title would have to name to be meant, and then
 * would be the more confident), then the more read.
 */
const better = (a: MatchCandidate, b: MatchCandidate): number =>
  b.confidence - a.confidence ||
  Number(a.book.kind !== 'book') - Number(b.book.kind !== 'book') ||
  b.book.ratings_count - a.book.ratings_count;

/**
 * For each record, the candidates from its ISBN's book and the titles found, assessed, the best
 * edition of each work, best first. The titles of all the records are one request to the index
 * (with typos tolerated, one more at the same time for the words the catalogue knows), and the
 * books they find that `books` does not hold yet one read of PostgreSQL (added to it, so the typo
 * round reads only what the first round did not).
 */
async function assessedCandidates(
  services: SearchServices,
  probes: readonly MatchProbe[],
  isbnBooks: readonly (BookRecord | null)[],
  mode: Spelling,
  books: Map<string, BookRecord>,
): Promise<MatchCandidate[][]> {
  const { db, elastic, indices } = services;
  const titled = probes.flatMap((probe, index) =>
    probe.title === null ? [] : [{ index, probe: candidateProbe(probe.title, probe.author) }],
  );
  const [found, misspelt] = await Promise.all([
    matchCandidates(
      elastic,
      indices.books,
      titled.map(({ probe }) => probe),
      mode,
      CANDIDATE_POOL,
    ),
    misspeltWords(services, probes, mode),
  ]);
  const titleIds: string[][] = probes.map(() => []);
  const workTitles = new Map<string, string | null>();
  titled.forEach(({ index }, at) => {
    for (const candidate of found[at]!) workTitles.set(candidate.id, candidate.workTitle);
    titleIds[index] = found[at]!.flatMap((candidate) => (candidate.id === isbnBooks[index]?.id ? [] : [candidate.id]));
  });
  for (const book of await booksByIds(
    db,
    [...new Set(titleIds.flat())].filter((id) => !books.has(id)),
  ))
    books.set(book.id, book);
  return probes.map((probe, index) => {
    const isbnBook = isbnBooks[index] ?? null;
    const assessed = [...(isbnBook ? [isbnBook] : []), ...titleIds[index]!.flatMap((id) => books.get(id) ?? [])]
      .map((book) => ({ ...assess(probe, book, isbnSignal(probe, isbnBook, book), workTitles.get(book.id) ?? null, misspelt), book }))
      .sort(better);
    const bestOfWork = new Map<string, MatchCandidate>();
    for (const candidate of assessed) if (!bestOfWork.has(candidate.book.work_id)) bestOfWork.set(candidate.book.work_id, candidate);
    return [...bestOfWork.values()].slice(0, MATCH_CANDIDATES_SHOWN);
  });
}

function resultFor(probe: MatchProbe, candidates: MatchCandidate[]): MatchResult {
  const best = candidates[0];
  if (best === undefined) {
    const isbn = probe.isbnText === null ? 'absent' : probe.isbn === null ? 'invalid' : 'unknown';
    return {
      match: null,
      confidence: 0,
      signals: { isbn, title: probe.title === null ? null : 0, author: null, year: null, publisher: null },
      candidates,
    };
  }
  return { match: best.confidence >= MATCH_THRESHOLD ? best.book : null, confidence: best.confidence, signals: best.signals, candidates };
}

/**
 * The readings of a record: as written and, when it has words split at an apostrophe ("the handmaid
 * s tale"), also with them joined. The split may be a real one ("O Pioneers!"), so neither is dropped.
 */
function readingsOf(probe: MatchProbe): MatchProbe[] {
  const title = probe.title === null ? null : rejoinedApostrophes(probe.title);
  const author = probe.author === null ? null : rejoinedApostrophes(probe.author);
  return title === null && author === null ? [probe] : [probe, { ...probe, title: title ?? probe.title, author: author ?? probe.author }];
}

/**
 * Titles are looked up as written first; only when that finds no match are typos tolerated, which
 * costs most of the time of a match and which a clean record does not need. Records are matched
 * together, each as if alone: one round of the index for all of them, and one more for those
 * that need typos tolerated. Each reading of a record (readingsOf) is looked up in the same rounds
 * and the more confident answer stands, the record as written at equal confidence; a record one of
 * whose readings matches needs no typos tolerated.
 */
async function findMatches(services: SearchServices, probes: readonly MatchProbe[]): Promise<MatchResult[]> {
  const isbnBooks = await Promise.all(
    probes.map((probe) => (probe.isbn === null ? Promise.resolve(null) : bookWithIsbn(services, probe.isbn.isbn13))),
  );
  const books = new Map<string, BookRecord>();
  // The answer for each of `records`: its most confident reading's.
  const round = async (records: readonly number[], mode: Spelling): Promise<Map<number, MatchResult>> => {
    const readings = records.flatMap((index) => readingsOf(probes[index]!).map((reading) => ({ index, reading })));
    const candidates = await assessedCandidates(
      services,
      readings.map(({ reading }) => reading),
      readings.map(({ index }) => isbnBooks[index]!),
      mode,
      books,
    );
    const best = new Map<number, MatchResult>();
    readings.forEach(({ index, reading }, at) => {
      const result = resultFor(reading, candidates[at]!);
      if (result.confidence > (best.get(index)?.confidence ?? -1)) best.set(index, result);
    });
    return best;
  };
  const results = await round(
    probes.map((_, index) => index),
    'exact',
  );
  const retried = probes.flatMap((probe, index) =>
    probe.title !== null && results.get(index)!.confidence < MATCH_THRESHOLD ? [index] : [],
  );
  if (retried.length > 0) for (const [index, result] of await round(retried, 'typos')) results.set(index, result);
  return probes.map((_, index) => results.get(index)!);
}

const matchKey = (probe: MatchProbe): string => `match:${JSON.stringify(probe)}`;

export async function matchBook(services: SearchServices, body: unknown): Promise<MatchResult> {
  const probe = parseMatchRequest(body);
  return services.shortCache.through(matchKey(probe), async () => ({ value: (await findMatches(services, [probe]))[0]!, cacheable: true }));
}

/**
 * Several records, each answered as matchBook answers it (from the same short cache) or with the
 * 400 it would get, in their order. The records the cache does not hold are matched together
 * (findMatches): those whose cache reads come back in one turn of the event loop share the
 * index's round trips.
 */
export async function matchBooks(services: SearchServices, bodies: readonly unknown[]): Promise<(MatchResult | ApiError)[]> {
  const matchInTurn = perTurn<MatchProbe, MatchResult>(async (groups) => {
    const results = await findMatches(
      services,
      groups.map((group) => group.key),
    );
    return groups.map((group, index) => new Array<MatchResult>(group.count).fill(results[index]!));
  });
  return Promise.all(
    bodies.map(async (body) => {
      let probe: MatchProbe;
      try {
        probe = parseMatchRequest(body);
      } catch (error) {
        if (error instanceof ApiError) return error;
        throw error;
      }
      return services.shortCache.through(matchKey(probe), async () => ({ value: await matchInTurn(probe), cacheable: true }));
    }),
  );
}

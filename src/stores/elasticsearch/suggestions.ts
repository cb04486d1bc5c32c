import type { estypes } from '@elastic/elasticsearch';
import { AUTHOR } from './authorsIndex.js';
import { BOOK } from './booksIndex.js';
import type { Elastic, IndexAliases } from './client.js';
import { unavailable } from '../../errors.js';

/**
 * Type-ahead suggestions from the search indices: works (one per work), series and authors whose
 * names start as typed. Earlier words must match whole, the last as the start of a word (edge
 * n-gram subfields; a single letter as a prefix); a word of four letters or more may hold one typo.
 * Each candidate's score is its fit tier plus log10(1 + readers), the same for every kind, so the
 * kinds merge into one ranking: typed text that is the whole name first, then a name starting with
 * it, then any name holding its words; among equals the most read.
 *
 * Since a tier outranks every candidate of the tiers below whatever their readers, the tiers are
 * asked for in turn, each its most read candidates only: first, in one request to both indices,
 * names that are the typed text (a term) and names that start with it (the completion fields,
 * whose FST yields the most read inputs with a prefix without visiting every document that has
 * it, as filtering and sorting did: a short prefix matches a large share of the catalogue); then,
 * only when those leave places free, names holding the typed words (filters sorted by readers);
 * last, only for the series shown, their volumes.
 */

export interface SuggestQuery {
  /** The typed words, folded, a leading article dropped (titleKey). */
  key: string;
  /** authorKey of the typed text. */
  nameKey: string;
  limit: number;
}

export interface Credit {
  id: string;
  name: string;
}

export type Suggestion =
  | { type: 'work'; score: number; id: string; title: string; author: Credit | null; year: number | null; cover_url: string | null }
  | { type: 'author'; score: number; id: string; name: string; work_count: number }
  | { type: 'series'; score: number; name: string; author: Credit | null; volumes: number };

export const FIT_TIER = { whole: 100, start: 10, words: 1 } as const;
// A title that is the typed text also starts with it, as the tiers always counted.
const WHOLE_TITLE = FIT_TIER.whole + FIT_TIER.start - FIT_TIER.words;

// From the fourth letter of a word, one typo; the first letter must be right (it keeps the query fast).
const TYPO = { fuzziness: 'AUTO:4,100', prefix_length: 1 } as const;

/** The typed words in `field` (whole) and the last as the start of a word in `prefixField`. */
function typedWords(key: string, field: string, prefixField: string): estypes.QueryDslQueryContainer {
  const words = key.split(' ');
  const last = words.pop() ?? '';
  const lastClause: estypes.QueryDslQueryContainer =
    last.length === 1 ? { prefix: { [field]: { value: last } } } : { match: { [prefixField]: { query: last, ...TYPO } } };
  return { bool: { filter: [...words.map((word) => ({ match: { [field]: { query: word, ...TYPO } } })), lastClause] } };
}

interface BookSource {
  work_id: string;
  title: string;
  authors: Credit[];
  work_year: number | null;
  cover_url: string | null;
  series: string | null;
  work_readers: number | null;
  popularity: number | null;
}

interface AuthorSource {
  name: string;
  work_count: number;
  popularity: number;
}

const BOOK_SHOWN = [
  BOOK.work_id.path,
  BOOK.title.path,
  BOOK.authors.path,
  BOOK.work_year.path,
  BOOK.cover_url.path,
  BOOK.series.path,
  BOOK.work_readers.path,
  BOOK.popularity.path,
];
const AUTHOR_SHOWN = [AUTHOR.name.path, AUTHOR.work_count.path, AUTHOR.popularity.path];

/** Every suggestion's score, whatever its kind: how it fits as typed, then how many read it. */
const score = (tier: number, readers: number): number => tier + Math.log10(1 + Math.max(0, readers));

/**
 * Most read first and no score: Lucene then skips the documents that cannot enter the top. Missing
 * readers sort last, which keeps the skipping. Of a work's editions, the most read one.
 */
const BY_READERS: estypes.SortCombinations[] = [
  { [BOOK.work_readers.path]: { order: 'desc' } },
  { [BOOK.popularity.path]: { order: 'desc' } },
];
const BY_POPULARITY: estypes.SortCombinations[] = [{ [AUTHOR.popularity.path]: { order: 'desc' } }];
const readersOf = (value: unknown): number => {
  const readers = Number(value ?? 0);
  return Number.isFinite(readers) && readers > 0 ? readers : 0;
};

// Editions of a work under other titles are other inputs: asking for more lets `limit` works remain.
const EDITION_TITLES = 3;

/** A candidate and what identifies it among its kind (a work, a series' key, an author). */
interface Candidate {
  identity: string;
  suggestion: Suggestion;
  /** A series' key (titleKey of its name), for its volumes. */
  seriesKey?: string;
  /** Between candidates of one identity that score alike, the one shown: a work's most read edition. */
  preference: number;
}

/** How the typed text fits a name: whole, its start, or only its words. */
interface Fits {
  title(title: string): number;
  series(name: string): number;
  author(name: string): number;
}

function fitsOf(query: SuggestQuery, fold: (text: string) => string, nameKeyOf: (name: string) => string): Fits {
  const tier = (key: string, typed: string, whole: number) =>
    key === typed ? whole : key.startsWith(typed) ? FIT_TIER.start : FIT_TIER.words;
  return {
    title: (title) => tier(fold(title), query.key, WHOLE_TITLE),
    series: (name) => tier(fold(name), query.key, FIT_TIER.whole),
    author: (name) => {
      const key = nameKeyOf(name);
      // Readers type surnames ("rowl" for J.K. Rowling): a surname starting as typed is a start.
      const fit = tier(key, query.nameKey, FIT_TIER.whole);
      return fit === FIT_TIER.words && (key.split(' ').at(-1) ?? '').startsWith(query.nameKey) ? FIT_TIER.start : fit;
    },
  };
}

const workOf = (book: BookSource, fits: Fits): Candidate => ({
  identity: book.work_id,
  preference: readersOf(book.popularity),
  suggestion: {
    type: 'work',
    score: score(fits.title(book.title), readersOf(book.work_readers)),
    id: book.work_id,
    title: book.title,
    author: book.authors[0] ?? null,
    year: book.work_year ?? null,
    cover_url: book.cover_url ?? null,
  },
});

/** A series from its most read book; its volumes are counted once it is shown (seriesVolumes). */
const seriesOf = (
  book: Pick<BookSource, 'series' | 'authors' | 'work_readers'>,
  fits: Fits,
  fold: (text: string) => string,
): Candidate[] => {
  if (!book.series) return [];
  const seriesKey = fold(book.series);
  return [
    {
      identity: seriesKey,
      seriesKey,
      preference: 0,
      suggestion: {
        type: 'series',
        score: score(fits.series(book.series), readersOf(book.work_readers)),
        name: book.series,
        author: book.authors[0] ?? null,
        volumes: 0,
      },
    },
  ];
};

const authorOf = (id: string, author: AuthorSource, fits: Fits): Candidate => ({
  identity: id,
  preference: 0,
  suggestion: {
    type: 'author',
    score: score(fits.author(author.name), readersOf(author.popularity)),
    id,
    name: author.name,
    work_count: author.work_count,
  },
});

type Answer = estypes.MsearchMultiSearchItem<unknown>;
const LACKS_FIELD_RETRY_S = 60;

type Search = [index: string, body: estypes.MsearchMultisearchBody];
const searchOf =
  (index: string) =>
  (body: estypes.MsearchMultisearchBody): Search => [index, body];

/** Searches of one _msearch, each to its index; their answers in the same order. */
async function searched(elastic: Elastic, searches: Search[]): Promise<Answer[]> {
  const response = await elastic.msearch({ searches: searches.flatMap(([index, body]) => [{ index }, body]) });
  return response.responses.map((answer) => {
    if ('error' in answer) {
      const field = /no mapping found for field \[(\w+_start)\]/.exec(JSON.stringify(answer.error))?.[1];
      // An index built before the type-ahead's fields: away for suggestions until `reindex all` builds them.
      if (field) throw unavailable('Elasticsearch', LACKS_FIELD_RETRY_S, `the index lacks ${field}, which reindex builds`);
      throw new Error(`suggest search failed: ${answer.error.type}: ${answer.error.reason ?? ''}`);
    }
    return answer;
  });
}

interface CompletionOption<Source> {
  _id?: string;
  _source?: Source;
}
const optionsOf = <Source>(answer: Answer, name: string): CompletionOption<Source>[] =>
  (answer.suggest?.[name]?.[0] as { options?: CompletionOption<Source>[] } | undefined)?.options ?? [];

const completion = (prefix: string, field: string, size: number, skipDuplicates = false): estypes.SearchSuggester =>
  ({ prefix, completion: { field, size, skip_duplicates: skipDuplicates } }) as estypes.SearchSuggester;

/** The documents an answer found (hits), or its completion `name` offered. */
const hitsOf = <Source>(answer: Answer): { id: string; source: Source }[] =>
  answer.hits.hits.flatMap((hit) => (hit._source && hit._id ? [{ id: hit._id, source: hit._source as Source }] : []));
const offeredBy = <Source>(answer: Answer, name: string): { id: string; source: Source }[] =>
  optionsOf<Source>(answer, name).flatMap((option) => (option._source && option._id ? [{ id: option._id, source: option._source }] : []));

/**
 * The first search of the books index: titles that are the typed text (each work's most read
 * `limit`), and the works and series whose key starts with it (their completion fields).
 */
const booksWholeAndStart = (query: SuggestQuery): estypes.MsearchMultisearchBody => ({
  size: query.limit,
  _source: BOOK_SHOWN,
  track_total_hits: false,
  query: { term: { [BOOK.title.key]: query.key } },
  sort: BY_READERS,
  collapse: { field: BOOK.work_id.path },
  suggest: {
    works: completion(query.key, BOOK.title_start.path, query.limit * EDITION_TITLES),
    // Every book of a series gives its name: one input per name, its most read book's.
    series: completion(query.key, BOOK.series_start.path, query.limit, true),
  },
});

/** The first search of the authors index: names that are the typed text, and those whose key or surname starts with it. */
const authorsWholeAndStart = (query: SuggestQuery): estypes.MsearchMultisearchBody => ({
  size: query.limit,
  _source: AUTHOR_SHOWN,
  track_total_hits: false,
  query: { term: { [AUTHOR.name_key.path]: query.nameKey } },
  sort: BY_POPULARITY,
  // Both inputs of an author (name and surname) may start as typed, and each counts towards the size.
  ...(query.nameKey !== '' && { suggest: { authors: completion(query.nameKey, AUTHOR.name_start.path, query.limit * 2) } }),
});

const filtered = (words: estypes.QueryDslQueryContainer) => ({ bool: { filter: [words] } });

/** The next searches of the books index: works, then series, holding the typed words, each kind's most read `limit`. */
const booksHoldingWords = (query: SuggestQuery): estypes.MsearchMultisearchBody[] => [
  {
    size: query.limit,
    _source: BOOK_SHOWN,
    track_total_hits: false,
    query: filtered(typedWords(query.key, BOOK.title.path, BOOK.title.prefix)),
    sort: BY_READERS,
    collapse: { field: BOOK.work_id.path },
  },
  {
    size: query.limit,
    _source: [BOOK.series.path, BOOK.authors.path, BOOK.work_readers.path],
    track_total_hits: false,
    query: filtered(typedWords(query.key, BOOK.series.path, BOOK.series.prefix)),
    sort: BY_READERS,
    collapse: { field: BOOK.series.key },
  },
];

/** The next search of the authors index: names holding the typed words, the most popular `limit`. */
const authorsHoldingWords = (query: SuggestQuery): estypes.MsearchMultisearchBody => ({
  size: query.limit,
  _source: AUTHOR_SHOWN,
  track_total_hits: false,
  query: filtered(typedWords(query.key, AUTHOR.all_names.path, AUTHOR.all_names.prefix)),
  sort: BY_POPULARITY,
});

/** The volumes (works) of the series named by their keys, counted over those series' books only. */
const seriesVolumes = (keys: readonly string[]): estypes.MsearchMultisearchBody => ({
  size: 0,
  track_total_hits: false,
  query: { terms: { [BOOK.series.key]: [...keys] } },
  aggs: {
    names: { terms: { field: BOOK.series.key, size: keys.length }, aggs: { volumes: { cardinality: { field: BOOK.work_id.path } } } },
  },
});

function volumesFound(answer: Answer): [string, number][] {
  const buckets = (answer.aggregations?.names as { buckets: { key: string; volumes: { value: number } }[] } | undefined)?.buckets ?? [];
  return buckets.map((bucket) => [bucket.key, bucket.volumes.value]);
}

// Equal fits and readers compare equal once rounded, and then a work comes before an author, and
// both before a series of the same name.
const rounded = (score: number): number => Math.round(score * 1000);
const KIND_ORDER: Record<Suggestion['type'], number> = { work: 0, author: 1, series: 2 };

/** Each candidate once (at its best score, then preference), best first. */
function ranking(candidates: Candidate[]): Candidate[] {
  const best = new Map<string, Candidate>();
  for (const candidate of candidates) {
    const id = `${candidate.suggestion.type}:${candidate.identity}`;
    const kept = best.get(id);
    const order = kept ? rounded(candidate.suggestion.score) - rounded(kept.suggestion.score) || candidate.preference - kept.preference : 1;
    if (order > 0) best.set(id, candidate);
  }
  return [...best.values()].sort(
    (a, b) => rounded(b.suggestion.score) - rounded(a.suggestion.score) || KIND_ORDER[a.suggestion.type] - KIND_ORDER[b.suggestion.type],
  );
}

/**
 * The best `limit` suggestions of every kind together, best first. `fold` makes a title comparable
 * with `key`, `nameKeyOf` a name with `nameKey`.
 */
export async function suggest(
  elastic: Elastic,
  indices: IndexAliases,
  query: SuggestQuery,
  fold: (text: string) => string,
  nameKeyOf: (name: string) => string,
): Promise<Suggestion[]> {
  const fits = fitsOf(query, fold, nameKeyOf);
  const works = (found: { source: BookSource }[]) => found.map(({ source }) => workOf(source, fits));
  const series = (found: { source: BookSource }[]) => found.flatMap(({ source }) => seriesOf(source, fits, fold));
  const authors = (found: { id: string; source: AuthorSource }[]) => found.map(({ id, source }) => authorOf(id, source, fits));

  const [books, people] = (await searched(elastic, [
    [indices.books, booksWholeAndStart(query)],
    [indices.authors, authorsWholeAndStart(query)],
  ])) as [Answer, Answer];
  const startOptions = optionsOf<BookSource>(books, 'works');
  const candidates = [
    ...works([...hitsOf<BookSource>(books), ...offeredBy<BookSource>(books, 'works')]),
    ...series(offeredBy<BookSource>(books, 'series')),
    ...authors([...hitsOf<AuthorSource>(people), ...offeredBy<AuthorSource>(people, 'authors')]),
  ];
  let ranked = ranking(candidates);
  const volumes = new Map<string, number>();
  const seriesKeys = (found: Candidate[]) => found.flatMap((candidate) => (candidate.seriesKey === undefined ? [] : [candidate.seriesKey]));

  // Names holding the typed words rank below every name starting with it: asked for only when
  // places are left, or when the titles starting with it were all editions of fewer works.
  const startingAsTyped = ranked.filter((candidate) => candidate.suggestion.score >= FIT_TIER.start).length;
  const worksCut =
    startOptions.length === query.limit * EDITION_TITLES &&
    new Set(startOptions.map((option) => option._source?.work_id)).size < query.limit;
  if (startingAsTyped < query.limit || worksCut) {
    // The volumes of the series found so far come with them, in the same request.
    const known = seriesKeys(ranked);
    const [holdingTitle, holdingSeries, holdingName, counted] = (await searched(elastic, [
      ...booksHoldingWords(query).map(searchOf(indices.books)),
      searchOf(indices.authors)(authorsHoldingWords(query)),
      ...(known.length > 0 ? [searchOf(indices.books)(seriesVolumes(known))] : []),
    ])) as [Answer, Answer, Answer, Answer | undefined];
    candidates.push(
      ...works(hitsOf<BookSource>(holdingTitle)),
      ...series(hitsOf<BookSource>(holdingSeries)),
      ...authors(hitsOf<AuthorSource>(holdingName)),
    );
    ranked = ranking(candidates);
    for (const [key, count] of counted ? volumesFound(counted) : []) volumes.set(key, count);
  }

  const shown = ranked.slice(0, query.limit);
  const uncounted = seriesKeys(shown).filter((key) => !volumes.has(key));
  if (uncounted.length > 0)
    for (const [key, count] of volumesFound((await searched(elastic, [[indices.books, seriesVolumes(uncounted)]]))[0]!))
      volumes.set(key, count);
  return shown.map(({ suggestion, seriesKey }) =>
    suggestion.type === 'series' && seriesKey !== undefined ? { ...suggestion, volumes: volumes.get(seriesKey) ?? 0 } : suggestion,
  );
}

/** The type-ahead's searches of one index, as the API sends them: they warm a fresh index before its alias moves to it. */
export async function warmSuggestions(elastic: Elastic, kind: keyof IndexAliases, index: string, query: SuggestQuery): Promise<void> {
  const bodies =
    kind === 'books'
      ? [booksWholeAndStart(query), ...booksHoldingWords(query), seriesVolumes([query.key])]
      : [authorsWholeAndStart(query), authorsHoldingWords(query)];
  await searched(elastic, bodies.map(searchOf(index)));
}

import type { estypes } from '@elastic/elasticsearch';
import { AUTHOR } from './authorsIndex.js';
import { BOOK } from './booksIndex.js';
import type { Elastic, IndexAliases } from './client.js';

/**
 * Type-ahead suggestions from the search indices: works (one per work), series and authors whose
 * names start as typed. Earlier words must match whole, the last as the start of a word (edge
 * n-gram subfields; a single letter as a prefix); a word of four letters or more may hold one typo.
 * Each candidate's score is its fit tier plus log10(1 + readers), the same for every kind, so the
 * kinds merge into one ranking: typed text that is the whole name first, then a name starting with
 * it, then any name holding its words; among equals the most read.
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

// From the fourth letter of a word, one typo; the first letter must be right (it keeps the query fast).
const TYPO = { fuzziness: 'AUTO:4,100', prefix_length: 1 } as const;

/** The typed words in `field` (whole) and the last as the start of a word in `prefixField`. */
function typedWords(key: string, field: string, prefixField: string): estypes.QueryDslQueryContainer {
  const words = key.split(' ');
  const last = words.pop() ?? '';
  const lastClause: estypes.QueryDslQueryContainer =
    last.length === 1 ? { prefix: { [field]: { value: last } } } : { match: { [prefixField]: { query: last, ...TYPO } } };
  return {
    constant_score: {
      filter: { bool: { must: [...words.map((word) => ({ match: { [field]: { query: word, ...TYPO } } })), lastClause] } },
      boost: FIT_TIER.words,
    },
  };
}

/** Fit tiers over `keyField` plus log10(1 + readers) from `readersField`. */
function ranked(
  words: estypes.QueryDslQueryContainer,
  keyField: string,
  key: string,
  readersField: string,
): estypes.QueryDslQueryContainer {
  return {
    function_score: {
      query: {
        bool: {
          must: [words],
          should: [{ constant_score: { filter: { term: { [keyField]: key } }, boost: FIT_TIER.whole - FIT_TIER.words } }],
        },
      },
      functions: [{ field_value_factor: { field: readersField, modifier: 'log1p', missing: 0 } }],
      boost_mode: 'sum',
    },
  };
}

interface BookSource {
  work_id: string;
  title: string;
  authors: Credit[];
  work_year: number | null;
  cover_url: string | null;
  series: string | null;
}

const fitOf = (name: string, key: string, fold: (text: string) => string): number => {
  const folded = fold(name);
  return folded === key ? FIT_TIER.whole : folded.startsWith(key) ? FIT_TIER.start : FIT_TIER.words;
};

/** Every suggestion's score, whatever its kind: how it fits as typed, then how many read it. */
const score = (tier: number, readers: number): number => tier + Math.log10(1 + Math.max(0, readers));

/**
 * Most read first and no score: Lucene then skips the documents that cannot enter the top (a short
 * prefix matches a large share of the catalogue, and scoring or aggregating every match took a second
 * at 1 M books). Missing readers sort last, which keeps the skipping.
 */
const BY_READERS: estypes.SortCombinations[] = [{ [BOOK.work_readers.path]: { order: 'desc' } }];
const readersOf = (sort: estypes.SortResults | undefined): number => {
  const value = Number(sort?.[0] ?? 0);
  return Number.isSafeInteger(value) && value > 0 ? value : 0;
};

/**
 * Works by fit tier: a title that is the typed text (it also starts with it, as the tiers always
 * counted), one that starts with it, one holding its words. Each tier's most read `limit` works;
 * since a score is its tier plus log10(1 + readers), the best `limit` of all are among them.
 */
const WORK_TIERS = [
  { tier: FIT_TIER.whole + FIT_TIER.start - FIT_TIER.words, clause: (key: string) => ({ term: { [BOOK.title.key]: key } }) },
  { tier: FIT_TIER.start, clause: (key: string) => ({ prefix: { [BOOK.title.key]: { value: key } } }) },
  { tier: FIT_TIER.words, clause: null },
] as const;

/** Works and series as typed, from the books index (two requests: candidates, then the series' counts). */
export async function worksAndSeries(
  elastic: Elastic,
  index: string,
  query: SuggestQuery,
  fold: (text: string) => string,
): Promise<Suggestion[]> {
  const titleWords = typedWords(query.key, BOOK.title.path, BOOK.title.prefix);
  const seriesWords = typedWords(query.key, BOOK.series.path, BOOK.series.prefix);
  const works: estypes.MsearchMultisearchBody[] = WORK_TIERS.map(({ clause }) => ({
    size: query.limit,
    _source: [BOOK.work_id.path, BOOK.title.path, BOOK.authors.path, BOOK.work_year.path, BOOK.cover_url.path],
    track_total_hits: false,
    query: { bool: { filter: [titleWords, ...(clause ? [clause(query.key)] : [])] } },
    sort: BY_READERS,
    collapse: { field: BOOK.work_id.path },
  }));
  // The most read `limit` series: each series' most read book, as the series' readers.
  const seriesCandidates: estypes.MsearchMultisearchBody = {
    size: query.limit,
    _source: false,
    track_total_hits: false,
    query: { bool: { filter: [seriesWords] } },
    sort: BY_READERS,
    collapse: { field: BOOK.series.keyword },
  };
  const response = await elastic.msearch<BookSource>({ index, searches: [...works, seriesCandidates].flatMap((body) => [{}, body]) });
  const answers = response.responses.map((answer) => {
    if ('error' in answer) throw new Error(`suggest search failed: ${answer.error.type}: ${answer.error.reason ?? ''}`);
    return answer.hits.hits;
  });
  const best = new Map<string, Suggestion & { type: 'work' }>();
  WORK_TIERS.forEach(({ tier }, at) => {
    for (const hit of answers[at]!) {
      const book = hit._source!;
      const found = score(tier, readersOf(hit.sort));
      if ((best.get(book.work_id)?.score ?? -1) >= found) continue;
      best.set(book.work_id, {
        type: 'work',
        score: found,
        id: book.work_id,
        title: book.title,
        author: book.authors[0] ?? null,
        year: book.work_year ?? null,
        cover_url: book.cover_url ?? null,
      });
    }
  });
  const seriesReaders = new Map(
    answers[WORK_TIERS.length]!.flatMap((hit) => {
      const name: unknown = (hit.fields?.[BOOK.series.keyword] as unknown[] | undefined)?.[0];
      return typeof name === 'string' ? [[name, readersOf(hit.sort)] as const] : [];
    }),
  );
  return [...best.values(), ...(await seriesOf(elastic, index, seriesWords, seriesReaders, query.key, fold))];
}

/** Each series' first author (its most popular book's) and volumes (its works), counted over the named series only. */
async function seriesOf(
  elastic: Elastic,
  index: string,
  seriesWords: estypes.QueryDslQueryContainer,
  readers: ReadonlyMap<string, number>,
  key: string,
  fold: (text: string) => string,
): Promise<Suggestion[]> {
  if (readers.size === 0) return [];
  const response = await elastic.search({
    index,
    size: 0,
    track_total_hits: false,
    query: { bool: { filter: [{ terms: { [BOOK.series.keyword]: [...readers.keys()] } }, seriesWords] } },
    aggs: {
      names: {
        terms: { field: BOOK.series.keyword, size: readers.size },
        aggs: {
          volumes: { cardinality: { field: BOOK.work_id.path } },
          first: {
            top_hits: { size: 1, sort: [{ [BOOK.popularity.path]: { order: 'desc' } }], _source: [BOOK.series.path, BOOK.authors.path] },
          },
        },
      },
    },
  });
  interface SeriesBucket {
    key: string;
    volumes: { value: number };
    first: { hits: { hits: { _source: Pick<BookSource, 'series' | 'authors'> }[] } };
  }
  const buckets = (response.aggregations?.names as { buckets: SeriesBucket[] } | undefined)?.buckets ?? [];
  return buckets.flatMap((bucket) => {
    const first = bucket.first.hits.hits[0]?._source;
    if (!first?.series) return [];
    return [
      {
        type: 'series' as const,
        score: score(fitOf(first.series, key, fold), readers.get(bucket.key) ?? 0),
        name: first.series,
        author: first.authors[0] ?? null,
        volumes: bucket.volumes.value,
      },
    ];
  });
}

/**
 * Authors as typed, from the authors index. A name starts as typed when its surname (the last word
 * of its key) or the whole name does: readers type surnames ("rowl" for J.K. Rowling).
 */
export async function authorsAsTyped(
  elastic: Elastic,
  index: string,
  query: SuggestQuery,
  nameKeyOf: (name: string) => string,
): Promise<Suggestion[]> {
  const response = await elastic.search<{ name: string; work_count: number; popularity: number }>({
    index,
    size: query.limit * 3,
    _source: [AUTHOR.name.path, AUTHOR.work_count.path, AUTHOR.popularity.path],
    track_total_hits: false,
    query: ranked(
      typedWords(query.key, AUTHOR.all_names.path, AUTHOR.all_names.prefix),
      AUTHOR.name_key.path,
      query.nameKey,
      AUTHOR.popularity.path,
    ),
  });
  return response.hits.hits.map((hit) => {
    const author = hit._source!;
    const key = nameKeyOf(author.name);
    const tier =
      key === query.nameKey
        ? FIT_TIER.whole
        : key.startsWith(query.nameKey) || (key.split(' ').at(-1) ?? '').startsWith(query.nameKey)
          ? FIT_TIER.start
          : FIT_TIER.words;
    return {
      type: 'author',
      score: score(tier, Number(author.popularity ?? 0)),
      id: hit._id ?? '',
      name: author.name,
      work_count: author.work_count,
    };
  });
}

// Equal fits and readers compare equal once rounded, and then a work comes before an author, and
// both before a series of the same name.
const rounded = (score: number): number => Math.round(score * 1000);
const KIND_ORDER: Record<Suggestion['type'], number> = { work: 0, author: 1, series: 2 };

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
  const [books, people] = await Promise.all([
    worksAndSeries(elastic, indices.books, query, fold),
    authorsAsTyped(elastic, indices.authors, query, nameKeyOf),
  ]);
  return [...books, ...people]
    .sort((a, b) => rounded(b.score) - rounded(a.score) || KIND_ORDER[a.type] - KIND_ORDER[b.type])
    .slice(0, query.limit);
}

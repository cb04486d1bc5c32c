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
  startTier: boolean,
): estypes.QueryDslQueryContainer {
  return {
    function_score: {
      query: {
        bool: {
          must: [words],
          should: [
            { constant_score: { filter: { term: { [keyField]: key } }, boost: FIT_TIER.whole - FIT_TIER.words } },
            ...(startTier ? [{ constant_score: { filter: { prefix: { [keyField]: key } }, boost: FIT_TIER.start - FIT_TIER.words } }] : []),
          ],
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

/** Works and series as typed, from the books index (one request). */
export async function worksAndSeries(
  elastic: Elastic,
  index: string,
  query: SuggestQuery,
  fold: (text: string) => string,
): Promise<Suggestion[]> {
  const response = await elastic.search<BookSource>({
    index,
    size: query.limit,
    _source: [BOOK.work_id.path, BOOK.title.path, BOOK.authors.path, BOOK.work_year.path, BOOK.cover_url.path],
    track_total_hits: false,
    query: ranked(typedWords(query.key, BOOK.title.path, BOOK.title.prefix), BOOK.title.key, query.key, BOOK.work_readers.path, true),
    collapse: { field: BOOK.work_id.path },
    aggs: {
      series: {
        global: {},
        aggs: {
          typed: {
            filter: typedWords(query.key, BOOK.series.path, BOOK.series.prefix),
            aggs: {
              names: {
                terms: { field: BOOK.series.keyword, size: query.limit, order: { readers: 'desc' } },
                aggs: {
                  readers: { max: { field: BOOK.work_readers.path } },
                  volumes: { cardinality: { field: BOOK.work_id.path } },
                  first: {
                    top_hits: {
                      size: 1,
                      sort: [{ [BOOK.popularity.path]: { order: 'desc' } }],
                      _source: [BOOK.series.path, BOOK.authors.path],
                    },
                  },
                },
              },
            },
          },
        },
      },
    },
  });
  const works: Suggestion[] = response.hits.hits.map((hit) => {
    const book = hit._source!;
    return {
      type: 'work',
      score: hit._score ?? 0,
      id: book.work_id,
      title: book.title,
      author: book.authors[0] ?? null,
      year: book.work_year ?? null,
      cover_url: book.cover_url ?? null,
    };
  });
  interface SeriesBucket {
    readers: { value: number | null };
    volumes: { value: number };
    first: { hits: { hits: { _source: Pick<BookSource, 'series' | 'authors'> }[] } };
  }
  const buckets =
    (response.aggregations?.series as { typed: { names: { buckets: SeriesBucket[] } } } | undefined)?.typed.names.buckets ?? [];
  const series: Suggestion[] = buckets.flatMap((bucket) => {
    const first = bucket.first.hits.hits[0]?._source;
    if (!first?.series) return [];
    return [
      {
        type: 'series',
        score: fitOf(first.series, query.key, fold) + Math.log10(1 + (bucket.readers.value ?? 0)),
        name: first.series,
        author: first.authors[0] ?? null,
        volumes: bucket.volumes.value,
      },
    ];
  });
  return [...works, ...series];
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
      false,
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
      score: tier + Math.log10(1 + Number(author.popularity ?? 0)),
      id: hit._id ?? '',
      name: author.name,
      work_count: author.work_count,
    };
  });
}

// Elasticsearch scores are single precision: equal fits and readers compare equal once rounded, and
// then a work comes before an author, and both before a series of the same name.
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

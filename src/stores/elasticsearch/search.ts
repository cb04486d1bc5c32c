import type { estypes } from '@elastic/elasticsearch';
import type { Elastic } from './client.js';

/** Book and author search in Elasticsearch: the queries and their execution. Records come from PostgreSQL. */

/** One hit: the id of the document and its relevance score. */
export interface ScoredId {
  id: string;
  score: number;
}

export interface HitPage {
  /** Books (or works, when collapsed) or authors that match, not only those on the page. */
  total: number;
  hits: ScoredId[];
}

export interface BookSearch {
  /** Free text, ISBNs taken out; may be empty when the query was only ISBNs. */
  text: string;
  /** ISBN-13s found in the query: their editions rank first. */
  isbn13s: string[];
  authorId: string | null;
  language: string | null;
  yearFrom: number | null;
  yearTo: number | null;
  /** False: one hit per work (its best-scoring edition). */
  everyEdition: boolean;
  offset: number;
  limit: number;
}

export interface AuthorSearch {
  text: string;
  /** authorKey(text): initials joined, reading order, folded, to meet the indexed name_key. */
  nameKey: string;
  offset: number;
  limit: number;
}

// An ISBN hit outranks any text score.
const ISBN_BOOST = 1_000;
// Beyond this many distinct works the total is approximate (HyperLogLog); below it is exact.
const WORK_COUNT_PRECISION = 10_000;

// Typos: one edit in words of 3 to 5 letters, two from 6; the first letter must be right (it keeps the query fast).
// Search reads at most 20 spellings of a word; match reads 50, as it must not miss the one right title.
const SEARCH_FUZZY = { fuzziness: 'AUTO', prefix_length: 1, max_expansions: 20 } as const;
export const MATCH_FUZZY = { ...SEARCH_FUZZY, max_expansions: 50 } as const;

/** The words as typed, or also their spellings up to typos. */
export type Spelling = 'exact' | 'typos';
const spelling = (mode: Spelling) => (mode === 'typos' ? SEARCH_FUZZY : {});

/**
 * Typo tolerance costs most of a query's time, and a query spelt right needs none: the words as
 * typed are tried first, and only when they do not fill the page asked for is the query run again
 * with typos tolerated (which finds everything the first run found, and more).
 */
async function exactThenTypos(run: (mode: Spelling) => Promise<HitPage>, wanted: number): Promise<HitPage> {
  const exact = await run('exact');
  return exact.total >= wanted ? exact : run('typos');
}

/**
 * Relevance of a book to free text. The required clause decides what matches: the words in
 * all_text (title, subtitle, series and author names together), or with the last word as a prefix
 * (search as you type). The other clauses only rank: the words in the title, as a phrase, as
 * prefixes, stemmed, in the series, in the author names. With typos tolerated, all_text and the
 * title read the words up to typos; the other ranking clauses always take them as typed.
 */
function bookTextQuery(text: string, mode: Spelling): estypes.QueryDslQueryContainer {
  const enough = '2<75%'; // up to two words: all of them; more: three in four
  return {
    bool: {
      must: [
        {
          dis_max: {
            queries: [
              { match: { all_text: { query: text, ...spelling(mode), minimum_should_match: enough } } },
              { match_bool_prefix: { all_text: { query: text, minimum_should_match: enough } } },
            ],
          },
        },
      ],
      should: [
        { match: { title: { query: text, ...spelling(mode), operator: 'and', boost: 3 } } },
        { match_phrase: { title: { query: text, slop: 1, boost: 4 } } },
        { match: { 'title.prefix': { query: text, operator: 'and' } } },
        { match: { 'title.english': { query: text } } },
        { match: { series: { query: text } } },
        { match: { author_names: { query: text, boost: 2 } } },
        { match_phrase: { author_names: { query: text, boost: 8 } } },
      ],
    },
  };
}

const isbnClause = (isbn13s: string[]): estypes.QueryDslQueryContainer => ({
  constant_score: { filter: { terms: { isbn_13: isbn13s } }, boost: ISBN_BOOST },
});

/**
 * Popular entries rank a little higher: the text score times 1 + weight * log10(1 + popularity),
 * so with weight 0.1 a book with 5 million ratings gains 67% over one nobody rated, 1,000 ratings 30%.
 */
export const withPopularity = (query: estypes.QueryDslQueryContainer, weight: number): estypes.QueryDslQueryContainer => ({
  function_score: {
    query,
    functions: [{ weight: 1 }, { field_value_factor: { field: 'popularity', modifier: 'log1p', missing: 0 }, weight }],
    score_mode: 'sum',
    boost_mode: 'multiply',
  },
});

function bookFilters(search: BookSearch): estypes.QueryDslQueryContainer[] {
  const filters: estypes.QueryDslQueryContainer[] = [];
  if (search.authorId !== null) filters.push({ term: { author_ids: search.authorId } });
  if (search.language !== null) filters.push({ term: { language: search.language } });
  if (search.yearFrom !== null || search.yearTo !== null) {
    filters.push({ range: { year: { ...(search.yearFrom !== null && { gte: search.yearFrom }), ...(search.yearTo !== null && { lte: search.yearTo }) } } });
  }
  return filters;
}

export const scoredIds = (hits: estypes.SearchHit[]): ScoredId[] => hits.map((hit) => ({ id: hit._id ?? '', score: hit._score ?? 0 }));

const totalOf = (total: estypes.SearchTotalHits | number | undefined): number => (typeof total === 'number' ? total : total?.value ?? 0);

export async function searchBooks(elastic: Elastic, index: string, search: BookSearch): Promise<HitPage> {
  const run = async (mode: Spelling): Promise<HitPage> => {
    const should: estypes.QueryDslQueryContainer[] = [];
    if (search.text !== '') should.push(bookTextQuery(search.text, mode));
    if (search.isbn13s.length > 0) should.push(isbnClause(search.isbn13s));
    const response = await elastic.search<unknown, { works: estypes.AggregationsCardinalityAggregate }>({
      index,
      from: search.offset,
      size: search.limit,
      _source: false,
      track_total_hits: search.everyEdition,
      query: withPopularity({ bool: { should, minimum_should_match: 1, filter: bookFilters(search) } }, 0.1),
      ...(!search.everyEdition && {
        collapse: { field: 'work_id' },
        aggs: { works: { cardinality: { field: 'work_id', precision_threshold: WORK_COUNT_PRECISION } } },
      }),
    });
    const total = search.everyEdition ? totalOf(response.hits.total) : response.aggregations?.works.value ?? 0;
    return { total, hits: scoredIds(response.hits.hits) };
  };
  return search.text === '' ? run('exact') : exactThenTypos(run, search.offset + search.limit);
}

export async function searchAuthors(elastic: Elastic, index: string, search: AuthorSearch): Promise<HitPage> {
  const run = async (mode: Spelling): Promise<HitPage> => {
    const response = await elastic.search({
      index,
      from: search.offset,
      size: search.limit,
      _source: false,
      track_total_hits: true,
      query: withPopularity(
        {
          bool: {
            should: [
              { term: { name_key: { value: search.nameKey, boost: 10 } } },
              { match: { all_names: { query: search.text, ...spelling(mode), operator: 'and', boost: 2 } } },
              { match: { all_names: { query: search.nameKey, ...spelling(mode), operator: 'and', boost: 2 } } },
              { match: { 'all_names.prefix': { query: search.text, operator: 'and', boost: 1 } } },
            ],
            minimum_should_match: 1,
          },
        },
        0.1,
      ),
    });
    return { total: totalOf(response.hits.total), hits: scoredIds(response.hits.hits) };
  };
  return exactThenTypos(run, search.offset + search.limit);
}

import type { estypes } from '@elastic/elasticsearch';
import { BOOK, FACET_SEPARATOR } from './booksIndex.js';

/**
 * Facets of book search: for each field asked, its most frequent values over the whole result set,
 * with counts. A field's counts ignore that field's own filter (the other filters apply), so a page
 * can show the other languages beside the one chosen: the filters of a faceted search go into
 * `post_filter`, which narrows the hits but not the aggregations, and each facet's aggregation sits
 * in a filter of all the other filters.
 */

export const FACET_FIELDS = ['subject', 'language', 'decade', 'author', 'publisher'] as const;
export type FacetField = (typeof FACET_FIELDS)[number];

/** One value of a facet: what to show and to filter by, and how many results have it. */
export interface FacetValue {
  value: string;
  count: number;
  /** The author's name (author facet). */
  name?: string;
}

export type Facets = Partial<Record<FacetField, FacetValue[]>>;

/** The filters of a search, each under the facet it narrows (absent: not filtered). */
export type FacetFilters = Partial<Record<FacetField, estypes.QueryDslQueryContainer>>;

// Candidates read per field: with one result per work the index counts editions, and the values
// are then ordered by their works, which may bring a value from a little further down.
const CANDIDATES_PER_VALUE = 3;
// Spellings read per subject key, to find the most common one among those of the other subjects of its books.
const SPELLINGS_READ = 10;

const workCount: Record<string, estypes.AggregationsAggregationContainer> = { works: { cardinality: { field: BOOK.work_id.path } } };

function valuesAggregation(field: FacetField, size: number, perWork: boolean): estypes.AggregationsAggregationContainer {
  const terms = (name: string, sub: Record<string, estypes.AggregationsAggregationContainer> = {}) => ({
    terms: { field: name, size: perWork ? size * CANDIDATES_PER_VALUE : size },
    aggs: { ...sub, ...(perWork ? workCount : {}) },
  });
  switch (field) {
    case 'subject':
      return terms(BOOK.subject_keys.path, { spellings: { terms: { field: BOOK.subject_facet.path, size: SPELLINGS_READ } } });
    case 'language':
      return terms(BOOK.language.path);
    case 'author':
      return terms(BOOK.author_facet.path);
    case 'publisher':
      return terms(BOOK.publisher.keyword, { spellings: { terms: { field: BOOK.publisher.raw, size: 1 } } });
    case 'decade':
      return { histogram: { field: BOOK.year.path, interval: 10, min_doc_count: 1 }, aggs: perWork ? workCount : {} };
  }
}

/** The aggregations of the facets asked: each under a filter of every filter but its own. */
export function facetAggregations(
  fields: readonly FacetField[],
  filters: FacetFilters,
  size: number,
  perWork: boolean,
): Record<string, estypes.AggregationsAggregationContainer> {
  return Object.fromEntries(
    fields.map((field) => {
      const others = Object.entries(filters).flatMap(([name, filter]) => (name === field || !filter ? [] : [filter]));
      return [field, { filter: { bool: { filter: others } }, aggs: { values: valuesAggregation(field, size, perWork) } }];
    }),
  );
}

interface Bucket {
  key: string | number;
  doc_count: number;
  works?: { value: number };
  spellings?: { buckets: { key: string; doc_count: number }[] };
}

function facetValue(field: FacetField, bucket: Bucket, perWork: boolean): FacetValue {
  const count = perWork ? (bucket.works?.value ?? bucket.doc_count) : bucket.doc_count;
  const key = String(bucket.key);
  switch (field) {
    case 'author': {
      const [id = key, name = ''] = key.split(FACET_SEPARATOR);
      return { value: id, name, count };
    }
    case 'subject': {
      const spelling = bucket.spellings?.buckets.map((found) => found.key.split(FACET_SEPARATOR)).find(([of]) => of === key)?.[1];
      return { value: spelling ?? key, count };
    }
    case 'publisher':
      return { value: bucket.spellings?.buckets[0]?.key ?? key, count };
    case 'decade':
      return { value: String(Number(bucket.key)), count };
    case 'language':
      return { value: key, count };
  }
}

/** The facets of a response: each field's values, most frequent first (ties by value), at most `size`. */
export function readFacets(
  aggregations: Record<string, estypes.AggregationsAggregate> | undefined,
  fields: readonly FacetField[],
  size: number,
  perWork: boolean,
): Facets {
  const facets: Facets = {};
  for (const field of fields) {
    const values = (aggregations?.[field] as { values?: { buckets: Bucket[] } } | undefined)?.values?.buckets ?? [];
    facets[field] = values
      .map((bucket) => facetValue(field, bucket, perWork))
      .sort((a, b) => b.count - a.count || (a.value < b.value ? -1 : a.value > b.value ? 1 : 0))
      .slice(0, size);
  }
  return facets;
}

import type { estypes } from '@elastic/elasticsearch';
import type { AuthorRef } from '../../domain/records.js';
import { subjectKey } from '../../domain/subjects.js';
import type { Elastic } from './client.js';
import { BOOK, FACET_SEPARATOR } from './booksIndex.js';
import { facetAggregations, readFacets, type FacetValue } from './facets.js';
import { sortOrder } from './search.js';

/**
 * A subject's works and what goes with them, in one search of the books index: its works ranked by
 * readers (one hit per work, as search's `sort=readers` orders them), how many works it has, its
 * most read authors and the subjects its books most often have besides it (the subject facet of
 * search). Aggregations over the index answer these for a subject of millions of editions in the
 * time a page of search takes; PostgreSQL would read every edition of the subject.
 */

export interface SubjectSearch {
  /** subjectKey() of the subject. */
  key: string;
  offset: number;
  limit: number;
  /** Authors and related subjects shown. */
  related: number;
}

export interface SubjectHits {
  /** Works with the subject (counted exactly up to 40,000, closely past it). */
  works: number;
  /** The subject's most common spelling, and those of the subjects found with it; null when no book has it. */
  name: string | null;
  /** Work ids of the page, most read first. */
  workIds: string[];
  /** The most read authors: id, name, and the readers of their books of the subject (in the unit of popularity). */
  authors: (AuthorRef & { readers: number })[];
  /** The subjects most often found with it: their spelling and how many of its works have them. */
  subjects: FacetValue[];
}

// The cardinality aggregation counts exactly up to this many (Elasticsearch's largest).
const EXACT_COUNT = 40_000;

export async function subjectWorks(elastic: Elastic, index: string, query: SubjectSearch): Promise<SubjectHits> {
  const response = await elastic.search({
    index,
    from: query.offset,
    size: query.limit,
    _source: false,
    track_total_hits: false,
    query: { bool: { filter: [{ term: { [BOOK.subject_keys.path]: query.key } }] } },
    // The order of search's sort=readers with one result per work.
    sort: sortOrder('readers', false),
    collapse: { field: BOOK.work_id.path },
    docvalue_fields: [BOOK.work_id.path],
    aggs: {
      works: { cardinality: { field: BOOK.work_id.path, precision_threshold: EXACT_COUNT } },
      authors: {
        terms: { field: BOOK.author_facet.path, size: query.related, order: { readers: 'desc' } },
        aggs: { readers: { sum: { field: BOOK.popularity.path } } },
      } satisfies estypes.AggregationsAggregationContainer,
      // One more: the subject itself is among them, and is left out.
      ...facetAggregations(['subject'], {}, query.related + 1, true),
    },
  });
  const aggregations = response.aggregations;
  const { works, authors } = (aggregations ?? {}) as {
    works?: { value: number };
    authors?: { buckets: { key: string; readers: { value: number } }[] };
  };
  const subjects = readFacets(aggregations, ['subject'], query.related + 1, true).subject ?? [];
  // A subject's value is its spelling, whose key is the subject's.
  const own = subjects.find((subject) => subjectKey(subject.value) === query.key);
  return {
    works: works?.value ?? 0,
    name: own?.value ?? null,
    workIds: response.hits.hits.map((hit) => String((hit.fields?.[BOOK.work_id.path] as unknown[] | undefined)?.[0])),
    authors: (authors?.buckets ?? []).map((bucket) => {
      const [id = bucket.key, name = ''] = bucket.key.split(FACET_SEPARATOR);
      return { id, name, readers: Math.round(bucket.readers.value) };
    }),
    subjects: subjects.filter((subject) => subject !== own).slice(0, query.related),
  };
}

import { CANDIDATE_POOL, candidateProbe } from '../../src/services/match.js';
import { authorSearch, bookSearch } from '../../src/services/search.js';
import { SUGGEST_DEFAULT_LIMIT, typedSuggestQuery } from '../../src/services/suggest.js';
import { AUTHOR } from '../../src/stores/elasticsearch/authorsIndex.js';
import { BOOK } from '../../src/stores/elasticsearch/booksIndex.js';
import type { Elastic } from '../../src/stores/elasticsearch/client.js';
import { FACET_FIELDS } from '../../src/stores/elasticsearch/facets.js';
import { matchCandidates } from '../../src/stores/elasticsearch/matchCandidates.js';
import { searchAuthors, searchBooks } from '../../src/stores/elasticsearch/search.js';
import { subjectWorks } from '../../src/stores/elasticsearch/subjects.js';
import { warmSuggestions, type SuggestQuery } from '../../src/stores/elasticsearch/suggestions.js';
import type { IndexKind } from '../../src/stores/elasticsearch/indices.js';
import { forceMerge } from '../stores/elasticsearch/indices.js';
import type { Logger } from '../../src/log.js';

/**
 * Readies a freshly built index before its alias moves to it, so that the first queries after the
 * swap neither wait on the store guard nor answer slowly: merged down to a few segments (a bulk
 * load leaves dozens, each searched on its own), then warmed by the kinds of queries the API sends
 * (search with every facet, match candidates, type-ahead, a subject's page; author search and
 * type-ahead), built by the same store functions, which load the postings, norms and doc values
 * they read and build the global ordinals of the facets and of the collapse field.
 *
 * Few segments rather than one: the index keeps taking sync's updates, and a segment past the
 * merge policy's maximum size would only be merged again once half of it were deleted documents.
 */
export const MERGED_SEGMENTS = 5;

// The most popular documents: what clients ask for most.
const WARMING_SAMPLES = 3;

/** Warm-up queries run, by the kind of request they stand for. */
export type WarmQueries = Partial<Record<'search' | 'match' | 'suggest' | 'subject', number>>;

export interface ReadyReport {
  /** Segments of the primaries after the merge. */
  segments: number;
  /** Queries run to warm the index, in all. */
  queries: number;
  kinds: WarmQueries;
}

export async function readyIndex(es: Elastic, log: Logger, kind: IndexKind, index: string): Promise<ReadyReport> {
  let started = performance.now();
  const segments = await forceMerge(es, index, MERGED_SEGMENTS);
  log.info({ index, segments, seconds: seconds(started) }, 'merged');
  started = performance.now();
  const kinds = kind === 'books' ? await warmBooks(es, index) : await warmAuthors(es, index);
  const queries = Object.values(kinds).reduce((sum, n) => sum + n, 0);
  log.info({ index, queries, kinds, seconds: seconds(started) }, 'warmed');
  return { segments, queries, kinds };
}

// What a reader has typed of a text when the box asks: its first 60 % (the type-ahead benchmark's choice).
const typedPart = (text: string): string => text.slice(0, Math.max(1, Math.ceil(text.length * 0.6)));

const typedQuery = (text: string): SuggestQuery => typedSuggestQuery(typedPart(text), SUGGEST_DEFAULT_LIMIT);

const seconds = (since: number): number => Math.round(performance.now() - since) / 1000;

/** The most popular documents (by the field `popularity`), with the fields asked. */
async function samples<Source>(es: Elastic, index: string, fields: string[], popularity: string): Promise<Source[]> {
  const response = await es.search<Source>({
    index,
    size: WARMING_SAMPLES,
    _source: fields,
    sort: [{ [popularity]: 'desc' }],
    query: { match_all: {} },
  });
  return response.hits.hits.flatMap((hit) => (hit._source ? [hit._source] : []));
}

/**
 * Per sample book: a search with every facet of its title's words (alone, so that no mark in it
 * reads as query syntax), the match candidate queries in both spellings and the type-ahead of the
 * start of its title; then the pages of the most common subjects.
 */
async function warmBooks(es: Elastic, index: string): Promise<WarmQueries> {
  const books = await samples<{ title?: string; author_names?: string[] }>(
    es,
    index,
    [BOOK.title.path, BOOK.author_names.path],
    BOOK.popularity.path,
  );
  const kinds = { search: 0, match: 0, suggest: 0, subject: 0 };
  for (const book of books) {
    const words = (book.title ?? '').replace(/[^\p{L}\p{N}]+/gu, ' ').trim();
    if (words === '') continue;
    await searchBooks(es, index, bookSearch({ q: words, facets: FACET_FIELDS.join(',') }));
    kinds.search += 1;
    const probe = candidateProbe(book.title!, book.author_names?.[0] ?? null);
    await matchCandidates(es, index, [probe], 'exact', CANDIDATE_POOL);
    await matchCandidates(es, index, [probe], 'typos', CANDIDATE_POOL);
    kinds.match += 2;
    await warmSuggestions(es, 'books', index, typedQuery(words));
    kinds.suggest += 1;
  }
  for (const key of await commonSubjects(es, index)) {
    await subjectWorks(es, index, { key, offset: 0, limit: 20, related: 10 });
    kinds.subject += 1;
  }
  return kinds;
}

/** The subjects most books have (their folded keys): the pages readers open most. */
async function commonSubjects(es: Elastic, index: string): Promise<string[]> {
  const response = await es.search({
    index,
    size: 0,
    aggs: { subjects: { terms: { field: BOOK.subject_keys.path, size: WARMING_SAMPLES } } },
  });
  const buckets = (response.aggregations?.subjects as { buckets: { key: string }[] } | undefined)?.buckets ?? [];
  return buckets.map((bucket) => bucket.key);
}

async function warmAuthors(es: Elastic, index: string): Promise<WarmQueries> {
  const authors = await samples<{ name?: string }>(es, index, [AUTHOR.name.path], AUTHOR.popularity.path);
  const kinds = { search: 0, suggest: 0 };
  for (const { name } of authors) {
    if (!name) continue;
    await searchAuthors(es, index, authorSearch({ q: name }));
    kinds.search += 1;
    await warmSuggestions(es, 'authors', index, typedQuery(name));
    kinds.suggest += 1;
  }
  return kinds;
}

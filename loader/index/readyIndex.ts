import { CANDIDATE_POOL, candidateProbe } from '../../src/services/match.js';
import { authorSearch, bookSearch } from '../../src/services/search.js';
import { AUTHOR } from '../../src/stores/elasticsearch/authorsIndex.js';
import { BOOK } from '../../src/stores/elasticsearch/booksIndex.js';
import type { Elastic } from '../../src/stores/elasticsearch/client.js';
import { FACET_FIELDS } from '../../src/stores/elasticsearch/facets.js';
import { matchCandidates } from '../../src/stores/elasticsearch/matchCandidates.js';
import { searchAuthors, searchBooks } from '../../src/stores/elasticsearch/search.js';
import type { IndexKind } from '../../src/stores/elasticsearch/indices.js';
import { forceMerge } from '../stores/elasticsearch/indices.js';
import type { Logger } from '../../src/log.js';

/**
 * Readies a freshly built index before its alias moves to it, so that the first queries after the
 * swap neither wait on the store guard nor answer slowly: merged down to a few segments (a bulk
 * load leaves dozens, each searched on its own), then warmed by the kinds of queries the API sends,
 * built by the same store functions, which load the postings, norms and doc values they read and
 * build the global ordinals of the facets.
 *
 * Few segments rather than one: the index keeps taking sync's updates, and a segment past the
 * merge policy's maximum size would only be merged again once half of it were deleted documents.
 */
export const MERGED_SEGMENTS = 5;

// The most popular documents: what clients ask for most.
const WARMING_SAMPLES = 3;

export interface ReadyReport {
  /** Segments of the primaries after the merge. */
  segments: number;
  /** Queries run to warm the index. */
  queries: number;
}

export async function readyIndex(es: Elastic, log: Logger, kind: IndexKind, index: string): Promise<ReadyReport> {
  let started = performance.now();
  const segments = await forceMerge(es, index, MERGED_SEGMENTS);
  log.info({ index, segments, seconds: seconds(started) }, 'merged');
  started = performance.now();
  const queries = kind === 'books' ? await warmBooks(es, index) : await warmAuthors(es, index);
  log.info({ index, queries, seconds: seconds(started) }, 'warmed');
  return { segments, queries };
}

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
 * A book search with every facet, and the match candidate queries in both spellings, per sample
 * book: the title's words alone, so that no mark in it reads as query syntax.
 */
async function warmBooks(es: Elastic, index: string): Promise<number> {
  const books = await samples<{ title?: string; author_names?: string[] }>(
    es,
    index,
    [BOOK.title.path, BOOK.author_names.path],
    BOOK.popularity.path,
  );
  let queries = 0;
  for (const book of books) {
    const words = (book.title ?? '').replace(/[^\p{L}\p{N}]+/gu, ' ').trim();
    if (words === '') continue;
    await searchBooks(es, index, bookSearch({ q: words, facets: FACET_FIELDS.join(',') }));
    const probe = candidateProbe(book.title!, book.author_names?.[0] ?? null);
    await matchCandidates(es, index, [probe], 'exact', CANDIDATE_POOL);
    await matchCandidates(es, index, [probe], 'typos', CANDIDATE_POOL);
    queries += 3;
  }
  return queries;
}

async function warmAuthors(es: Elastic, index: string): Promise<number> {
  const authors = await samples<{ name?: string }>(es, index, [AUTHOR.name.path], AUTHOR.popularity.path);
  let queries = 0;
  for (const { name } of authors) {
    if (!name) continue;
    await searchAuthors(es, index, authorSearch({ q: name }));
    queries += 1;
  }
  return queries;
}

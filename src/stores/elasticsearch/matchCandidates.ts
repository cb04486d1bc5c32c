import type { estypes } from '@elastic/elasticsearch';
import { BOOK } from './booksIndex.js';
import { missingIndex, type Elastic } from './client.js';
import { contentWords, MATCH_FUZZY, type Spelling } from './search.js';

/**
 * Candidate books for /v1/match: the editions whose title is close to the given one (stemming, a
 * dropped article, a last word cut short and, when tolerated, typos, then also the author's books
 * that share one title word), the author's books first.
 * Deciding among them is domain/matching.ts's job; this only has to put the right book among the
 * first few. Stop words are left out of what must match ("The Kingdom of the North" needs
 * "kingdom" and "north", see contentWords), so that a title does not make half a large catalogue a
 * candidate; the phrase, stop words included, then reorders the best few hundred.
 */
export interface CandidateProbe {
  /** The title without a series or anything else in trailing parentheses. */
  title: string;
  /** The title as given, subtitle and series included. */
  fullTitle: string;
  author: string | null;
}

const MOST = '2<66%'; // up to two words: all of them; more: two in three
// How many of the best matches the title phrase reorders before the candidates are taken.
const RESCORED = 300;

/** A candidate edition and the title its work is known by (another edition's or the original one). */
export interface Candidate {
  id: string;
  workTitle: string | null;
}

/**
 * The candidates of several probes, in their order: one request (_msearch) for all of them, so
 * a batch of records costs the index one round trip, not one per record.
 */
export async function matchCandidates(
  elastic: Elastic,
  index: string,
  probes: readonly CandidateProbe[],
  mode: Spelling,
  size: number,
): Promise<Candidate[][]> {
  if (probes.length === 0) return [];
  const response = await elastic.msearch<{ work_title?: string }>({
    index,
    searches: probes.flatMap((probe) => [{}, candidateSearch(probe, mode, size)]),
  });
  return response.responses.map((answer) => {
    if ('error' in answer)
      throw missingIndex(answer) ?? new Error(`match candidate search failed: ${answer.error.type}: ${answer.error.reason ?? ''}`);
    return answer.hits.hits.flatMap((hit) => (hit._id ? [{ id: hit._id, workTitle: hit._source?.work_title ?? null }] : []));
  });
}

function candidateSearch(probe: CandidateProbe, mode: Spelling, size: number): estypes.MsearchMultisearchBody {
  const typos = mode === 'typos' ? MATCH_FUZZY : {};
  const title = contentWords(probe.title);
  return {
    size,
    _source: [BOOK.work_title.path],
    query: {
      bool: {
        must: [
          {
            dis_max: {
              queries: [
                { match: { [BOOK.title.path]: { query: title, ...typos, minimum_should_match: MOST } } },
                // Stemmed: "Feathers" finds "Feather".
                { match: { [BOOK.title.english]: { query: probe.title, minimum_should_match: MOST } } },
                // A last word cut short: "Old Scho".
                { match_bool_prefix: { [BOOK.title.path]: { query: title, minimum_should_match: MOST } } },
                // Subtitle or series words given as part of the title.
                { match: { [BOOK.all_text.path]: { query: contentWords(probe.fullTitle), ...typos, minimum_should_match: MOST } } },
                // The title the work is known by: the original one, or another edition's.
                { match: { [BOOK.work_title.path]: { query: title, ...typos, minimum_should_match: MOST } } },
                // The author's books that share a word of the title: another word may have more typos than a fuzzy match allows ("Metro Gibs").
                ...(mode === 'typos' && probe.author !== null
                  ? [
                      {
                        bool: {
                          filter: [{ match: { [BOOK.author_names.path]: { query: probe.author, ...typos } } }],
                          must: [{ match: { [BOOK.title.path]: { query: title, ...typos } } }],
                        },
                      },
                    ]
                  : []),
              ],
            },
          },
        ],
        // A flat bonus: how many names a book credits must not decide which titles get a place.
        should:
          probe.author === null
            ? []
            : [{ constant_score: { filter: { match: { [BOOK.author_names.path]: { query: probe.author, ...typos } } }, boost: 3 } }],
      },
    },
    rescore: {
      window_size: RESCORED,
      query: { rescore_query: { match_phrase: { [BOOK.title.path]: { query: probe.title, slop: 2, boost: 2 } } } },
    },
  };
}

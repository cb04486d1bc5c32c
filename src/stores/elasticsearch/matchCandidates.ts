import type { Elastic } from './client.js';
import { MATCH_FUZZY, type Spelling } from './search.js';

/**
 * Candidate books for /v1/match: the editions whose title is close to the given one (typos,
 * stemming, a dropped article and a last word cut short tolerated), ranked up by the author. Deciding among them is
 * domain/matching.ts's job; this only has to put the right book among the first few.
 */
export interface CandidateProbe {
  /** The title without a series or anything else in trailing parentheses. */
  title: string;
  /** The title as given, subtitle and series included. */
  fullTitle: string;
  author: string | null;
}

const MOST = '2<66%'; // up to two words: all of them; more: two in three

export async function matchCandidateIds(elastic: Elastic, index: string, probe: CandidateProbe, mode: Spelling, size: number): Promise<string[]> {
  const typos = mode === 'typos' ? MATCH_FUZZY : {};
  const response = await elastic.search({
    index,
    size,
    _source: false,
    query: {
      bool: {
        must: [
          {
            dis_max: {
              queries: [
                { match: { title: { query: probe.title, ...typos, minimum_should_match: MOST } } },
                { match: { 'title.english': { query: probe.title, minimum_should_match: MOST } } },
                // A last word cut short: "Old Scho".
                { match_bool_prefix: { title: { query: probe.title, minimum_should_match: MOST } } },
                { match: { all_text: { query: probe.fullTitle, ...typos, minimum_should_match: MOST } } },
              ],
            },
          },
        ],
        should: [
          { match_phrase: { title: { query: probe.title, slop: 2, boost: 2 } } },
          // A flat bonus: how many names a book credits must not decide which titles get a place.
          ...(probe.author === null ? [] : [{ constant_score: { filter: { match: { author_names: { query: probe.author, ...typos } } }, boost: 3 } }]),
        ],
      },
    },
  });
  return response.hits.hits.flatMap((hit) => (hit._id ? [hit._id] : []));
}

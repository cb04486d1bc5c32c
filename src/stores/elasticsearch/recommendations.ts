import type { estypes } from '@elastic/elasticsearch';
import type { BookRecord } from '../../domain/records.js';
import { BOOK } from './booksIndex.js';
import type { Elastic } from './client.js';
import { GATHERING_KINDS, scoredIds, withPopularity, type ScoredId } from './search.js';

/**
 * Books to read after a given one, one per work, never its own work, never a boxset or omnibus of
 * its series or author (which would hand the reader the book again). The next volume of its series
 * comes first; then four signals add up:
 *  - co-reading: the books its readers also liked (best first, from the ratings), the strongest;
 *    then what readers of its author's other works also liked, which a book few readers rated still has;
 *  - the same series (the next volume is the likeliest next read);
 *  - the same author;
 *  - content: more_like_this over title, subtitle, series and author names.
 * Popularity adds a little, as in search, and orders the popular books that fill up a short list.
 */

// Above every other signal together: a reader mid-series wants the next volume.
const NEXT_IN_SERIES = 100;
// Score of the first co-read book; the last of the list still gets half of it.
const CO_READING = 30;
const AUTHOR_CO_READING = 15;
const SAME_SERIES = 20;
const SAME_AUTHOR = 10;
// Every book matches a little, so popular books fill the list when few are related.
const ANY_BOOK = 0.1;

export interface RecommendationSeed {
  book: BookRecord;
  /** Ids of the books its readers also liked, best first. */
  alsoLiked: readonly string[];
  /** Ids of the books readers of its author's other works also liked, best first. */
  authorAlsoLiked: readonly string[];
}

/** A list of co-read books, best first: the first scores `weight`, the last about half of it. */
function coReading(ids: readonly string[], weight: number): estypes.QueryDslQueryContainer[] {
  return ids.map((id, rank) => ({
    constant_score: { filter: { term: { [BOOK.id.path]: id } }, boost: weight * (1 - rank / (2 * ids.length)) },
  }));
}

export async function recommendationHits(
  elastic: Elastic,
  index: string,
  { book, alsoLiked, authorAlsoLiked }: RecommendationSeed,
  size: number,
): Promise<ScoredId[]> {
  const authorIds = book.authors.map((author) => author.id);
  const should: estypes.QueryDslQueryContainer[] = [
    ...coReading(alsoLiked, CO_READING),
    ...coReading(authorAlsoLiked, AUTHOR_CO_READING),
    {
      more_like_this: {
        fields: [BOOK.title.path, BOOK.subtitle.path, BOOK.series.path, BOOK.author_names.path],
        like: [
          {
            _index: index,
            doc: {
              [BOOK.title.path]: book.title,
              [BOOK.subtitle.path]: book.subtitle,
              [BOOK.series.path]: book.series,
              [BOOK.author_names.path]: book.authors.map((author) => author.name),
            },
          },
        ],
        min_term_freq: 1,
        min_doc_freq: 2,
        max_query_terms: 25,
        minimum_should_match: '30%',
      },
    },
  ];
  if (authorIds.length > 0)
    should.push({ constant_score: { filter: { terms: { [BOOK.author_ids.path]: authorIds } }, boost: SAME_AUTHOR } });
  if (book.series !== null)
    should.push({ constant_score: { filter: { term: { [BOOK.series.keyword]: book.series } }, boost: SAME_SERIES } });
  const next = nextVolume(book);
  if (next !== null)
    should.push({
      constant_score: {
        filter: { bool: { filter: [{ term: { [BOOK.series.keyword]: book.series } }, { term: { [BOOK.series_number.path]: next } }] } },
        boost: NEXT_IN_SERIES,
      },
    });
  should.push({ constant_score: { filter: { match_all: {} }, boost: ANY_BOOK } });
  // A set or an omnibus of the same series or author holds this book, or may.
  const related: estypes.QueryDslQueryContainer[] = [
    ...(book.series !== null ? [{ term: { [BOOK.series.keyword]: book.series } }] : []),
    ...(authorIds.length > 0 ? [{ terms: { [BOOK.author_ids.path]: authorIds } }] : []),
  ];
  const gathering = {
    bool: {
      filter: [
        { terms: { [BOOK.kind.path]: GATHERING_KINDS.filter((kind) => kind !== 'companion') } },
        { bool: { should: related, minimum_should_match: 1 } },
      ],
    },
  };
  const response = await elastic.search({
    index,
    size,
    _source: false,
    query: withPopularity(
      { bool: { should, must_not: [{ term: { [BOOK.work_id.path]: book.work_id } }, ...(related.length > 0 ? [gathering] : [])] } },
      BOOK.popularity.path,
      0.05,
    ),
    collapse: { field: BOOK.work_id.path },
  });
  return scoredIds(response.hits.hits);
}

/** The series number of the volume after this one ("2" after "1"), or null when the book is not a whole-numbered volume. */
function nextVolume(book: BookRecord): string | null {
  if (book.series === null || book.series_number === null || !/^\d+$/u.test(book.series_number)) return null;
  return String(Number(book.series_number) + 1);
}

import type { estypes } from '@elastic/elasticsearch';
import { authorKey } from '../../domain/names.js';
import type { FieldTerm, TextField } from '../../domain/querySyntax.js';
import { rejoinedApostrophes } from '../../domain/text.js';
import { AUTHOR } from './authorsIndex.js';
import { BOOK } from './booksIndex.js';
import type { Elastic } from './client.js';
import { facetAggregations, readFacets, type FacetField, type FacetFilters, type Facets } from './facets.js';

/** Book and author search in Elasticsearch: the queries and their execution. Records come from PostgreSQL. */

/** One hit: the id of the document and its relevance score. */
export interface ScoredId {
  id: string;
  score: number;
}

/** An author found, with the count of their works the index holds. */
export interface AuthorHit extends ScoredId {
  workCount: number;
}

export interface HitPage<Hit extends ScoredId = ScoredId> {
  /** Books (editions) or authors that match, not only those on the page; books are counted up to TOTAL_COUNTED. */
  total: number;
  hits: Hit[];
  /** The facets asked for, over every matching book. */
  facets?: Facets;
}

/** How book search orders its results: by fit (`relevance`), or by a field of the book or work. */
export const BOOK_SORTS = ['relevance', 'newest', 'oldest', 'rating', 'readers', 'title'] as const;
export type BookSort = (typeof BOOK_SORTS)[number];

export interface BookSearch {
  /** Free text, ISBNs taken out; may be empty when the query was only ISBNs. */
  text: string;
  /** ISBN-13s found in the query: their editions rank first. */
  isbn13s: string[];
  /** Phrases of the free text (also in `text`), each required as written. */
  phrases: string[];
  /** Field operators of the query (title:, author:...): each required. */
  fields: FieldTerm[];
  /** ISBN-13s of isbn: operators: the book must have each. */
  requiredIsbn13s: string[];
  /** Words and phrases no result may have. */
  excluded: string[];
  authorId: string | null;
  language: string | null;
  yearFrom: number | null;
  yearTo: number | null;
  /** subjectKey() of the subject asked for. */
  subjectKey: string | null;
  publisher: string | null;
  facets: readonly FacetField[];
  /** Values per facet. */
  facetLimit: number;
  /** False: one hit per work (its best-scoring edition). */
  everyEdition: boolean;
  sort: BookSort;
  offset: number;
  limit: number;
}

export interface AuthorSearch {
  text: string;
  offset: number;
  limit: number;
}

// An ISBN hit outranks any text score.
const ISBN_BOOST = 1_000;
/** Matching books are counted exactly up to this many; past it counting stops, which lets the index skip hopeless documents. */
export const TOTAL_COUNTED = 10_000;
// Editions read per work shown when one edition per work is asked for: room for a few editions of each.
const EDITIONS_PER_WORK = 3;
// The fit, popularity and kind rescore at least this many of the best matches: enough to hold the
// books of a prolific author or a long series, which a name alone matches alike.
const MIN_RESCORED = 400;
// How far popularity lifts a book over one nobody rated (see withPopularity).
const POPULARITY_WEIGHT = 0.1;

// Typos: one edit in words of 3 to 5 letters, two from 6; the first letter must be right (it keeps the query fast).
// Search reads at most 20 spellings of a word; match reads 50, as it must not miss the one right title.
const SEARCH_FUZZY = { fuzziness: 'AUTO', prefix_length: 1, max_expansions: 20 } as const;
export const MATCH_FUZZY = { ...SEARCH_FUZZY, max_expansions: 50 } as const;

// A query nothing matched, spelt right or up to typos, is tried once more with the first letter free too
// ("the hunger xames"): it costs a scan of the index's words, which only such a miss pays.
const LOOSE_FUZZY = { ...SEARCH_FUZZY, prefix_length: 0 } as const;

/** The words as typed, or also their spellings up to typos. */
export type Spelling = 'exact' | 'typos';
/** Search's own spellings: also up to typos in any letter, for a query that found nothing otherwise. */
type SearchSpelling = Spelling | 'loose';
const spelling = (mode: SearchSpelling) => (mode === 'typos' ? SEARCH_FUZZY : mode === 'loose' ? LOOSE_FUZZY : {});

/**
 * Typo tolerance costs most of a query's time, and a query spelt right needs none: the words as
 * typed are tried first, and only when they do not fill the page asked for is the query run again
 * with typos tolerated (which finds everything the first run found, and more).
 */
async function exactThenTypos<Hit extends ScoredId>(run: (mode: Spelling) => Promise<HitPage<Hit>>, wanted: number): Promise<HitPage<Hit>> {
  const exact = await run('exact');
  return exact.total >= wanted ? exact : run('typos');
}

/** One run of a book query: how its words are spelt, and how many of them a book must match. */
interface Run {
  mode: SearchSpelling;
  enough: Enough;
}

/**
 * A book query runs as exactThenTypos does; and when it matches nothing even with typos, once more
 * relaxed before answering an empty page: half its words required, typos in any letter ("dune
 * paperback", "the hunger xames"). Only a miss pays for the third run, and having found no full
 * match, its partial ones rank among themselves (see bookFit).
 */
async function strictThenRelaxed(run: (how: Run) => Promise<HitPage>, wanted: number): Promise<HitPage> {
  const strict = await exactThenTypos((mode) => run({ mode, enough: MOST_WORDS }), wanted);
  return strict.total > 0 ? strict : run({ mode: 'loose', enough: HALF_THE_WORDS });
}

// Lucene's English stop words (the `_english_` list of the mappings).
const STOP_WORDS = new Set(
  'a an and are as at be but by for if in into is it no not of on or such that the their then there these they this to was will with'.split(
    ' ',
  ),
);

const isStopWord = (word: string): boolean => STOP_WORDS.has(word.toLowerCase().replace(/[^\p{L}\p{N}]/gu, ''));

/**
 * The words of a query that are not stop words, or all of them when that is all there is: "the"
 * and "of" would make half a large catalogue match, and the index has no field that drops stop
 * words without also stemming (which a typo defeats: "cuttinv" is not one edit from "cut").
 */
export function contentWords(text: string): string {
  const kept = text.split(/\s+/u).filter((word) => !isStopWord(word));
  return kept.length > 0 ? kept.join(' ') : text;
}

/**
 * The text, and when it has words split at an apostrophe ("flannery o connor") also the text with
 * them joined: each is matched and fitted, and a book fits as well as its better reading.
 */
const readings = (text: string): string[] => {
  const joined = rejoinedApostrophes(text);
  return joined === null ? [text] : [text, joined];
};

/** How many words of a query a book must match. */
type Enough = typeof MOST_WORDS | typeof ALL_WORDS | typeof HALF_THE_WORDS;
/** Up to two words: all of them; more: three in four. */
const MOST_WORDS = '2<75%';
/** A full match, which always ranks above a partial one. */
const ALL_WORDS = '100%';
/** Fewer words, for a query that found nothing otherwise. */
const HALF_THE_WORDS = '50%';

/**
 * Which books match free text: its content words in all_text (title, subtitle, series and author
 * names together), up to typos when tolerated; or stemmed ("feathers" finds "feather"); or with
 * the last word as a prefix (search as you type); or every word as typed, for initials ("JK
 * Rowling"), which only the person-name analysis of all_text joins; or all of them in its subjects.
 */
function bookTextMatch(text: string, mode: SearchSpelling, enough: Enough): estypes.QueryDslQueryContainer {
  return {
    dis_max: {
      queries: readings(text).flatMap((text) => {
        const content = contentWords(text);
        return [
          { match: { [BOOK.all_text.path]: { query: content, ...spelling(mode), minimum_should_match: enough } } },
          { match: { [BOOK.all_text.english]: { query: text, minimum_should_match: enough } } },
          { match_bool_prefix: { [BOOK.all_text.path]: { query: content, minimum_should_match: enough } } },
          { match: { [BOOK.all_text.path]: { query: text, operator: 'and' } } },
          // A subject says what a book is about ("dystopias"); only whole matches count, and rank below titles.
          { match: { [BOOK.subjects.english]: { query: text, operator: 'and', boost: 0.5 } } },
        ];
      }),
    },
  };
}

/**
 * How well a matching book fits a query, as a reader would judge it: the best of these tiers.
 * A first author's name that is the query itself comes first (a name means that author's own books,
 * before a biography titled with it: "Alexander Hamilton" brings The Federalist Papers before Ron
 * Chernow's Alexander Hamilton; `title:` asks for the title), then a title or series that is the
 * query, then the name of a co-author or contributor (an author's name means their own books before
 * those they helped with); then the query as a phrase of the
 * title or of an author's name (a surname alone); then every word in the title, then every word
 * anywhere (title words with the surname); then every word in the series. The text's own relevance
 * (term frequencies, field lengths) plays no part: among books that fit alike, popularity decides.
 * A volume of a series the query names gains `seriesVolume` on top: a reader typing a series' name
 * means its best-known volume, and within the series the volume titled like it has no lead ("The
 * Dark Tower" brings The Gunslinger before the seventh volume, The Dark Tower). The gain is worth
 * about a fivefold popularity: a book titled like the query and read ten times more still comes
 * first ("Scarlet": Marissa Meyer's before A.C. Gaughen's Scarlet, #1 of Scarlet).
 * A whole titled as the query, several volumes in one book ("The Lord of the Rings", #1-3, beside The
 * Fellowship of the Ring, whose series the query names), is the book the query names: it gains
 * `namedWhole` instead of `seriesVolume`, about a sevenfold popularity more, and does not rank as a
 * gathering (see kindFactor). So it comes first when readers read it as a book of its own, and a series'
 * most-read volume when that is read far more than an omnibus of it (A Song of Ice and Fire's, by one
 * in fifty of A Game of Thrones' readers).
 */
export const FIT = {
  name: 11,
  title: 10,
  coAuthorName: 8.5,
  titlePhrase: 7,
  namePhrase: 6,
  titleWords: 5,
  allWords: 4,
  seriesWords: 3,
  seriesVolume: 0.5,
  namedWhole: 1.1,
  matched: 1,
  partial: 0.01,
} as const;

const tier = (boost: number, filter: estypes.QueryDslQueryContainer): estypes.QueryDslQueryContainer => ({
  constant_score: { filter, boost },
});

/** The tiers of FIT one reading of the query reaches, each worth its tier times `weight`. */
const fitTiers = (text: string, mode: SearchSpelling, weight: number): estypes.QueryDslQueryContainer[] => [
  tier(weight * FIT.title, { term: { [BOOK.title.key]: text } }),
  tier(weight * FIT.title, { term: { [BOOK.series.key]: text } }),
  tier(weight * FIT.name, { term: { [BOOK.first_author.path]: text } }),
  tier(weight * FIT.coAuthorName, { term: { [BOOK.author_names.keyword]: text } }),
  tier(weight * FIT.titlePhrase, { match_phrase: { [BOOK.title.path]: { query: text, slop: 1 } } }),
  tier(weight * FIT.namePhrase, { match_phrase: { [BOOK.author_names.path]: { query: text } } }),
  tier(weight * FIT.titleWords, { match: { [BOOK.title.path]: { query: text, ...spelling(mode), operator: 'and' } } }),
  tier(weight * FIT.allWords, { match: { [BOOK.all_text.path]: { query: contentWords(text), ...spelling(mode), operator: 'and' } } }),
  tier(weight * FIT.seriesWords, { match: { [BOOK.series.path]: { query: text, operator: 'and' } } }),
];

// Readings with one word left out are fitted for queries of up to this many words (each costs nine clauses).
const MAX_WORDS_LEFT_OUT = 8;

/** Each reading of the text with one of its content words left out ("the hunger games paperback" → "the hunger games"). */
function withWordLeftOut(text: string): string[] {
  const left = new Set<string>();
  for (const reading of readings(text)) {
    const words = reading.split(' ');
    if (words.length < 2 || words.length > MAX_WORDS_LEFT_OUT) continue;
    words.forEach((word, at) => {
      if (!isStopWord(word)) left.add(words.filter((_, other) => other !== at).join(' '));
    });
  }
  return [...left];
}

/** Whether some book may match only some words of the text: a query of more than two words, or one with fewer required. */
const mayMatchPartially = (text: string, enough: Enough): boolean =>
  enough === HALF_THE_WORDS || readings(text).some((reading) => contentWords(reading).split(' ').length > 2);

/**
 * The tiers a strict run's readings with one word left out reach: only the title, series or name
 * it is exactly, and those of the title alone (the reading as a phrase of it, every word in it). The other tiers, for each of
 * up to eight readings, made a query of three or more words about twice as slow as without the partial
 * fit; a strict run's partial matches are mostly a title with a word added ("the hunger games
 * paperback"), which these tiers fit.
 */
const cheapPartialTiers = (left: string[], mode: SearchSpelling): estypes.QueryDslQueryContainer[] => [
  tier(FIT.partial * FIT.title, { terms: { [BOOK.title.key]: left } }),
  tier(FIT.partial * FIT.title, { terms: { [BOOK.series.key]: left } }),
  tier(FIT.partial * FIT.name, { terms: { [BOOK.first_author.path]: left } }),
  tier(FIT.partial * FIT.coAuthorName, { terms: { [BOOK.author_names.keyword]: left } }),
  ...left.flatMap((text) => [
    // Ranks the title a mistyped word was left out of ("the first gour years") above others with its words.
    tier(FIT.partial * FIT.titlePhrase, { match_phrase: { [BOOK.title.path]: { query: text, slop: 1 } } }),
    tier(FIT.partial * FIT.titleWords, { match: { [BOOK.title.path]: { query: text, ...spelling(mode), operator: 'and' } } }),
  ]),
];

/**
 * How well a matching book fits the text: the best tier of FIT any reading of it reaches. A query
 * whose words may not all match (more than two content words, or a run with fewer words required)
 * can match a book partially, and a partial match never ranks above a full one: every full match
 * is worth at least FIT.matched, and a partial one is fitted by the query with the word it lacks left
 * out, at FIT.partial of the tier ("the hunger games paperback" fits The Hunger Games by its title),
 * which even the most popular book's lead cannot bring up to a full match's. Only the relaxed run,
 * which only a miss pays for, fits those readings by every tier ("the hunger xames" by its title words).
 */
function bookFit(text: string, mode: SearchSpelling, enough: Enough): estypes.QueryDslQueryContainer {
  const full = readings(text).flatMap((text) => fitTiers(text, mode, 1));
  if (!mayMatchPartially(text, enough)) return { dis_max: { queries: full } };
  const fullMatch = bookTextMatch(text, mode, ALL_WORDS);
  const left = withWordLeftOut(text);
  const partial = enough === HALF_THE_WORDS ? left.flatMap((text) => fitTiers(text, mode, FIT.partial)) : cheapPartialTiers(left, mode);
  return {
    dis_max: {
      queries: [
        ...full,
        tier(FIT.matched, fullMatch),
        ...(left.length > 0 ? [{ bool: { must: { dis_max: { queries: partial } }, must_not: fullMatch } }] : []),
      ],
    },
  };
}

/**
 * An omnibus whose whole title is the text, without a subtitle: the whole the text names. A subtitle
 * says which gathering it is ("The Hitchhiker's Guide to the Galaxy: A Trilogy in Four Parts", "Bone:
 * The Complete Edition"), and the text then names the volume titled so, or the series.
 */
const namedWhole = (text: string): estypes.QueryDslQueryContainer => ({
  bool: {
    filter: [{ term: { [BOOK.kind.path]: 'omnibus' } }, { terms: { [BOOK.title.key]: readings(text) } }],
    must_not: { exists: { field: BOOK.subtitle.path } },
  },
});

/** A volume of the series the text names gains FIT.seriesVolume; the whole it names, FIT.namedWhole. */
const seriesVolume = (text: string): estypes.QueryDslQueryContainer => ({
  dis_max: {
    queries: [tier(FIT.seriesVolume, { terms: { [BOOK.series.key]: readings(text) } }), tier(FIT.namedWhole, namedWhole(text))],
  },
});

const isbnClause = (isbn13s: string[]): estypes.QueryDslQueryContainer => ({
  constant_score: { filter: { terms: { [BOOK.isbn_13.path]: isbn13s } }, boost: ISBN_BOOST },
});

/** The popularity factor: 1 + weight * log10(1 + popularity). */
const popularityFactor = (field: string, weight: number): estypes.QueryDslFunctionScoreContainer[] => [
  { weight: 1 },
  { field_value_factor: { field, modifier: 'log1p', missing: 0 }, weight },
];

/** Works that gather or accompany books (see domain/titles.ts workKind): they rank below the books themselves. */
export const GATHERING_KINDS = ['boxset', 'omnibus', 'companion'];
const KIND_FACTOR = 0.5;
/** Gatherings lose KIND_FACTOR, but for the whole the text names (see namedWhole). */
const kindFactor = (text: string): estypes.QueryDslFunctionScoreContainer[] => [
  { weight: 1 },
  {
    filter: {
      bool: { filter: { terms: { [BOOK.kind.path]: GATHERING_KINDS } }, ...(text !== '' && { must_not: namedWhole(text) }) },
    },
    weight: KIND_FACTOR,
  },
];

/**
 * Popular entries rank a little higher: the text score times 1 + weight * log10(1 + popularity), read from
 * the index's `popularity` field,
 * so with weight 0.1 a book with 5 million ratings gains 67% over one nobody rated, 1,000 ratings 30%.
 */
export const withPopularity = (
  query: estypes.QueryDslQueryContainer,
  popularity: string,
  weight: number,
): estypes.QueryDslQueryContainer => ({
  function_score: { query, functions: popularityFactor(popularity, weight), score_mode: 'sum', boost_mode: 'multiply' },
});

// The field each operator of the query syntax reads.
const OPERATOR_FIELDS: Record<TextField, string> = {
  title: BOOK.title.path,
  author: BOOK.author_names.path,
  series: BOOK.series.path,
  subject: BOOK.subjects.path,
  publisher: BOOK.publisher.path,
};

/**
 * Which books match: the free text (or an ISBN in it) when there is any, every field operator and
 * quoted phrase, and none of the words left out. Each operator counts 1 to the match score, so a
 * query of operators alone still ranks by popularity.
 */
function bookMatch(
  search: BookSearch,
  { mode, enough }: Run,
  isbnBoost: boolean,
  filter: estypes.QueryDslQueryContainer[],
): estypes.QueryDslQueryContainer {
  const should: estypes.QueryDslQueryContainer[] = [];
  if (search.text !== '') should.push(bookTextMatch(search.text, mode, enough));
  if (search.isbn13s.length > 0) should.push(isbnBoost ? isbnClause(search.isbn13s) : { terms: { [BOOK.isbn_13.path]: search.isbn13s } });
  const required = (query: estypes.QueryDslQueryContainer): estypes.QueryDslQueryContainer => ({
    constant_score: { filter: query, boost: 1 },
  });
  const must = [
    ...search.fields.map(({ field, text, phrase }) =>
      required(
        phrase
          ? { match_phrase: { [OPERATOR_FIELDS[field]]: text } }
          : { match: { [OPERATOR_FIELDS[field]]: { query: text, operator: 'and' } } },
      ),
    ),
    ...search.phrases.map((phrase) => required({ match_phrase: { [BOOK.all_text.path]: phrase } })),
    ...search.requiredIsbn13s.map((isbn) => required({ term: { [BOOK.isbn_13.path]: isbn } })),
  ];
  return {
    bool: {
      ...(should.length > 0 && { should, minimum_should_match: 1 }),
      must: should.length + must.length > 0 ? must : [{ match_all: {} }],
      must_not: search.excluded.map((word) => ({ match_phrase: { [BOOK.all_text.path]: word } })),
      filter,
    },
  };
}

/** The filters of a search, each under the facet it narrows. */
function bookFilters(search: BookSearch): FacetFilters {
  const filters: FacetFilters = {};
  if (search.authorId !== null) filters.author = { term: { [BOOK.author_ids.path]: search.authorId } };
  if (search.language !== null) filters.language = { term: { [BOOK.language.path]: search.language } };
  if (search.subjectKey !== null) filters.subject = { term: { [BOOK.subject_keys.path]: search.subjectKey } };
  if (search.publisher !== null) filters.publisher = { term: { [BOOK.publisher.keyword]: search.publisher } };
  if (search.yearFrom !== null || search.yearTo !== null) {
    filters.decade = {
      range: {
        [BOOK.year.path]: {
          ...(search.yearFrom !== null && { gte: search.yearFrom }),
          ...(search.yearTo !== null && { lte: search.yearTo }),
        },
      },
    };
  }
  return filters;
}

/**
 * The filtering part of a book search request. Without facets the filters are part of the query,
 * where the index can use them to skip documents; with facets they narrow only the hits
 * (post_filter), as each facet counts without its own filter (see facets.ts).
 */
function filtering(search: BookSearch): {
  filter: estypes.QueryDslQueryContainer[];
  post_filter?: estypes.QueryDslQueryContainer;
  aggs?: Record<string, estypes.AggregationsAggregationContainer>;
} {
  const filters = bookFilters(search);
  const all = Object.values(filters);
  if (search.facets.length === 0) return { filter: all };
  return {
    filter: [],
    ...(all.length > 0 && { post_filter: { bool: { filter: all } } }),
    aggs: facetAggregations(search.facets, filters, search.facetLimit, !search.everyEdition),
  };
}

const facetsOf = (search: BookSearch, response: estypes.SearchResponse): Pick<HitPage, 'facets'> =>
  search.facets.length === 0 ? {} : { facets: readFacets(response.aggregations, search.facets, search.facetLimit, !search.everyEdition) };

export const scoredIds = (hits: estypes.SearchHit[]): ScoredId[] => hits.map((hit) => ({ id: hit._id ?? '', score: hit._score ?? 0 }));

const totalOf = (total: estypes.SearchTotalHits | number | undefined): number => (typeof total === 'number' ? total : (total?.value ?? 0));

/**
 * Book search in two phases, so that a query matching a million books stays fast: the index finds
 * the best matches by the match score alone (which lets it skip documents that cannot make the
 * top), then rescores the first few hundred with the ranking clauses and popularity. One edition
 * per work is kept here rather than by the index (collapse cannot be combined with rescoring):
 * EDITIONS_PER_WORK editions are read for each work the page needs, so a work with more matching
 * editions than that among the best can leave a deep page short.
 */
export async function searchBooks(elastic: Elastic, index: string, search: BookSearch): Promise<HitPage> {
  if (search.sort !== 'relevance') return sortedBooks(elastic, index, { ...search, sort: search.sort });
  const wanted = search.offset + search.limit;
  const read = search.everyEdition ? wanted : wanted * EDITIONS_PER_WORK;
  const window = Math.max(read, MIN_RESCORED);
  const run = async (how: Run): Promise<HitPage> => {
    const { filter, ...faceting } = filtering(search);
    const response = await elastic.search({
      index,
      size: read,
      _source: false,
      docvalue_fields: [BOOK.work_id.path],
      track_total_hits: TOTAL_COUNTED,
      query: bookMatch(search, how, true, filter),
      ...faceting,
      rescore: [
        // The fit replaces the match score (an ISBN asked for keeps its lead).
        ...(search.text === ''
          ? []
          : [
              {
                window_size: window,
                query: {
                  rescore_query: {
                    bool: {
                      should: [
                        bookFit(search.text, how.mode, how.enough),
                        seriesVolume(search.text),
                        ...(search.isbn13s.length > 0 ? [isbnClause(search.isbn13s)] : []),
                      ],
                    },
                  },
                  query_weight: 0,
                },
              },
            ]),
        {
          window_size: window,
          query: {
            rescore_query: {
              function_score: {
                functions: popularityFactor(BOOK.popularity.path, POPULARITY_WEIGHT),
                score_mode: 'sum',
                boost_mode: 'replace',
              },
            },
            score_mode: 'multiply',
          },
        },
        {
          window_size: window,
          query: {
            rescore_query: { function_score: { functions: kindFactor(search.text), score_mode: 'multiply', boost_mode: 'replace' } },
            score_mode: 'multiply',
          },
        },
      ],
    });
    const seenWorks = new Set<string>();
    const ranked = response.hits.hits.filter((hit) => {
      if (search.everyEdition) return true;
      const work = String((hit.fields?.[BOOK.work_id.path] as unknown[] | undefined)?.[0]);
      if (seenWorks.has(work)) return false;
      seenWorks.add(work);
      return true;
    });
    return { total: totalOf(response.hits.total), hits: scoredIds(ranked.slice(search.offset, wanted)), ...facetsOf(search, response) };
  };
  return search.text === '' ? run({ mode: 'exact', enough: MOST_WORDS }) : strictThenRelaxed(run, wanted);
}

type SortField = 'year' | 'rating' | 'readers';
// The field each sort reads on an edition, and on a work (the same on every edition of it).
const SORT_FIELDS: Record<SortField, { edition: string; work: string }> = {
  year: { edition: BOOK.year.path, work: BOOK.work_year.path },
  rating: { edition: BOOK.rating.path, work: BOOK.work_rating.path },
  readers: { edition: BOOK.popularity.path, work: BOOK.work_readers.path },
};

/**
 * The order of a sort other than relevance. Ties go to the more popular edition, then the id, so
 * that a page deep in the order follows on from the one before it; books without the sorted value
 * come last either way.
 */
export function sortOrder(sort: Exclude<BookSort, 'relevance'>, everyEdition: boolean): estypes.SortCombinations[] {
  const by = (field: SortField, order: 'asc' | 'desc'): estypes.SortCombinations => ({
    // unmapped_type: an index built before these fields existed sorts them as missing rather than failing.
    [SORT_FIELDS[field][everyEdition ? 'edition' : 'work']]: { order, missing: '_last', unmapped_type: 'long' },
  });
  const first: Record<typeof sort, estypes.SortCombinations[]> = {
    newest: [by('year', 'desc')],
    oldest: [by('year', 'asc')],
    rating: [by('rating', 'desc'), by('readers', 'desc')],
    readers: [by('readers', 'desc')],
    title: [{ [BOOK.title.key]: { order: 'asc', missing: '_last' } }],
  };
  return [...first[sort], { [BOOK.popularity.path]: { order: 'desc' } }, { [BOOK.id.path]: { order: 'asc' } }];
}

/**
 * Book search in another order than relevance: every book that matches, ordered by the field.
 * One edition per work is kept by the index (collapse on work_id, which a sort allows), so a deep
 * page is exact; the edition shown is the first of its work in the order.
 */
async function sortedBooks(
  elastic: Elastic,
  index: string,
  search: BookSearch & { sort: Exclude<BookSort, 'relevance'> },
): Promise<HitPage> {
  const run = async (how: Run): Promise<HitPage> => {
    const { filter, ...faceting } = filtering(search);
    const response = await elastic.search({
      index,
      from: search.offset,
      size: search.limit,
      _source: false,
      track_total_hits: TOTAL_COUNTED,
      track_scores: true,
      query: bookMatch(search, how, false, filter),
      ...faceting,
      sort: sortOrder(search.sort, search.everyEdition),
      ...(search.everyEdition ? {} : { collapse: { field: BOOK.work_id.path } }),
    });
    return { total: totalOf(response.hits.total), hits: scoredIds(response.hits.hits), ...facetsOf(search, response) };
  };
  return search.text === '' ? run({ mode: 'exact', enough: MOST_WORDS }) : strictThenRelaxed(run, search.offset + search.limit);
}

/**
 * Authors, each with the count of their works as the index has it: counting them in PostgreSQL reads
 * every book of the author, too slow for a search of a prolific one, and sync keeps the index's
 * count in step with the catalogue's.
 */
export async function searchAuthors(elastic: Elastic, index: string, search: AuthorSearch): Promise<HitPage<AuthorHit>> {
  const run = async (mode: Spelling): Promise<HitPage<AuthorHit>> => {
    const response = await elastic.search({
      index,
      from: search.offset,
      size: search.limit,
      _source: false,
      docvalue_fields: [AUTHOR.work_count.path],
      track_total_hits: true,
      query: withPopularity(
        {
          bool: {
            should: readings(search.text).flatMap((text) => {
              // Initials joined, reading order, folded: as the indexed name_key has the name.
              const nameKey = authorKey(text);
              return [
                { term: { [AUTHOR.name_key.path]: { value: nameKey, boost: 10 } } },
                { match: { [AUTHOR.all_names.path]: { query: text, ...spelling(mode), operator: 'and', boost: 2 } } },
                { match: { [AUTHOR.all_names.path]: { query: nameKey, ...spelling(mode), operator: 'and', boost: 2 } } },
                { match: { [AUTHOR.all_names.prefix]: { query: text, operator: 'and', boost: 1 } } },
              ];
            }),
            minimum_should_match: 1,
          },
        },
        AUTHOR.popularity.path,
        0.1,
      ),
    });
    const hits = response.hits.hits.map((hit) => ({
      id: hit._id ?? '',
      score: hit._score ?? 0,
      workCount: Number((hit.fields?.[AUTHOR.work_count.path] as unknown[] | undefined)?.[0] ?? 0),
    }));
    return { total: totalOf(response.hits.total), hits };
  };
  return exactThenTypos(run, search.offset + search.limit);
}

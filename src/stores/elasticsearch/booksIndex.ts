import { PRIOR_MEAN, PRIOR_RATINGS } from '../../domain/ratings.js';
import { distinctSubjects } from '../../domain/subjects.js';
import { titleKey as keyOfTitle } from '../../domain/titles.js';
import {
  completionWeight,
  foldedKeyword,
  foldingNormalizer,
  indexSettings,
  personName,
  prefixed,
  PERSON_NAME_ANALYZERS,
  typedStart,
} from './analysis.js';
import { declareIndex, fieldNames, finished, type Mapping } from './indexDeclaration.js';

/**
 * The books index: one document per live edition (neither merged nor deleted). Sources read `b`,
 * the book's row; `w`, its work; `wp`, its work's popularity from readers and editions
 * (work_popularity, may be null); `ws`, the popularity and ratings of all its work's live editions;
 * `tl`, present when the book is the most read of them with its title (case aside, then the first by id);
 * `a`, its credits in order (authors, ids, names, facet); `l`, the live books its readers also
 * liked (ids).
 */

// The damped average of domain/ratings.ts, over `count` ratings summing to `sum`.
const dampedRating = (count: string, sum: string) =>
  `case when ${count} > 0 then (${PRIOR_RATINGS} * ${PRIOR_MEAN} + ${sum}) / (${PRIOR_RATINGS} + ${count}) end`;

// The edition's subjects, else its work's: Open Library keeps most subjects on works.
const SUBJECTS = "coalesce(b.subjects, w.subjects, '{}')";
// The popularity of all the work's live editions, and its popularity from readers and editions.
const WORK_READERS = 'ws.popularity + coalesce(wp.popularity, 0)';
// Between a key and what is shown for it in the *_facet fields (see facets.ts).
export const FACET_SEPARATOR = '\u001f';

const folded: Mapping = { type: 'text', analyzer: 'folded' };
const english: Mapping = { type: 'text', analyzer: 'folded_english' };
const titleKey: Mapping = { type: 'keyword', normalizer: 'title_key', ignore_above: 512 };
const shownOnly: Mapping = { type: 'keyword', index: false };

export const BOOKS_INDEX = declareIndex({
  settings: indexSettings({
    char_filter: {
      isbn_chars: { type: 'pattern_replace', pattern: '[^0-9Xx]', replacement: '' },
      // title_key: a title as titleKey() of src/domain/titles.ts writes it.
      key_ampersand: { type: 'pattern_replace', pattern: '&', replacement: ' and ' },
      key_joining_punctuation: { type: 'pattern_replace', pattern: "['\u2019\u02bc.]", replacement: '' },
      key_punctuation: { type: 'pattern_replace', pattern: String.raw`[^\p{L}\p{N}]+`, replacement: ' ' },
      key_trim: { type: 'pattern_replace', pattern: '^ +| +$', replacement: '' },
      key_leading_article: { type: 'pattern_replace', pattern: '^(?i)(?:the|a|an) (?=.)', replacement: '' },
    },
    filter: {
      english_possessive: { type: 'stemmer', language: 'possessive_english' },
      english_stop: { type: 'stop', stopwords: '_english_' },
      english_stemmer: { type: 'stemmer', language: 'english' },
    },
    normalizer: {
      title_key: foldingNormalizer(['key_ampersand', 'key_joining_punctuation', 'key_punctuation', 'key_trim', 'key_leading_article']),
      isbn: { type: 'custom', char_filter: ['isbn_chars'], filter: ['lowercase'] },
    },
    analyzer: {
      folded: { type: 'custom', tokenizer: 'standard', filter: ['lowercase', 'asciifolding'] },
      folded_prefix: { type: 'custom', tokenizer: 'standard', filter: ['lowercase', 'asciifolding', 'prefix_edge_ngram'] },
      folded_english: {
        type: 'custom',
        tokenizer: 'standard',
        filter: ['english_possessive', 'lowercase', 'asciifolding', 'english_stop', 'english_stemmer'],
      },
      // Free text holds names: initials are joined as in person_name.
      free_text: PERSON_NAME_ANALYZERS.person_name,
    },
  }),
  fields: {
    id: { mapping: { type: 'keyword' }, from: { sql: 'public_id(b.id)' } },
    work_id: { mapping: { type: 'keyword' }, from: { sql: 'public_id(b.work_id)' } },
    /** The work's kind (domain/titles.ts workKind): a boxset, omnibus or companion ranks below the books themselves. */
    kind: { mapping: { type: 'keyword' }, from: { sql: 'w.kind' } },
    /** The work's title: for goodbooks its original title, which a record may give instead of the edition's. */
    work_title: { mapping: { ...folded, fields: { english } }, from: { sql: 'w.title' } },
    isbn_13: { mapping: { type: 'keyword', normalizer: 'isbn' }, from: { sql: 'b.isbn_13' } },
    isbn_10: { mapping: { type: 'keyword', normalizer: 'isbn' }, from: { sql: 'b.isbn_10' } },
    title: {
      mapping: {
        ...folded,
        copy_to: ['all_text'],
        fields: { prefix: prefixed('folded'), english, keyword: foldedKeyword(512), key: titleKey },
      },
      from: { sql: 'b.title' },
    },
    subtitle: { mapping: { ...folded, copy_to: ['all_text'], fields: { english } }, from: { sql: 'b.subtitle' } },
    series: {
      mapping: { ...folded, copy_to: ['all_text'], fields: { prefix: prefixed('folded'), keyword: foldedKeyword(512), key: titleKey } },
      from: { sql: 'b.series' },
    },
    series_number: { mapping: { type: 'keyword' }, from: { sql: 'b.series_number' } },
    /**
     * Each credit as {id, name}, in order: what a hit shows without reading PostgreSQL (suggestions,
     * recommendations). Only shown, never searched (author_ids and author_names are): not indexed.
     */
    authors: {
      mapping: { type: 'object', enabled: false },
      from: { sql: "coalesce(a.authors, '[]'::json)" },
    },
    author_ids: { mapping: { type: 'keyword' }, from: { sql: "coalesce(a.ids, '[]'::json)" } },
    // The prefix subfield is never queried, yet recommendations' more_like_this over author_names ranks
    // otherwise without it (test/author-co-reading.test.ts).
    author_names: {
      mapping: { ...personName('all_text'), fields: { prefix: prefixed('person_name'), keyword: foldedKeyword(256) } },
      from: { sql: "coalesce(a.names, '[]'::json)" },
    },
    /** The name of the author credited first: the book is theirs more than a co-author's or contributor's. */
    first_author: { mapping: foldedKeyword(256), from: { sql: 'a.names->>0' } },
    /** Each credit as "<author id>\u001f<name>": the author facet counts and names them in one aggregation. */
    author_facet: { mapping: shownOnly, from: { sql: "coalesce(a.facet, '[]'::json)" } },
    publisher: {
      mapping: {
        ...folded,
        fields: { keyword: foldedKeyword(256), raw: { type: 'keyword', index: false, ignore_above: 256 } },
      },
      from: { sql: 'b.publisher' },
    },
    year: { mapping: { type: 'integer' }, from: { sql: 'b.year' } },
    language: { mapping: { type: 'keyword' }, from: { sql: 'b.language' } },
    pages: { mapping: { type: 'integer' }, from: { sql: 'b.pages' } },
    cover_url: { mapping: { type: 'keyword', index: false, doc_values: false }, from: { sql: 'cover_url_of(b.cover_url)' } },
    physical_format: { mapping: foldedKeyword(256), from: { sql: 'b.physical_format' } },
    subjects: { mapping: { ...folded, fields: { english, keyword: foldedKeyword(256) } }, from: { sql: SUBJECTS } },
    /** subjectKey() of each subject, once. */
    subject_keys: {
      mapping: { type: 'keyword' },
      from: finished(SUBJECTS, (subjects: string[]) => distinctSubjects(subjects).map((subject) => subject.key)),
    },
    /** "<key>\u001f<spelling>" for each key: the subject facet shows a key in its most common spelling. */
    subject_facet: {
      mapping: shownOnly,
      from: finished(SUBJECTS, (subjects: string[]) =>
        distinctSubjects(subjects).map((subject) => `${subject.key}${FACET_SEPARATOR}${subject.spelling}`),
      ),
    },
    /** The book's ratings_count (books.popularity) plus its work's popularity from readers and editions. */
    popularity: { mapping: { type: 'long' }, from: { sql: 'b.popularity + coalesce(wp.popularity, 0)' } },
    average_rating: { mapping: { type: 'float' }, from: { sql: 'b.average_rating' } },
    /** The book's damped average rating (domain/ratings.ts); null when nobody rated it. */
    rating: { mapping: { type: 'float' }, from: { sql: dampedRating('b.popularity', 'b.popularity * b.average_rating') } },
    /** What a work sorts by when search shows one result per work: the year it was first published (the edition's year when unknown), */
    work_year: { mapping: { type: 'integer' }, from: { sql: 'coalesce(w.original_year, b.year)' } },
    /** the popularity of all its live editions together, */
    work_readers: { mapping: { type: 'long' }, from: { sql: WORK_READERS } },
    /** and the damped average of all their ratings. */
    work_rating: { mapping: { type: 'float' }, from: { sql: dampedRating('ws.ratings', 'ws.rating_sum') } },
    /**
     * Type-ahead of titles: titleKey(title), weighed by the work's readers, given by one edition of
     * each title of a work (its most read, then the first by id), so that the inputs starting as typed
     * are of as many works.
     */
    title_start: {
      mapping: typedStart,
      from: finished(
        `json_build_array(b.title, tl.id is not null, ${WORK_READERS})`,
        ([title, first, readers]: [string, boolean, unknown]) => {
          const key = first ? keyOfTitle(title) : '';
          return key === '' ? null : { input: [key], weight: completionWeight(readers) };
        },
      ),
    },
    /** Type-ahead of series: titleKey(series), weighed by the work's readers (a series' input is its most read work's). */
    series_start: {
      mapping: typedStart,
      from: finished(`json_build_array(b.series, ${WORK_READERS})`, ([series, readers]: [string | null, unknown]) => {
        const key = series === null ? '' : keyOfTitle(series);
        return key === '' ? null : { input: [key], weight: completionWeight(readers) };
      }),
    },
    /** Ids of live books "readers of this book also liked", best first; never an edition of the same work. */
    also_liked: { mapping: { type: 'keyword' }, from: { sql: "coalesce(l.ids, '[]'::json)" } },
    /** The change-sequence number the document is versioned with (see loader/index/sync.ts). */
    updated_seq: { mapping: { type: 'long' }, from: { sql: '$1::bigint' } },
    /** Title, subtitle, series and author names together: free text matches any of them. */
    all_text: { mapping: { type: 'text', analyzer: 'free_text', fields: { english } } },
  },
});

export const BOOK = fieldNames(BOOKS_INDEX);

import type { Mapping } from './indexDeclaration.js';

/**
 * What both indices share: their index settings, the analysis of people's names and of prefixes,
 * and the mappings built from them (see booksIndex.ts, authorsIndex.ts).
 */

const INDEX_SETTINGS = {
  refresh_interval: '1s',
  // How long a delete's tombstone is kept: long enough that a late write of an older version is refused (see loader/index/sync.ts).
  gc_deletes: '1h',
  codec: 'best_compression',
} as const;

type Components = Readonly<Record<string, unknown>>;

/** An index's settings: the shared ones and analysis, with the index's own character filters, filters, normalizers and analyzers. */
export const indexSettings = (own: { char_filter: Components; filter?: Components; normalizer: Components; analyzer?: Components }) => ({
  index: INDEX_SETTINGS,
  analysis: {
    char_filter: { ...NAME_CHAR_FILTERS, ...own.char_filter },
    filter: { ...PREFIX_FILTER, ...own.filter },
    normalizer: { ...FOLDED_KEYWORD_NORMALIZER, ...own.normalizer },
    analyzer: { ...PERSON_NAME_ANALYZERS, ...own.analyzer },
  },
});

/** Initials are one word however written: "J.R.R.", "J. R. R." and "JRR" all read as "jrr". */
const NAME_CHAR_FILTERS = {
  name_periods: { type: 'pattern_replace', pattern: '\\.', replacement: ' ' },
  name_initials: {
    type: 'pattern_replace',
    pattern: String.raw`(?<=(?<![\p{L}\p{M}\p{N}])\p{L}\p{M}{0,2})\s+(?=\p{L}\p{M}{0,2}(?![\p{L}\p{M}\p{N}]))`,
    replacement: '',
  },
} as const;

const PREFIX_FILTER = {
  prefix_edge_ngram: { type: 'edge_ngram', min_gram: 2, max_gram: 15, preserve_original: true },
} as const;

/** A normalizer that folds to lower case and ASCII after the character filters named. */
export const foldingNormalizer = (charFilters: readonly string[]) =>
  ({ type: 'custom', char_filter: charFilters, filter: ['lowercase', 'asciifolding'] }) as const;

const FOLDED_KEYWORD_NORMALIZER = {
  folded_keyword: { type: 'custom', filter: ['lowercase', 'asciifolding'] },
} as const;

const NAME_CHARS = ['name_periods', 'name_initials'];
export const PERSON_NAME_ANALYZERS = {
  person_name: { type: 'custom', char_filter: NAME_CHARS, tokenizer: 'standard', filter: ['lowercase', 'asciifolding'] },
  person_name_prefix: {
    type: 'custom',
    char_filter: NAME_CHARS,
    tokenizer: 'standard',
    filter: ['lowercase', 'asciifolding', 'prefix_edge_ngram'],
  },
} as const;

/** A keyword folded to lower case and ASCII, for exact matches and sorting; longer values are not indexed. */
export const foldedKeyword = (ignoreAbove: number): Mapping => ({
  type: 'keyword',
  normalizer: 'folded_keyword',
  ignore_above: ignoreAbove,
});

/** Indexed by its word prefixes too (search as you type), searched by whole words. */
export const prefixed = (analyzer: string): Mapping => ({ type: 'text', analyzer: `${analyzer}_prefix`, search_analyzer: analyzer });

/** A person's name: its words, copied into the field that holds all of a document's names. */
export const personName = (copyTo: string) => ({ type: 'text', analyzer: 'person_name', copy_to: [copyTo] }) as const;

/**
 * Type-ahead's "starts with": keys (titleKey, authorKey) written by the document's finishing code,
 * kept whole (the keyword analyzer), each with a weight: a completion field, whose FST yields the
 * heaviest inputs starting with a prefix without visiting every document that does. A longer key is
 * cut: typed text longer than the cut finds its name by its words.
 */
export const typedStart: Mapping = { type: 'completion', analyzer: 'keyword', max_input_length: 60 };

/** A completion input's weight: readers, as the 32-bit integer Elasticsearch keeps. */
export const completionWeight = (readers: unknown): number => Math.min(2 ** 31 - 1, Math.max(0, Math.trunc(Number(readers) || 0)));

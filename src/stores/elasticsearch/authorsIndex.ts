import { authorKey } from '../../domain/names.js';
import { completionWeight, foldingNormalizer, indexSettings, personName, prefixed, typedStart } from './analysis.js';
import { declareIndex, fieldNames, finished } from './indexDeclaration.js';

/**
 * The authors index: one document per live author (neither merged nor deleted). Sources read `a`,
 * the author's row, and `s`, the count and popularity of their live books' works.
 */
export const AUTHORS_INDEX = declareIndex({
  settings: indexSettings({
    char_filter: {
      // name_key: the name as authorKey() of src/domain/names.ts writes it.
      name_key_apostrophes: { type: 'pattern_replace', pattern: "['’]", replacement: '' },
      name_key_punct: { type: 'pattern_replace', pattern: String.raw`[^\p{L}\p{M}\p{N}\s]+`, replacement: ' ' },
      name_key_spaces: { type: 'pattern_replace', pattern: String.raw`^\s+|\s+$|\s+(?=\s)`, replacement: '' },
    },
    normalizer: {
      name_key: foldingNormalizer(['name_periods', 'name_initials', 'name_key_apostrophes', 'name_key_punct', 'name_key_spaces']),
    },
  }),
  fields: {
    id: { mapping: { type: 'keyword' }, from: { sql: 'public_id(a.id)' } },
    name: { mapping: personName('all_names'), from: { sql: 'a.name' } },
    /** Other spellings of the name: those imports gave, and those of authors merged into this one. */
    alternate_names: {
      mapping: personName('all_names'),
      from: {
        sql: `coalesce((select array_agg(distinct n.name) from (
                          select name from author_names where author_id = a.id
                          union select unnest(a.alternate_names)) n
                        where n.name <> a.name), '{}')`,
      },
    },
    /** The name and every other spelling of it. */
    all_names: { mapping: { type: 'text', analyzer: 'person_name', fields: { prefix: prefixed('person_name') } } },
    /** authorKey(name): initials joined, reading order, folded; a query's authorKey meets it whole. */
    name_key: { mapping: { type: 'keyword', normalizer: 'name_key', ignore_above: 256 }, from: finished('a.name', authorKey) },
    /** Distinct works of the author's live books. */
    work_count: { mapping: { type: 'integer' }, from: { sql: 'coalesce(s.work_count, 0)' } },
    /** Sum of the popularity of the author's live books, as their documents have it. */
    popularity: { mapping: { type: 'long' }, from: { sql: 'coalesce(s.popularity, 0)' } },
    /** Type-ahead of names: name_key and its surname (its last word; readers type surnames), weighed by popularity. */
    name_start: {
      mapping: typedStart,
      from: finished('json_build_array(a.name, coalesce(s.popularity, 0))', ([name, popularity]: [string, unknown]) => {
        const key = authorKey(name);
        const surname = key.split(' ').at(-1) ?? '';
        const inputs = [...new Set([key, surname])].filter((input) => input !== '');
        return inputs.length === 0 ? null : { input: inputs, weight: completionWeight(popularity) };
      }),
    },
    updated_seq: { mapping: { type: 'long' }, from: { sql: '$1::bigint' } },
  },
});

export const AUTHOR = fieldNames(AUTHORS_INDEX);

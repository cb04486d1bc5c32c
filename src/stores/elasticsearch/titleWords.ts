import { BOOK } from './booksIndex.js';
import type { Elastic } from './client.js';

/**
 * Which of some words the catalogue's titles hold, as written or by their stem ("princes" by
 * "Prince"): a word of a given title that no title holds is a misspelling, not another word (see
 * domain/similarity.ts). One request for all the words: each is an artificial document analysed
 * as a title, and the index says how many books hold each of its terms.
 */
export async function knownTitleWords(elastic: Elastic, index: string, words: readonly string[]): Promise<Set<string>> {
  if (words.length === 0) return new Set();
  const response = await elastic.mtermvectors({
    index,
    docs: words.map((word) => ({
      doc: { [BOOK.title.path]: word },
      fields: TITLE_FIELDS,
      term_statistics: true,
      field_statistics: false,
      positions: false,
      offsets: false,
    })),
  });
  const known = new Set<string>();
  response.docs.forEach((answer, at) => {
    const held = (field: string): boolean => {
      const terms = Object.values(answer.term_vectors?.[field]?.terms ?? {});
      return terms.length > 0 && terms.every((term) => (term.doc_freq ?? 0) > 0);
    };
    // A stop word has no stemmed term: as written, it is held.
    if (TITLE_FIELDS.some(held)) known.add(words[at]!);
  });
  return known;
}

const TITLE_FIELDS = [BOOK.title.path, BOOK.title.english];

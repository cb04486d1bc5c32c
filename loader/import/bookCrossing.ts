import { parseIsbn } from '../../src/domain/isbn.js';
import { cleanAuthorName } from '../../src/domain/names.js';
import { splitTitle, workKind, workTitle } from '../../src/domain/titles.js';
import type { CatalogueSource, ParsedRow } from './importer.js';
import { authorEntries, nonEmpty, plausibleYear, wholeNumber, workKey } from './sourceFields.js';

/**
 * Book-Crossing BX-Books.csv: one edition per ISBN-10 with its publisher and year of publication,
 * which it owns. Years of 0 mean unknown; author names in capitals are set in normal case.
 */
export const bookCrossing: CatalogueSource = {
  name: 'book-crossing',
  policy: { owns: new Set(['publisher', 'year']) },

  parse(record, line): ParsedRow {
    const rawIsbn = record.ISBN ?? '';
    const isbn = parseIsbn(rawIsbn);
    if (!isbn) return { rejected: `invalid ISBN "${rawIsbn}"` };
    const rawTitle = nonEmpty(record['Book-Title']);
    if (!rawTitle) return { rejected: 'title is empty' };

    const parts = splitTitle(rawTitle);
    const rawAuthor = nonEmpty(record['Book-Author']);
    const authors = authorEntries(rawAuthor ? [rawAuthor] : []);
    const year = plausibleYear(wholeNumber(record['Year-Of-Publication']));
    return {
      repaired: rawAuthor !== null && cleanAuthorName(rawAuthor) !== rawAuthor,
      edition: {
        line,
        isbn,
        sourceKey: null,
        fields: {
          title: parts.title,
          subtitle: parts.subtitle,
          series: parts.series,
          series_number: parts.seriesNumber,
          publisher: nonEmpty(record['Book-Publisher']),
          year,
        },
        authors,
        work: { key: workKey(parts.title, authors[0]?.key), title: workTitle(parts.title), originalYear: year, kind: workKind(parts) },
      },
    };
  },
};

import { recoverGoodbooksIsbn } from '../../src/domain/isbn.js';
import { splitAuthorList } from '../../src/domain/names.js';
import { splitTitle, workKind } from '../../src/domain/titles.js';
import type { CatalogueSource, ParsedRow } from './importer.js';
import { authorEntries, decimal, nonEmpty, plausibleYear, wholeNumber, workKey } from './sourceFields.js';

// Goodreads' "no photo" placeholder is not a cover.
const PLACEHOLDER_COVER = /\/nophoto\//;

/**
 * goodbooks-10k books.csv: the richest source for titles, series, languages, covers and popularity,
 * so it owns those fields. Its `isbn` lost leading zeros and its `isbn13` is a rounded float; both
 * are recovered where that is certain (see recoverGoodbooksIsbn) and never invented.
 */
export const goodbooks: CatalogueSource = {
  name: 'goodbooks',
  policy: {
    owns: new Set(['title', 'subtitle', 'series', 'series_number', 'language', 'cover_url', 'popularity', 'average_rating', 'authors']),
  },

  parse(record, line): ParsedRow {
    const rawTitle = nonEmpty(record.title) ?? nonEmpty(record.original_title);
    if (!rawTitle) return { rejected: 'title is empty' };
    const recovered = recoverGoodbooksIsbn(record.isbn ?? '', record.isbn13 ?? '');
    const goodreadsId = nonEmpty(record.goodreads_book_id);
    if (!recovered.isbn && !goodreadsId) return { rejected: `no usable ISBN (${recovered.problem}) and no goodreads_book_id` };

    const parts = splitTitle(rawTitle);
    const authors = authorEntries(splitAuthorList(record.authors ?? ''));
    const originalYear = wholeNumber(record.original_publication_year);
    const cover = nonEmpty(record.image_url);
    return {
      repaired: recovered.repaired,
      edition: {
        line,
        isbn: recovered.isbn,
        sourceKey: recovered.isbn ? null : `goodreads:${goodreadsId}`,
        fields: {
          title: parts.title,
          subtitle: parts.subtitle,
          series: parts.series,
          series_number: parts.seriesNumber,
          // The file knows when the work first appeared, not when this edition did: only a gap filler.
          year: plausibleYear(originalYear),
          language: nonEmpty(record.language_code),
          cover_url: cover && !PLACEHOLDER_COVER.test(cover) ? cover : null,
          popularity: wholeNumber(record.ratings_count) ?? 0,
          average_rating: decimal(record.average_rating),
        },
        authors,
        work: {
          key: workKey(parts.title, authors[0]?.key),
          title: nonEmpty(record.original_title) ?? parts.title,
          originalYear,
          kind: workKind(parts),
        },
      },
    };
  },
};

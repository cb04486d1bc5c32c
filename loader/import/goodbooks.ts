import { recoverGoodbooksIsbn } from '../../src/domain/isbn.js';
import { splitAuthorList } from '../../src/domain/names.js';
import { splitTitle, workKind } from '../../src/domain/titles.js';
import type { CatalogueSource, ParsedRow } from './importer.js';
import { authorEntries, decimal, nonEmpty, plausibleYear, wholeNumber, workKey } from './sourceFields.js';

// Goodreads' "no photo" placeholder is not a cover.
const PLACEHOLDER_COVER = /\/nophoto\//;

const STARS = ['ratings_1', 'ratings_2', 'ratings_3', 'ratings_4', 'ratings_5'] as const;

/**
 * How many of the Goodreads work's readers gave each star, or null unless all five are counts that
 * add up to the work's `work_ratings_count`, as they do in every row of goodbooks-10k (`ratings_count`
 * is another number: the ratings of the one edition the row names).
 */
function starCounts(record: Record<string, string>): number[] | null {
  const counts = STARS.map((column) => wholeNumber(record[column]));
  if (!counts.every((count): count is number => count !== null && count >= 0)) return null;
  return counts.reduce((sum, count) => sum + count, 0) === wholeNumber(record.work_ratings_count) ? counts : null;
}

/**
 * goodbooks-10k books.csv: the richest source for titles, series, languages, covers and popularity,
 * so it owns those fields, and the one source of Goodreads' ratings. Its `isbn` lost leading zeros and its `isbn13` is a rounded float; both
 * are recovered where that is certain (see recoverGoodbooksIsbn) and never invented.
 */
export const goodbooks: CatalogueSource = {
  name: 'goodbooks',
  policy: {
    owns: new Set([
      'title',
      'subtitle',
      'series',
      'series_number',
      'language',
      'cover_url',
      'popularity',
      'average_rating',
      'goodreads_work',
      'goodreads_rated',
      'authors',
    ]),
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
          goodreads_work: wholeNumber(record.work_id),
          goodreads_rated: starCounts(record),
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

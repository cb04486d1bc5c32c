import { parseIsbn } from '../../src/domain/isbn.js';
import type { Logger } from '../../src/log.js';
import type { Pool } from '../../src/stores/postgres/pool.js';
import type { ResponseCache } from '../../src/stores/redis/responseCache.js';
import {
  analyzeDerivedTables,
  booksByIsbn13,
  deriveAlsoLiked,
  upsertRatings,
  type AlsoLikedOptions,
  type AlsoLikedOutcome,
  type RatingInput,
} from '../../src/stores/postgres/ratings.js';
import { answersChanged } from '../index/sync.js';
import { importRows, newReport, type ImportReport } from './importer.js';

/**
 * `bookmeta import ratings <file>`: Book-Crossing BX-Ratings.csv (User-ID, ISBN, Book-Rating).
 * Ratings name ISBN-10s of BX-Books; each is mapped to the book with that ISBN (a merged book's
 * survivor). Streamed in batches, idempotent; a row that cannot be used (bad user id, ISBN or
 * rating, or an ISBN no book has) is reported with its line and reason, never fatal. Afterwards
 * "also liked" is derived again from all ratings, and every book whose list changed gets an
 * 'update' change, so `bookmeta sync` puts the new lists in the index; the tables it grew are
 * left with fresh planner statistics.
 */

export interface RatingsImportReport extends ImportReport {
  alsoLiked: AlsoLikedOutcome;
}

const BATCH = 5_000;

interface ParsedRating {
  line: number;
  userId: number;
  isbn13: string;
  rawIsbn: string;
  rating: number;
}

export function parseRating(record: Record<string, string>, line: number): ParsedRating | { rejected: string } {
  const rawUser = (record['User-ID'] ?? '').trim();
  const userId = Number(rawUser);
  if (!/^\d+$/.test(rawUser) || !Number.isSafeInteger(userId) || userId > 2_147_483_647)
    return { rejected: `invalid user id "${rawUser}"` };
  const rawIsbn = (record.ISBN ?? '').trim();
  const isbn = parseIsbn(rawIsbn);
  if (!isbn) return { rejected: `invalid ISBN "${rawIsbn}"` };
  const rawRating = (record['Book-Rating'] ?? '').trim();
  const rating = Number(rawRating);
  if (!/^\d+$/.test(rawRating) || rating > 10) return { rejected: `invalid rating "${rawRating}" (0 to 10)` };
  return { line, userId, isbn13: isbn.isbn13, rawIsbn, rating };
}

export async function importRatings(
  path: string,
  stores: { db: Pool; log: Logger; cache?: ResponseCache | null },
  options: { alsoLiked?: AlsoLikedOptions; onProgress?: (report: ImportReport) => void } = {},
): Promise<RatingsImportReport> {
  const report: RatingsImportReport = { ...newReport('ratings'), alsoLiked: { books: 0, changed: [] } };
  await importRows(path, report, {
    batchSize: BATCH,
    parse: parseRating,
    writeBatch: async (batch) => {
      const books = await booksByIsbn13(stores.db, [...new Set(batch.map((row) => row.isbn13))]);
      const inputs: RatingInput[] = [];
      for (const row of batch) {
        const bookId = books.get(row.isbn13);
        if (!bookId) report.rejected.push({ line: row.line, reason: `unknown ISBN "${row.rawIsbn}": no book has it` });
        else inputs.push({ userId: row.userId, bookId, rating: row.rating });
      }
      const outcome = await upsertRatings(stores.db, inputs);
      // The records of these works, and of their books, show their ratings.
      await stores.cache?.invalidate(outcome.works).catch((error: unknown) => {
        stores.log.warn({ err: error }, 'could not drop cached answers; they expire within 24 hours');
      });
      report.imported += inputs.length;
      report.inserted += outcome.inserted;
      report.updated += outcome.updated;
      report.unchanged += outcome.unchanged;
    },
    onProgress: options.onProgress,
  });
  report.rejected.sort((a, b) => a.line - b.line);
  report.alsoLiked = await deriveAlsoLiked(stores.db, options.alsoLiked);
  // Recommendations read the derived lists from PostgreSQL: theirs have changed already.
  await answersChanged({ cache: stores.cache ?? null, log: stores.log });
  await analyzeDerivedTables(stores.db);
  stores.log.info({ books: report.alsoLiked.books, changed: report.alsoLiked.changed.length }, 'also-liked lists derived');
  return report;
}

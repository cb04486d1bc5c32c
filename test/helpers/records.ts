import type { BookRecord } from '../../src/domain/records.js';

/** A book record for the pure matching tests: every field blank but those given. */
export const bookRecord = (fields: Partial<BookRecord>): BookRecord => ({
  id: 'bk_000000000001',
  work_id: 'wk_000000000001',
  kind: 'book',
  isbn_13: null,
  isbn_10: null,
  title: 'Untitled',
  subtitle: null,
  series: null,
  series_number: null,
  authors: [],
  publisher: null,
  year: null,
  language: null,
  pages: null,
  cover_url: null,
  physical_format: null,
  subjects: [],
  description: null,
  ratings_count: 0,
  average_rating: null,
  readers: { want_to_read: 0, currently_reading: 0, already_read: 0 },
  rating: {
    average: null,
    count: 0,
    stars: { '1': 0, '2': 0, '3': 0, '4': 0, '5': 0 },
    sources: {
      openlibrary: { average: null, count: 0, stars: { '1': 0, '2': 0, '3': 0, '4': 0, '5': 0 } },
      goodreads: { average: null, count: 0, stars: { '1': 0, '2': 0, '3': 0, '4': 0, '5': 0 } },
      book_crossing: { average: null, count: 0, stars: null },
    },
  },
  identifiers: {},
  updated_at: '2024-01-01T00:00:00Z',
  ...fields,
});

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
  identifiers: {},
  updated_at: '2024-01-01T00:00:00Z',
  ...fields,
});

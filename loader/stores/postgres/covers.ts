import { olCoverId } from '../../../src/domain/openlibrary.js';

/**
 * How the catalogue stores a cover's URL (books.cover_url, works.cover_url): an Open Library cover as
 * its number, "12345" for https://covers.openlibrary.org/b/id/12345-M.jpg (6 bytes instead of 48),
 * any other URL as it is. Every write goes through withStoredCover; every read gives the URL back
 * with the SQL function cover_url_of (migration 040).
 */

/** A row with its cover_url, if it has one, in the stored form. */
export function withStoredCover<T extends { cover_url?: unknown }>(row: T): T {
  if (typeof row.cover_url !== 'string') return row;
  return { ...row, cover_url: olCoverId(row.cover_url) ?? row.cover_url };
}

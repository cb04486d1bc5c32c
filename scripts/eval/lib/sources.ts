import { csvRows } from '../../../loader/import/csvRows.js';
import { parseIsbn, recoverGoodbooksIsbn } from '../../../src/domain/isbn.js';
import { splitAuthorList } from '../../../src/domain/names.js';
import { projectPath } from '../../../src/paths.js';

/** The rows of the shipped source files as the evaluations read them (scripts/eval/*.ts). */

export const GOODBOOKS = projectPath('data', 'goodbooks-10k', 'books.csv');
export const BX_BOOKS = projectPath('data', 'book-crossing', 'BX-Books.csv');

export interface SourceBook {
  source: 'goodbooks' | 'book-crossing';
  /** The title as the file has it, series parenthetical included. */
  rawTitle: string;
  /** Goodbooks' original_title when it differs from the title's own words, else null. */
  originalTitle: string | null;
  authors: string[];
  year: number | null;
  publisher: string | null;
  isbn13: string | null;
  /** Goodbooks rows without a usable ISBN are imported under this key ("goodreads:2767052"). */
  sourceKey: string | null;
  /** Goodbooks' ratings_count: how many readers rated the book (0 for Book-Crossing). */
  readers: number;
  /** The line of the file, to leave held-out rows out of an import. */
  line: number;
}

async function readSource(path: string, read: (record: Record<string, string>, line: number) => SourceBook | null): Promise<SourceBook[]> {
  const books: SourceBook[] = [];
  for await (const { record, line } of csvRows(path, () => undefined)) {
    const book = read(record, line);
    if (book) books.push(book);
  }
  return books;
}

const year = (text: string | undefined): number | null => {
  const value = Math.trunc(Number(text));
  return Number.isFinite(value) && value > 0 ? value : null;
};

export const readGoodbooks = (): Promise<SourceBook[]> =>
  readSource(GOODBOOKS, (record, line) => {
    const isbn13 = recoverGoodbooksIsbn(record.isbn ?? '', record.isbn13 ?? '').isbn?.isbn13 ?? null;
    const original = record.original_title?.trim() ?? '';
    return {
      source: 'goodbooks',
      rawTitle: record.title ?? '',
      originalTitle: original === '' ? null : original,
      authors: splitAuthorList(record.authors ?? ''),
      year: year(record.original_publication_year),
      publisher: null,
      isbn13,
      sourceKey: isbn13 === null && record.goodreads_book_id ? `goodreads:${record.goodreads_book_id}` : null,
      readers: Number(record.ratings_count) || 0,
      line,
    };
  });

export const readBookCrossing = (): Promise<SourceBook[]> =>
  readSource(BX_BOOKS, (record, line) => ({
    source: 'book-crossing',
    rawTitle: record['Book-Title'] ?? '',
    originalTitle: null,
    authors: (record['Book-Author'] ?? '').trim() === '' ? [] : [record['Book-Author']!.trim()],
    year: year(record['Year-Of-Publication']),
    publisher: record['Book-Publisher']?.trim() || null,
    isbn13: parseIsbn(record.ISBN ?? '')?.isbn13 ?? null,
    sourceKey: null,
    readers: 0,
    line,
  }));

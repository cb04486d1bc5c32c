import { writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { bookCrossing } from '../../src/loader/import/bookCrossing.js';
import { goodbooks } from '../../src/loader/import/goodbooks.js';
import { importCatalogue, type ImportReport } from '../../src/loader/import/importer.js';
import { createLogger } from '../../src/log.js';
import { projectPath } from '../../src/paths.js';
import type { TestWorld } from './env.js';

export const GOODBOOKS_300 = projectPath('test', 'fixtures', 'goodbooks-300.csv');
export const BX_SAMPLE = projectPath('test', 'fixtures', 'bx-sample.csv');
export const GOODBOOKS_HEADER =
  'book_id,goodreads_book_id,best_book_id,work_id,books_count,isbn,isbn13,authors,original_publication_year,original_title,title,language_code,average_rating,ratings_count,work_ratings_count,work_text_reviews_count,ratings_1,ratings_2,ratings_3,ratings_4,ratings_5,image_url,small_image_url';
export const BX_HEADER = 'ISBN,Book-Title,Book-Author,Year-Of-Publication,Book-Publisher';

const quiet = createLogger('silent');

export function importFile(world: TestWorld, source: 'goodbooks' | 'book-crossing', path: string): Promise<ImportReport> {
  return importCatalogue(source === 'goodbooks' ? goodbooks : bookCrossing, path, { db: world.db, cache: world.cache, log: quiet });
}

/** Writes CSV lines to a temporary file and returns its path. */
export async function csvFile(lines: string[]): Promise<string> {
  const path = join(tmpdir(), `bookmeta-${randomBytes(6).toString('hex')}.csv`);
  await writeFile(path, lines.join('\n') + '\n');
  return path;
}

/** The catalogue used by the API tests: 300 goodbooks rows and the Book-Crossing sample. */
export async function loadSampleCatalogue(world: TestWorld): Promise<void> {
  await importFile(world, 'goodbooks', GOODBOOKS_300);
  await importFile(world, 'book-crossing', BX_SAMPLE);
}

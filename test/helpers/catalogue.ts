import { mkdtempSync, rmSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { bookCrossing } from '../../loader/import/bookCrossing.js';
import { goodbooks } from '../../loader/import/goodbooks.js';
import { importCatalogue, type ImportReport } from '../../loader/import/importer.js';
import { createLogger } from '../../src/log.js';
import { projectPath } from '../../src/paths.js';
import { recordChanges } from '../../src/stores/postgres/changes.js';
import { withTransaction, type Pool } from '../../src/stores/postgres/pool.js';
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

// One folder per test process for the CSV files tests write, removed when the process exits.
let csvFolder: string | undefined;

/** Writes CSV lines to a temporary file and returns its path. */
export async function csvFile(lines: string[]): Promise<string> {
  if (csvFolder === undefined) {
    const folder = mkdtempSync(join(tmpdir(), 'bookmeta-csv-'));
    process.once('exit', () => rmSync(folder, { recursive: true, force: true }));
    csvFolder = folder;
  }
  const path = join(csvFolder, `${randomBytes(6).toString('hex')}.csv`);
  await writeFile(path, lines.join('\n') + '\n');
  return path;
}

/** The catalogue used by the API tests: 300 goodbooks rows and the Book-Crossing sample. */
export async function loadSampleCatalogue(world: TestWorld): Promise<void> {
  await importFile(world, 'goodbooks', GOODBOOKS_300);
  await importFile(world, 'book-crossing', BX_SAMPLE);
}

export interface LiveBook {
  id: string;
  title: string;
  work_id: string;
  isbn_13: string | null;
}

interface LiveBookFilter {
  offset?: number;
  /** Only books with an ISBN. */
  withIsbn?: boolean;
  /** Leaves out books whose title contains this text (books other tests of the file read). */
  titleWithout?: string;
}

/** Live books (not merged away) in id order: tests that change the catalogue take each their own slice by `offset`. */
export function liveBooks(
  db: Pool,
  limit: number,
  filter: LiveBookFilter & { withIsbn: true },
): Promise<(LiveBook & { isbn_13: string })[]>;
export function liveBooks(db: Pool, limit: number, filter?: LiveBookFilter): Promise<LiveBook[]>;
export async function liveBooks(
  db: Pool,
  limit: number,
  { offset = 0, withIsbn = false, titleWithout }: LiveBookFilter = {},
): Promise<LiveBook[]> {
  const { rows } = await db.query<LiveBook>(
    `select public_id(b.id) as id, b.title, public_id(b.work_id) as work_id, b.isbn_13 from books b
      where b.merged_into is null and ($3::boolean is false or b.isbn_13 is not null) and ($4::text is null or strpos(b.title, $4) = 0)
      order by b.id limit $1 offset $2`,
    [limit, offset, withIsbn, titleWithout ?? null],
  );
  return rows;
}

export const liveBookIds = async (db: Pool, limit: number, offset = 0): Promise<string[]> =>
  (await liveBooks(db, limit, { offset })).map((book) => book.id);

/** Retitles books in one transaction and records their changes in the sequence, as a write of the service does. */
export async function retitle(db: Pool, bookIds: readonly string[], title: (id: string) => string): Promise<void> {
  await withTransaction(db, async (client) => {
    for (const id of bookIds)
      await client.query('update books set title = $2, updated_at = now() where id = entity_key($1)', [id, title(id)]);
    await recordChanges(
      client,
      bookIds.map((id) => ({ entity: 'book' as const, id, operation: 'update' as const })),
    );
  });
}

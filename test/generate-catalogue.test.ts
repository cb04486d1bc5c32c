import { execFile } from 'node:child_process';
import { Writable } from 'node:stream';
import { promisify } from 'node:util';

import test from 'ava';
import { parse } from 'csv-parse/sync';

import { generateCatalogue, GOODBOOKS_HEADER } from '../scripts/dev/generate-catalogue.js';
import { parseIsbn, recoverGoodbooksIsbn } from '../src/domain/isbn.js';
import { splitAuthorList } from '../src/domain/names.js';
import { splitTitle } from '../src/domain/titles.js';

// The first line of goodbooks-10k books.csv, byte for byte.
const GOODBOOKS_HEADER_LINE =
  'book_id,goodreads_book_id,best_book_id,work_id,books_count,isbn,isbn13,authors,original_publication_year,' +
  'original_title,title,language_code,average_rating,ratings_count,work_ratings_count,work_text_reviews_count,' +
  'ratings_1,ratings_2,ratings_3,ratings_4,ratings_5,image_url,small_image_url';

/** A writable that keeps what it is given, optionally slowly, and records how much it ever held buffered. */
class CollectingWritable extends Writable {
  readonly chunks: Buffer[] = [];
  peakBuffered = 0;

  constructor(options: { highWaterMark?: number; slow?: boolean } = {}) {
    super({ highWaterMark: options.highWaterMark ?? 16 * 1024 });
    this.slow = options.slow ?? false;
  }

  private readonly slow: boolean;

  override _write(chunk: Buffer, _encoding: BufferEncoding, done: (error?: Error | null) => void): void {
    this.peakBuffered = Math.max(this.peakBuffered, this.writableLength);
    this.chunks.push(chunk);
    if (this.slow) setImmediate(done);
    else done();
  }

  text(): string {
    return Buffer.concat(this.chunks).toString('utf8');
  }
}

async function catalogueText(count: number, seed: number): Promise<string> {
  const output = new CollectingWritable();
  await generateCatalogue({ count, seed }, output);
  return output.text();
}

type Row = Record<(typeof GOODBOOKS_HEADER)[number], string>;

function rowsOf(csv: string): Row[] {
  return parse<Row>(csv, { columns: true }); // throws on a row with the wrong number of fields
}

// One shared sample: parsing 20,000 rows once keeps the suite fast.
const sample = catalogueText(20_000, 42).then((text) => ({ text, rows: rowsOf(text) }));

test('the header is the goodbooks header', async (t) => {
  const { text } = await sample;
  t.is(text.slice(0, text.indexOf('\n')), GOODBOOKS_HEADER_LINE);
});

test('the same seed gives the same bytes', async (t) => {
  const [first, second] = await Promise.all([catalogueText(3_000, 7), catalogueText(3_000, 7)]);
  t.is(first, second);
});

test('different seeds give different catalogues', async (t) => {
  t.not(await catalogueText(100, 1), await catalogueText(100, 2));
});

test('every row parses as CSV into the 23 goodbooks columns', async (t) => {
  const { rows } = await sample;
  t.is(rows.length, 20_000);
  for (const row of rows) t.is(Object.keys(row).length, GOODBOOKS_HEADER.length);
  t.true(
    rows.some((row) => row.title.includes('"')),
    'some titles exercise quote escaping',
  );
  t.true(
    rows.some((row) => row.title.includes(',')),
    'some titles exercise comma quoting',
  );
});

test('every ISBN-10 is valid and its ISBN-13 matches', async (t) => {
  const { rows } = await sample;
  for (const row of rows) {
    const isbn = parseIsbn(row.isbn);
    if (isbn === null || isbn.isbn13 !== row.isbn13 || row.isbn.length !== 10) {
      t.fail(`book ${row.book_id}: ${row.isbn} / ${row.isbn13}`);
      return;
    }
  }
  t.pass();
});

test('the clean ISBN columns are read by the goodbooks importer without repair', async (t) => {
  const { rows } = await sample;
  const row = rows[0];
  if (row === undefined) return t.fail('no rows');
  t.like(recoverGoodbooksIsbn(row.isbn, row.isbn13), { repaired: false, problem: null });
});

test('ISBNs, Goodreads ids and work ids are unique', async (t) => {
  const { rows } = await sample;
  for (const column of ['isbn', 'isbn13', 'goodreads_book_id', 'work_id', 'book_id'] as const) {
    t.is(new Set(rows.map((row) => row[column])).size, rows.length, column);
  }
});

test('ratings are consistent: the stars sum to the work count and average to the average', async (t) => {
  const { rows } = await sample;
  for (const row of rows) {
    const stars = [row.ratings_1, row.ratings_2, row.ratings_3, row.ratings_4, row.ratings_5].map(Number);
    const total = stars.reduce((sum, n) => sum + n, 0);
    const average = stars.reduce((sum, n, star) => sum + n * (star + 1), 0) / total;
    const written = Number(row.average_rating);
    if (total !== Number(row.work_ratings_count) || Math.abs(average - written) > 0.005 || written < 2.5 || written > 4.8) {
      t.fail(`book ${row.book_id}: ${JSON.stringify(row)}`);
      return;
    }
    if (Number(row.ratings_count) > total) t.fail(`book ${row.book_id}: ratings_count above work_ratings_count`);
  }
  t.pass();
});

test('books have one to three authors, and a few authors write many books', async (t) => {
  const { rows } = await sample;
  const booksByFirstAuthor = new Map<string, number>();
  for (const row of rows) {
    const authors = splitAuthorList(row.authors);
    t.true(authors.length >= 1 && authors.length <= 3, row.authors);
    const first = authors[0] ?? '';
    booksByFirstAuthor.set(first, (booksByFirstAuthor.get(first) ?? 0) + 1);
  }
  const counts = [...booksByFirstAuthor.values()].sort((a, b) => b - a);
  t.true((counts[0] ?? 0) >= 50, `the most prolific author has ${counts[0]} books`);
  t.true(counts.filter((n) => n === 1).length > counts.length / 3, 'many authors have a single book');
});

test('about 30% of titles carry a goodbooks series suffix', async (t) => {
  const { rows } = await sample;
  const inSeries = rows.filter((row) => splitTitle(row.title).series !== null).length / rows.length;
  t.true(inSeries > 0.27 && inSeries < 0.33, `share in series: ${inSeries}`);
});

test('years lie between 1850 and 2025 and lean recent', async (t) => {
  const { rows } = await sample;
  const years = rows
    .map((row) => row.original_publication_year)
    .filter((year) => year !== '')
    .map(Number);
  t.true(years.every((year) => Number.isInteger(year) && year >= 1850 && year <= 2025));
  t.true(years.filter((year) => year >= 1990).length > years.length / 2);
});

test('most books are in English', async (t) => {
  const { rows } = await sample;
  const english = rows.filter((row) => row.language_code.startsWith('en')).length;
  t.true(english > rows.length * 0.8);
});

test('a slow output is never overfilled: the generator waits for it to drain', async (t) => {
  const output = new CollectingWritable({ highWaterMark: 1024, slow: true });
  const summary = await generateCatalogue({ count: 20_000, seed: 3 }, output);
  t.is(summary.bytes, Buffer.concat(output.chunks).length);
  // One chunk of about 64 KiB may sit on top of a full buffer; ignoring back-pressure would queue megabytes.
  t.true(output.peakBuffered < 512 * 1024, `peak buffered: ${output.peakBuffered} bytes`);
});

test('a failing output stops the generator with its error', async (t) => {
  const failing = new Writable({
    write(_chunk, _encoding, done) {
      done(new Error('disk full'));
    },
  });
  await t.throwsAsync(generateCatalogue({ count: 100_000, seed: 1 }, failing), { message: 'disk full' });
});

test('an output destroyed midway stops the generator instead of hanging', async (t) => {
  const closing = new Writable({
    highWaterMark: 1024,
    write() {
      this.destroy(); // closes without an error and never calls back
    },
  });
  await t.throwsAsync(generateCatalogue({ count: 100_000, seed: 1 }, closing), {
    message: 'the output closed before the catalogue was complete',
  });
});

test('a count of zero writes the header alone', async (t) => {
  t.is(await catalogueText(0, 1), `${GOODBOOKS_HEADER_LINE}\n`);
});

test('a count that is not a non-negative integer is refused', async (t) => {
  await t.throwsAsync(generateCatalogue({ count: -1, seed: 1 }, new CollectingWritable()), { instanceOf: RangeError });
  await t.throwsAsync(generateCatalogue({ count: 1.5, seed: 1 }, new CollectingWritable()), { instanceOf: RangeError });
});

test('run as a script, it writes the same catalogue to stdout', async (t) => {
  const { stdout } = await promisify(execFile)(
    process.execPath,
    ['--import', 'tsx', 'scripts/dev/generate-catalogue.ts', '--count', '50', '--seed', '9'],
    { encoding: 'utf8' },
  );
  t.is(stdout, await catalogueText(50, 9));
});

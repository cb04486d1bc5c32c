// A synthetic catalogue in the goodbooks-10k books.csv format, for scale tests of importers,
// indexing and search. Deterministic for a seed, streamed with back-pressure in constant memory.
//
//   node --import tsx scripts/dev/generate-catalogue.ts --count 1000000 --seed 42 [--out FILE]

import { createWriteStream } from 'node:fs';
import type { Writable } from 'node:stream';
import { finished } from 'node:stream/promises';
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';

import { isbn10To13 } from '../../src/domain/isbn.js';
import {
  AffinePermutation,
  AuthorPool,
  Random,
  bookTitle,
  drained,
  hash32,
  integerOption,
  isbn10FromBody,
  seriesSuffix,
} from './synthetic.js';

/** The header of goodbooks-10k books.csv, in its column order. */
export const GOODBOOKS_HEADER = [
  'book_id',
  'goodreads_book_id',
  'best_book_id',
  'work_id',
  'books_count',
  'isbn',
  'isbn13',
  'authors',
  'original_publication_year',
  'original_title',
  'title',
  'language_code',
  'average_rating',
  'ratings_count',
  'work_ratings_count',
  'work_text_reviews_count',
  'ratings_1',
  'ratings_2',
  'ratings_3',
  'ratings_4',
  'ratings_5',
  'image_url',
  'small_image_url',
] as const;

export interface CatalogueOptions {
  /** How many books (rows after the header). */
  count: number;
  /** Any integer; the same seed always gives the same bytes. */
  seed: number;
}

export interface CatalogueSummary {
  rows: number;
  bytes: number;
}

// Ids are drawn without repetition from spaces this large, which bounds the row count.
const ID_SPACE = 100_000_000;
const ISBN_BODY_SPACE = 1_000_000_000; // the nine digits before an ISBN-10 check digit
export const MAX_COUNT = ID_SPACE;

const CHUNK_CHARACTERS = 1 << 16; // rows are written in chunks of about 64 KiB

/**
 * Writes the header and `options.count` rows to `writable`, waiting whenever it asks to drain.
 * The stream is left open: whoever opened it ends it.
 */
export async function generateCatalogue(options: CatalogueOptions, writable: Writable): Promise<CatalogueSummary> {
  const { count, seed } = options;
  if (!Number.isSafeInteger(count) || count < 0 || count > MAX_COUNT) {
    throw new RangeError(`count must be an integer from 0 to ${MAX_COUNT}, got ${count}`);
  }
  if (!Number.isSafeInteger(seed)) throw new RangeError(`seed must be an integer, got ${seed}`);

  // A write after the stream failed would be lost silently; remember the failure and stop.
  let failure: Error | null = null;
  const onError = (error: Error): void => {
    failure ??= error;
  };
  writable.on('error', onError);
  let bytes = 0;
  const throwIfFailed = (): void => {
    if (failure !== null) throw failure;
  };
  const write = async (text: string): Promise<void> => {
    throwIfFailed();
    bytes += Buffer.byteLength(text);
    if (!writable.write(text)) await drained(writable);
  };

  try {
    const catalogue = new Catalogue(count, seed);
    let chunk = GOODBOOKS_HEADER.join(',') + '\n';
    for (let index = 0; index < count; index++) {
      chunk += catalogue.row(index);
      if (chunk.length >= CHUNK_CHARACTERS) {
        await write(chunk);
        chunk = '';
      }
    }
    await write(chunk);
    throwIfFailed();
  } finally {
    writable.off('error', onError);
  }
  return { rows: count, bytes };
}

// ---------------------------------------------------------------------------------------------
// Rows

/** Everything that stays fixed across rows: the random stream, id permutations, author pool. */
class Catalogue {
  private readonly random: Random;
  private readonly goodreadsIds: AffinePermutation;
  private readonly workIds: AffinePermutation;
  private readonly isbnBodies: AffinePermutation;
  private readonly authors: AuthorPool;

  constructor(count: number, seed: number) {
    this.random = new Random(hash32(seed, 0));
    this.goodreadsIds = new AffinePermutation(ID_SPACE, seed, 1);
    this.workIds = new AffinePermutation(ID_SPACE, seed, 2);
    this.isbnBodies = new AffinePermutation(ISBN_BODY_SPACE, seed, 3);
    // Half as many authors as books: as in goodbooks, about half the authors have a single book,
    // while the busiest writes about half a percent of all books (James Patterson: 1%).
    this.authors = new AuthorPool(Math.max(50, Math.ceil(count / 2)), seed);
  }

  /** One CSV line, newline included. Rows must be asked for in order: ids advance with each call. */
  row(index: number): string {
    const random = this.random;
    const goodreadsId = 1 + this.goodreadsIds.next();
    const bestBookId = random.next() < 0.975 ? goodreadsId : 1 + random.below(ID_SPACE);
    const workId = 1 + this.workIds.next();
    const isbn10 = isbn10FromBody(this.isbnBodies.next());

    const authorRanks = this.authorRanksOfBook();
    const mainAuthor = authorRanks[0] ?? 0;
    const authors = authorRanks.map((rank) => this.authors.name(rank));
    const title = bookTitle(random, this.authors.surname(mainAuthor));
    const inSeries = random.next() < 0.3;
    const series = inSeries ? seriesSuffix(random, this.authors.seriesName(mainAuthor, random.next() < 0.8 ? 0 : 1)) : '';
    const originalTitle = random.next() < 0.06 ? '' : title;
    const year = random.next() < 0.002 ? '' : `${2025 - Math.floor(176 * random.next() ** 3)}.0`;

    const ratings = ratingsOfBook(random);
    const booksCount = Math.min(3500, 1 + Math.floor(2 * random.next() * Math.sqrt(ratings.total / 50)));
    const ratingsCount = Math.round(ratings.total * (0.85 + 0.15 * random.next()));
    const textReviewsCount = Math.round(ratings.total * (0.01 + 0.07 * random.next()));
    const [imageUrl, smallImageUrl] = coverUrls(random, goodreadsId);

    return (
      `${index + 1},${goodreadsId},${bestBookId},${workId},${booksCount},${isbn10},${isbn10To13(isbn10)},` +
      `${csvField(authors.join(', '))},${year},${csvField(originalTitle)},${csvField(title + series)},` +
      `${random.pick(LANGUAGES)},${formatRating(ratings.average)},${ratingsCount},${ratings.total},${textReviewsCount},` +
      `${ratings.counts.join(',')},${imageUrl},${smallImageUrl}\n`
    );
  }

  /** One to three distinct authors: the first by popularity, co-authors, illustrators and translators from anywhere. */
  private authorRanksOfBook(): number[] {
    const random = this.random;
    const ranks = [this.authors.popularRank(random.next())];
    const contributors = random.next() < 0.8 ? 0 : random.next() < 0.75 ? 1 : 2;
    for (let i = 0; i < contributors; i++) {
      const rank = random.below(this.authors.size);
      if (!ranks.includes(rank)) ranks.push(rank);
    }
    return ranks;
  }
}

/** A field quoted when it must be (RFC 4180): commas, quotes or line breaks; quotes doubled. */
function csvField(text: string): string {
  return /[",\r\n]/.test(text) ? `"${text.replaceAll('"', '""')}"` : text;
}

/** As goodbooks writes it (a Python float): "4.34", "4.1", "4.0". */
function formatRating(average: number): string {
  const fixed = average.toFixed(2);
  return fixed.endsWith('0') ? fixed.slice(0, -1) : fixed;
}

const NO_PHOTO_URL = 'https://s.gr-assets.com/assets/nophoto/book/111x148-bcc042a9c91a29c1d680899eff700a03.png';
const NO_PHOTO_SMALL_URL = 'https://s.gr-assets.com/assets/nophoto/book/50x75-a91bf249278a81aabab721ef782c4a74.png';

/** A third of goodbooks rows have Goodreads' "no photo" image; the rest a timestamped cover. */
function coverUrls(random: Random, goodreadsId: number): [string, string] {
  if (random.next() < 0.33) return [NO_PHOTO_URL, NO_PHOTO_SMALL_URL];
  const uploaded = 1_150_000_000 + random.below(360_000_000);
  const base = `https://images.gr-assets.com/books/${uploaded}`;
  return [`${base}m/${goodreadsId}.jpg`, `${base}s/${goodreadsId}.jpg`];
}

// ---------------------------------------------------------------------------------------------
// Ratings

interface Ratings {
  total: number;
  /** One-star to five-star counts, summing to `total`. */
  counts: number[];
  /** Computed from the counts, as in goodbooks, so the row is self-consistent. */
  average: number;
}

/**
 * Popularity is heavy-tailed (Pareto, α = 1.1): most books have a few hundred ratings, a few
 * millions. The star shares come from a typical Goodreads shape tilted towards a drawn mean.
 */
function ratingsOfBook(random: Random): Ratings {
  const total = Math.min(5_000_000, Math.floor(100 / (1 - random.next()) ** (1 / 1.1)));
  const bell = random.next() + random.next() + random.next() - 1.5; // Irwin–Hall: bell-shaped on [-1.5, 1.5]
  const mean = Math.min(MAX_MEAN, Math.max(MIN_MEAN, 3.85 + 0.8 * bell));
  const shares = STAR_SHARES_BY_MEAN[Math.round((mean - MIN_MEAN) * 100)] ?? TYPICAL_STAR_SHARES;

  // Largest remainder rounding: floors first, then the missing few go to the largest fractions.
  const counts = [0, 0, 0, 0, 0];
  const remainders = [0, 0, 0, 0, 0];
  let missing = total;
  for (let star = 0; star < 5; star++) {
    const exact = (shares[star] ?? 0) * total;
    counts[star] = Math.floor(exact);
    remainders[star] = exact - Math.floor(exact);
    missing -= Math.floor(exact);
  }
  for (; missing > 0; missing--) {
    let largest = 0;
    for (let star = 1; star < 5; star++) if ((remainders[star] ?? 0) > (remainders[largest] ?? 0)) largest = star;
    counts[largest] = (counts[largest] ?? 0) + 1;
    remainders[largest] = -1;
  }

  let starSum = 0;
  for (let star = 0; star < 5; star++) starSum += (star + 1) * (counts[star] ?? 0);
  return { total, counts, average: starSum / total };
}

// Means stay inside 2.6–4.7 so that the average of rounded counts stays inside 2.5–4.8.
const MIN_MEAN = 2.6;
const MAX_MEAN = 4.7;
const TYPICAL_STAR_SHARES = [0.03, 0.06, 0.2, 0.35, 0.36];

/** Star shares for each mean from MIN_MEAN to MAX_MEAN in steps of 0.01, computed once. */
const STAR_SHARES_BY_MEAN: number[][] = Array.from({ length: Math.round((MAX_MEAN - MIN_MEAN) * 100) + 1 }, (_, step) =>
  tiltedShares(MIN_MEAN + step / 100),
);

/** The typical shares reweighted by e^(t·stars), with t found by bisection so the mean comes out right. */
function tiltedShares(mean: number): number[] {
  const tilt = (t: number): number[] => {
    const weights = TYPICAL_STAR_SHARES.map((share, star) => share * Math.exp(t * (star + 1)));
    const sum = weights.reduce((a, b) => a + b, 0);
    return weights.map((weight) => weight / sum);
  };
  const meanOf = (shares: number[]): number => shares.reduce((sum, share, star) => sum + share * (star + 1), 0);
  let low = -20;
  let high = 20;
  for (let i = 0; i < 60; i++) {
    const middle = (low + high) / 2;
    if (meanOf(tilt(middle)) < mean) low = middle;
    else high = middle;
  }
  return tilt((low + high) / 2);
}

// ---------------------------------------------------------------------------------------------
// Languages

// Weighted like goodbooks: mostly eng and en-US, a tenth empty, a sprinkle of other languages.
const LANGUAGES: readonly string[] = [
  ...Array<string>(63).fill('eng'),
  ...Array<string>(21).fill('en-US'),
  ...Array<string>(10).fill(''),
  ...Array<string>(3).fill('en-GB'),
  'en-CA',
  'ara',
  'fre',
  'spa',
  'ger',
  'ind',
  'jpn',
  'por',
  'ita',
];

// ---------------------------------------------------------------------------------------------
// Command line

const USAGE = 'usage: node --import tsx scripts/dev/generate-catalogue.ts --count N [--seed S] [--out FILE]';

async function main(argv: string[]): Promise<void> {
  const { values } = parseArgs({
    args: argv,
    options: {
      count: { type: 'string' },
      seed: { type: 'string' },
      out: { type: 'string' },
      help: { type: 'boolean', short: 'h' },
    },
    strict: true,
  });
  if (values.help) {
    process.stdout.write(`${USAGE}\n`);
    return;
  }
  const options = { count: integerOption('count', values.count, USAGE), seed: integerOption('seed', values.seed, USAGE, 1) };
  if (values.out === undefined) {
    await generateCatalogue(options, process.stdout);
    return;
  }
  // A buffer of several chunks lets generating the next chunk overlap writing the last.
  const file = createWriteStream(values.out, { highWaterMark: 1 << 20 });
  await generateCatalogue(options, file);
  file.end();
  await finished(file);
}

function isEntryPoint(): boolean {
  const script = process.argv[1];
  return script !== undefined && import.meta.url === pathToFileURL(script).href;
}

if (isEntryPoint()) {
  main(process.argv.slice(2)).catch((error: unknown) => {
    // A closed pipe (`| head`) is the reader saying it has enough, not a failure.
    if ((error as NodeJS.ErrnoException | null)?.code === 'EPIPE') return;
    process.stderr.write(`${error instanceof Error ? error.message : String(error)}\n`);
    process.exitCode = 1;
  });
}

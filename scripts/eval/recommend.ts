// Quality of GET /v1/books/:id/recommendations, measured on Book-Crossing readers: hold out one book
// each reader liked, derive "also liked" from the other ratings (the indexer's own derivation, run by
// the ratings import), then ask for recommendations from another book the reader liked and see
// whether the held-out book (any edition of its work) is among the first 10.
//
//   node --import tsx scripts/eval/recommend.ts [--fresh] [--seed 7] [--readers 1500] [--seeds 3] [--verbose]
//
// Readers: those with at least 5 liked ratings (rating >= 6, as the derivation counts "liked").
// The recommender is per book, so a reader's list is the recommendations of their `--seeds`
// best-rated remaining liked books, fused by reciprocal rank; the list of the best-rated book alone
// is reported too. Every list leaves out books the reader already rated (the recommender is asked
// for 50 per book, filtered, then cut to 10). Baseline: the books most liked in the training
// ratings, minus those the reader rated.
// The catalogue (goodbooks-10k and BX-Books, training ratings) lives in `bookmeta_eval_recommend`
// and `bookmeta-eval-recommend-*`, built on the first run or with --fresh (keep the seed to reuse it).
//
// Also counted: recommendations in the first 10 of a list that are the seed's work, a likely twin of
// it (domain/similarity's likelySameWork), or a boxset or omnibus of its series or author.
//
// Targets: hit rate at 10 at least twice the baseline's (2.5 times from a single book); no
// recommendation that is or holds the seed's work.

import { writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { bookCrossing } from '../../loader/import/bookCrossing.js';
import { csvRows } from '../../loader/import/csvRows.js';
import { goodbooks } from '../../loader/import/goodbooks.js';
import { importCatalogue } from '../../loader/import/importer.js';
import { importRatings } from '../../loader/import/ratings.js';
import { parseIsbn } from '../../src/domain/isbn.js';
import type { BookRecord } from '../../src/domain/records.js';
import { likelySameWork } from '../../src/domain/similarity.js';
import { foldText } from '../../src/domain/text.js';
import { createLogger } from '../../src/log.js';
import { projectPath } from '../../src/paths.js';
import { recommendFor } from '../../src/services/recommend.js';
import { booksByIds } from '../../src/stores/postgres/catalogue.js';
import { booksByIsbn13 } from '../../src/stores/postgres/ratings.js';
import { Random } from '../dev/synthetic.js';
import { openEvalWorld } from './lib/evalWorld.js';
import { percentile } from '../lib/percentile.js';

const { values: options } = parseArgs({
  options: {
    fresh: { type: 'boolean', default: false },
    seed: { type: 'string', default: '7' },
    readers: { type: 'string', default: '1500' },
    seeds: { type: 'string', default: '3' },
    verbose: { type: 'boolean', default: false },
  },
});
const rng = new Random(Number(options.seed));
const random = (): number => rng.next();

const LIKED = 6; // deriveAlsoLiked's default minRating
const MIN_LIKED = 5;
const AT = 10;
const FUSION_K = 10;
const RATINGS = projectPath('data', 'book-crossing', 'BX-Ratings.csv');

interface Rating {
  user: number;
  isbn13: string;
  rating: number;
  /** The CSV line as written, to write the training file. */
  text: string;
}

async function readRatings(): Promise<Rating[]> {
  const ratings: Rating[] = [];
  for await (const { record } of csvRows(RATINGS, () => undefined)) {
    const isbn = parseIsbn(record.ISBN ?? '');
    const user = Number(record['User-ID']);
    const rating = Number(record['Book-Rating']);
    if (!isbn || !Number.isInteger(user) || !Number.isInteger(rating)) continue;
    ratings.push({ user, isbn13: isbn.isbn13, rating, text: `${user},${isbn.isbn13},${rating}` });
  }
  return ratings;
}

/** One liked rating per reader with at least MIN_LIKED of them, chosen at random. */
function holdOut(ratings: Rating[]): Map<number, Rating> {
  const liked = new Map<number, Rating[]>();
  for (const rating of ratings) if (rating.rating >= LIKED) liked.set(rating.user, [...(liked.get(rating.user) ?? []), rating]);
  const heldOut = new Map<number, Rating>();
  for (const [user, list] of liked) if (list.length >= MIN_LIKED) heldOut.set(user, list[Math.floor(random() * list.length)]!);
  return heldOut;
}

const GATHERINGS = new Set(['boxset', 'omnibus']);
const credit = (book: BookRecord) =>
  `${book.title} / ${book.authors.map((author) => author.name).join(', ')} (${book.kind}${book.series ? `, ${book.series} #${book.series_number ?? '?'}` : ''})`;

/** The evaluation's own judgement of a recommendation that hands the reader the seed again: its work, a twin, or a set that holds it or may. */
function isOrHoldsSeed(seed: BookRecord, book: BookRecord): boolean {
  if (book.work_id === seed.work_id || likelySameWork(seed, book)) return true;
  if (!GATHERINGS.has(book.kind)) return false;
  const sameSeries = seed.series !== null && book.series !== null && foldText(seed.series) === foldText(book.series);
  const sharedAuthor = book.authors.some((author) => seed.authors.some((other) => other.id === author.id));
  return sameSeries || sharedAuthor;
}

async function main(): Promise<void> {
  const ratings = await readRatings();
  const heldOut = holdOut(ratings);
  const held = new Set(heldOut.values());
  const training = ratings.filter((rating) => !held.has(rating));

  const world = await openEvalWorld('bookmeta_eval_recommend', options.fresh, async (db) => {
    const log = createLogger('silent');
    await importCatalogue(goodbooks, projectPath('data', 'goodbooks-10k', 'books.csv'), { db, cache: null, log });
    await importCatalogue(bookCrossing, projectPath('data', 'book-crossing', 'BX-Books.csv'), { db, cache: null, log });
    const path = join(tmpdir(), `eval-recommend-ratings-${process.pid}.csv`);
    await writeFile(path, ['User-ID,ISBN,Book-Rating', ...training.map((rating) => rating.text)].join('\n') + '\n');
    await importRatings(path, { db, log });
  });
  const { services } = world;
  try {
    const books = await booksByIsbn13(services.db, [...new Set(ratings.map((rating) => rating.isbn13))]);
    const { rows: workRows } = await services.db.query<{ id: string; work_id: string }>(
      'select public_id(id) as id, public_id(work_id) as work_id from books where merged_into is null',
    );
    const workOf = new Map(workRows.map((row) => [row.id, row.work_id]));
    // The baseline: the works most liked in the training ratings.
    const { rows: likes } = await services.db.query<{ work_id: string; likes: number }>(
      `select public_id(b.work_id) as work_id, count(*)::int as likes from ratings r join books b on b.id = r.book_id where r.rating >= $1 group by b.work_id order by likes desc, b.work_id limit 500`,
      [LIKED],
    );
    const popularWorks = likes.map((row) => row.work_id);

    const trainingByUser = new Map<number, Rating[]>();
    for (const rating of training) trainingByUser.set(rating.user, [...(trainingByUser.get(rating.user) ?? []), rating]);
    const readers = [...heldOut.keys()].sort((a, b) => a - b);
    const sample = readers
      .map((user) => ({ user, order: random() }))
      .sort((a, b) => a.order - b.order)
      .slice(0, Number(options.readers));

    /** Recommendations from one book, as works the reader has not rated, best first; counts those that are or contain the seed's work. */
    const recommendedWorks = async (seed: string, seen: Set<string>): Promise<string[]> => {
      const started = performance.now();
      const answer = await recommendFor(services, seed, '50');
      latencies.push(performance.now() - started);
      if (!('record' in answer)) return [];
      const [seedBook] = await booksByIds(services.db, [seed]);
      const hits = answer.record.results.map((hit) => hit.book);
      if (seedBook !== undefined) {
        checked += Math.min(AT, hits.length);
        const holding = hits.slice(0, AT).filter((book) => isOrHoldsSeed(seedBook, book));
        violations += holding.length;
        if (options.verbose) for (const book of holding) console.log(`  from ${credit(seedBook)}: ${credit(book)}`);
      }
      return hits.map((book) => book.work_id).filter((work) => !seen.has(work));
    };

    let checked = 0;
    let violations = 0;
    let asked = 0;
    let singleHits = 0;
    let fusedHits = 0;
    let popularHits = 0;
    const latencies: number[] = [];
    for (const { user } of sample) {
      const target = books.get(heldOut.get(user)!.isbn13);
      const targetWork = target ? workOf.get(target) : undefined;
      const rated = trainingByUser.get(user) ?? [];
      const seen = new Set(rated.flatMap((rating) => workOf.get(books.get(rating.isbn13) ?? '') ?? []));
      const seeds = rated
        .filter((rating) => rating.rating >= LIKED)
        .sort((a, b) => b.rating - a.rating)
        .flatMap((rating) => books.get(rating.isbn13) ?? [])
        .slice(0, Number(options.seeds));
      if (!targetWork || seeds.length === 0 || seen.has(targetWork)) continue;
      asked += 1;

      // Reciprocal-rank fusion of the lists of each seed: a work several of them recommend rises.
      const fused = new Map<string, number>();
      for (const [index, seed] of seeds.entries()) {
        const works = await recommendedWorks(seed, seen);
        if (index === 0 && works.slice(0, AT).includes(targetWork)) singleHits += 1;
        works.forEach((work, rank) => fused.set(work, (fused.get(work) ?? 0) + 1 / (FUSION_K + rank)));
      }
      const recommended = [...fused.entries()]
        .sort((a, b) => b[1] - a[1])
        .map(([work]) => work)
        .slice(0, AT);
      if (recommended.includes(targetWork)) fusedHits += 1;
      const baseline = popularWorks.filter((work) => !seen.has(work)).slice(0, AT);
      if (baseline.includes(targetWork)) popularHits += 1;
    }

    const rate = (hits: number) => `${((100 * hits) / Math.max(asked, 1)).toFixed(2)}% (${hits})`;
    const ratio = (hits: number) => `${(hits / Math.max(popularHits, 1)).toFixed(2)}x`;
    console.log(`recommendation evaluation (seed ${options.seed}): ${asked} readers, one liked book held out each`);
    console.log(`hit rate @${AT}, most liked books (baseline):          ${rate(popularHits)}`);
    console.log(
      `hit rate @${AT}, recommendations of the reader's ${options.seeds} best-rated books, fused: ${rate(fusedHits)}  ${ratio(fusedHits)} the baseline (target >= 2x)`,
    );
    console.log(
      `hit rate @${AT}, recommendations of their best-rated book alone:   ${rate(singleHits)}  ${ratio(singleHits)} the baseline`,
    );
    console.log(
      `recommendations (first ${AT} of each list) that are the seed's work, a likely twin of it, or a boxset or omnibus of its series or author: ${violations} of ${checked} (target 0)`,
    );
    console.log(
      `latency: p50 ${percentile(latencies, 50).toFixed(1)} ms, p95 ${percentile(latencies, 95).toFixed(1)} ms (in-process service calls, limit 50)`,
    );
  } finally {
    await world.close();
  }
}

await main();

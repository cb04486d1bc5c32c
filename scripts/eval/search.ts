// Quality of GET /v1/books/search for known-item queries: a reader who has one book in mind types
// its title, a few of its words with the author's surname, its series' name, or its author's name.
// The queries are generated from goodbooks-10k, and the book meant is decided as a reader would: the
// most-read book (goodbooks' ratings_count) that fits the query and is not a boxset, omnibus or
// companion. Run through the search service (not HTTP), ten results a query.
//
//   node --import tsx scripts/eval/search.ts [--fresh] [--seed 7] [--per-kind 250] [--distractors 200000] [--verbose]
//
// The kinds:
//  - title:        the title as readers know it (no series, no subtitle): "The Hunger Games";
//  - title_author: two content words of the title with the first author's surname: "hunger games collins";
//  - series:       a series name alone: "Harry Potter", meaning its most-read numbered volume (its
//                  first volume is right first too);
//  - author:       the first author's name alone: "Suzanne Collins", meaning their most-read book;
//  - apostrophe_split, _dropped, _kept: a title or, for a title without one, a first author's name that has an
//                  apostrophe, written as exports and OCR write it ("the handmaid s tale", "flannery o connor"),
//                  without it ("the handmaids tale") and with it, meaning what the title and author kinds mean.
//  - partial_extra: the title with a word no title has added, as people add a format ("the hunger games
//                  paperback"), meaning what the title kind means;
//  - partial_misspelt: the title with a content word's first letter mistyped, which typo tolerance does not
//                  repair ("the hunger gamez" is repaired, "the hunger fames" is another word, "the hunger xames"
//                  is neither), meaning what the title kind means;
//  - name_title:   a first author's name that is also a book's title, their own or a book about them
//                  ("Alexander Hamilton", Ron Chernow's biography), meaning the author's most-read book.
//  - set_whole, set_volume, set_series: a series that also exists as a set (several of its volumes in one
//                  book, a boxset, a companion) asked for by the whole's title when it is the series' name ("The
//                  Lord of the Rings", #1-3), by a volume's title ("The Two Towers") and by the series' name
//                  ("Harry Potter"). A volume's title (unless it is a series' name too) means that volume, and the
//                  series' name what the series kind means. The whole's title means the whole when readers read
//                  it as a book of its own (see READ_AS_ONE: The Lord of the Rings, The Chronicles of Narnia), else
//                  what the series kind means (A Song of Ice and Fire's omnibus, read by one in fifty of A Game of
//                  Thrones' readers). The series kind leaves out the names of wholes read as one: set_whole asks them.
// Right: the first result is an edition of the meant book's work. Reported per kind: right first,
// the mean reciprocal rank at 10, and over all queries the pairs of results in one top 10 that are
// one book split into two works (of one kind, nearly the same title, the same numbers in it, and a
// shared author: domain/similarity's likelySameWork).
// The catalogue (goodbooks-10k and BX-Books) lives in `bookmeta_eval_search` and
// `bookmeta-eval-search-*`, built on the first run or with --fresh (after a change to the import).
// With --distractors N, a generated Open Library catalogue of N editions (scripts/dev/generate-openlibrary.ts,
// with its readers' dumps, and the goodbooks titles as the famous books its study guides, summaries
// and namesakes take) is imported beside them, in `bookmeta_eval_search_olN`: the queries and the
// books they mean stay the real ones. The generated dumps are deleted once imported.
//
// Targets: right first for at least 95% of each kind; MRR@10 at least 0.97; no split pairs.

import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { bookCrossing } from '../../loader/import/bookCrossing.js';
import { goodbooks } from '../../loader/import/goodbooks.js';
import { importCatalogue } from '../../loader/import/importer.js';
import { importOpenLibrary } from '../../loader/import/openlibrary/import.js';
import { deriveWorkPopularity } from '../../loader/stores/postgres/readerSignals.js';
import { authorKey } from '../../src/domain/names.js';
import type { BookRecord } from '../../src/domain/records.js';
import { likelySameWork } from '../../src/domain/similarity.js';
import { foldText } from '../../src/domain/text.js';
import { splitTitle, titleKey } from '../../src/domain/titles.js';
import { createLogger } from '../../src/log.js';
import { searchBooks } from '../../src/services/search.js';
import { contentWords } from '../../src/stores/elasticsearch/search.js';
import { booksByIds } from '../../src/stores/postgres/catalogue.js';
import type { Pool } from '../../src/stores/postgres/pool.js';
import { Random } from '../dev/synthetic.js';
import { generateOpenLibrary } from '../dev/generate-openlibrary.js';
import { percentile } from '../lib/percentile.js';
import { openEvalWorld } from './lib/evalWorld.js';
import { BX_BOOKS, GOODBOOKS, readGoodbooks, type SourceBook } from './lib/sources.js';

const { values: options } = parseArgs({
  options: {
    fresh: { type: 'boolean', default: false },
    seed: { type: 'string', default: '7' },
    'per-kind': { type: 'string', default: '250' },
    distractors: { type: 'string', default: '0' },
    verbose: { type: 'boolean', default: false },
  },
});
const rng = new Random(Number(options.seed));
const AT = 10;

const KINDS = [
  'title',
  'title_author',
  'series',
  'author',
  'apostrophe_split',
  'apostrophe_dropped',
  'apostrophe_kept',
  'partial_extra',
  'partial_misspelt',
  'name_title',
  'set_whole',
  'set_volume',
  'set_series',
] as const;
type Kind = (typeof KINDS)[number];

/** A goodbooks row as the queries see it. */
interface Known {
  row: SourceBook;
  title: string;
  subtitle: string | null;
  key: string;
  series: string | null;
  /** titleKey() of the series: "The Chronicles of Narnia" and "Chronicles of Narnia" are one name. */
  seriesKey: string | null;
  seriesNumber: string | null;
  /** Folded surnames of the credited authors, first author first. */
  surnames: string[];
}

// A reader looking for one book does not mean a set of them or a book about them. The evaluation's own
// judgement, kept apart from the service's: a range of volumes, or such a word in the title (the
// book's own, not its series': "Homeland (The Dark Elf Trilogy #1)" is one book).
const NOT_ONE_BOOK =
  /\b(box(ed)?\s*sets?|boxset|collection|omnibus|trilogy|complete|books\s+\d|companion|guide|screenplay|coloring|page to screen|illustrated edition|set)\b/iu;
const isOneBook = (known: Known): boolean => !NOT_ONE_BOOK.test(known.title) && !/[-–,]/u.test(known.seriesNumber ?? '');

const surnameOf = (name: string): string => authorKey(name).split(' ').at(-1) ?? '';

function known(row: SourceBook): Known {
  const parts = splitTitle(row.rawTitle);
  return {
    row,
    title: parts.title,
    subtitle: parts.subtitle,
    key: titleKey(parts.title),
    series: parts.series,
    seriesKey: parts.series === null ? null : titleKey(parts.series),
    seriesNumber: parts.seriesNumber,
    surnames: row.authors.map(surnameOf),
  };
}

// A set of books sold or read apart, or a book about them: never the whole a series' name titles.
const SOLD_APART = /\b(box(ed)?\s*sets?|boxset|gift\s+set|companion|guide|screenplay|coloring|page to screen|illustrated edition)\b/iu;
// Several volumes in one book: a range of volumes, or such a word in its own title.
const isWhole = (known: Known): boolean =>
  !SOLD_APART.test(known.title) &&
  (/[-–,]/u.test(known.seriesNumber ?? '') || /\b(omnibus|trilogy|quartet|complete)\b/iu.test(known.title));
// A whole is a book of its own to readers, and its title means it, when it is read by at least one in
// READ_AS_ONE of its series' most-read volume's readers.
const READ_AS_ONE = 8;

/** The numbered single volumes of each series, by titleKey of its name. */
function volumesBySeries(books: readonly Known[]): Map<string, Known[]> {
  const volumes = new Map<string, Known[]>();
  for (const book of books) {
    if (book.seriesKey === null || book.seriesNumber === null || !isOneBook(book)) continue;
    volumes.set(book.seriesKey, [...(volumes.get(book.seriesKey) ?? []), book]);
  }
  return volumes;
}

/** The most-read of the books that fit, or null. */
const mostRead = (books: readonly Known[]): Known | null =>
  books.reduce<Known | null>((best, book) => (best === null || book.row.readers > best.row.readers ? book : best), null);

interface Query {
  kind: Kind;
  q: string;
  expected: Known;
  /** Another book that is right first too: a series' first volume, as well as its most-read one. */
  alsoRight: Known | null;
}

function shuffled<T>(items: readonly T[]): T[] {
  const copy = [...items];
  for (let i = copy.length - 1; i > 0; i--) {
    const j = rng.below(i + 1);
    [copy[i], copy[j]] = [copy[j]!, copy[i]!];
  }
  return copy;
}

/** Up to `count` distinct queries of one kind: each a sampled book's query and the book it means, among `among`. */
function queriesOf(
  kind: Kind,
  books: readonly Known[],
  count: number,
  make: (book: Known) => { q: string; fits: (other: Known) => boolean; alsoRight?: (other: Known) => boolean } | null,
  among: readonly Known[] = books,
): Query[] {
  const byQuery = new Map<string, Query>();
  for (const book of shuffled(books)) {
    if (byQuery.size >= count) break;
    const made = make(book);
    if (made === null || byQuery.has(foldText(made.q))) continue;
    const fitting = among.filter(made.fits);
    const expected = mostRead(fitting);
    const alsoRight = made.alsoRight === undefined ? null : mostRead(fitting.filter(made.alsoRight));
    if (expected !== null) byQuery.set(foldText(made.q), { kind, q: made.q, expected, alsoRight });
  }
  return [...byQuery.values()];
}

function generate(rows: readonly SourceBook[], perKind: number): Query[] {
  const books = rows.map(known).filter((book) => book.key !== '' && book.row.authors.length > 0);
  const single = books.filter(isOneBook);
  const titledNames = new Set(books.map((book) => authorKey(book.title)));
  const volumes = volumesBySeries(books);
  // Wholes titled as their series, no subtitle: "The Lord of the Rings (The Lord of the Rings, #1-3)", "The New York Trilogy".
  const wholes = books.filter((book) => book.subtitle === null && isWhole(book) && volumes.has(book.key));
  const readAsOne = (whole: Known): boolean => whole.row.readers * READ_AS_ONE >= (mostRead(volumes.get(whole.key)!)?.row.readers ?? 0);
  const namesWholeReadAsOne = new Set(wholes.filter(readAsOne).map((whole) => whole.key));
  // Series that also exist as a set: a book of them that is not one volume (a whole, a boxset, a companion), under
  // their series or titled with their name.
  const gathered = new Set(
    books
      .filter((book) => !isOneBook(book))
      .flatMap((book) => [book.seriesKey, ...[...volumes.keys()].filter((key) => book.key === key || book.key.startsWith(`${key} `))])
      .filter((key) => key !== null && volumes.has(key)),
  );
  const seriesQuery = (book: Known) => ({
    q: book.series!,
    fits: (other: Known) => other.seriesKey === book.seriesKey && other.seriesNumber !== null && isOneBook(other),
    alsoRight: (other: Known) => Number(other.seriesNumber) === 1,
  });
  const titleWords = (book: Known) =>
    titleKey(contentWords(book.title))
      .split(' ')
      .filter((word) => word.length >= 3);
  return [
    ...queriesOf('title', single, perKind, (book) => ({ q: book.title, fits: (other) => other.key === book.key })),
    ...queriesOf('title_author', single, perKind, (book) => {
      const words = titleWords(book);
      if (words.length === 0) return null;
      const start = rng.below(Math.max(1, words.length - 1));
      const picked = words.slice(start, start + 2);
      const surname = book.row.authors[0]!.replace(/\./gu, ' ').trim().split(/\s+/u).at(-1)!;
      return {
        q: `${picked.join(' ')} ${surname}`,
        fits: (other) => other.surnames.includes(surnameOf(surname)) && picked.every((word) => other.key.split(' ').includes(word)),
      };
    }),
    ...queriesOf('series', single, perKind, (book) => {
      if (book.series === null || book.seriesNumber === null) return null;
      // The name of a whole read as one means the whole: set_whole asks it.
      if (namesWholeReadAsOne.has(book.seriesKey!)) return null;
      const series = foldText(book.series);
      return {
        q: book.series,
        fits: (other) => other.series !== null && other.seriesNumber !== null && foldText(other.series) === series,
        alsoRight: (other) => Number(other.seriesNumber) === 1,
      };
    }),
    ...queriesOf('author', single, perKind, (book) => {
      const first = authorKey(book.row.authors[0]!);
      return { q: book.row.authors[0]!, fits: (other) => authorKey(other.row.authors[0]!) === first };
    }),
    ...apostropheKinds.flatMap(([kind, rewrite]) =>
      queriesOf(kind, single, perKind, (book) => {
        if (APOSTROPHE.test(book.title)) return { q: rewrite(book.title), fits: (other) => other.key === book.key };
        const name = book.row.authors[0]!;
        if (!APOSTROPHE.test(name)) return null;
        const first = authorKey(name);
        return { q: rewrite(name), fits: (other) => authorKey(other.row.authors[0]!) === first };
      }),
    ),
    ...queriesOf('partial_extra', single, perKind, (book) => ({
      q: `${book.title} ${EXTRA_WORDS[rng.below(EXTRA_WORDS.length)]!}`,
      fits: (other) => other.key === book.key,
    })),
    ...queriesOf('partial_misspelt', single, perKind, (book) => {
      const words = book.title.split(' ');
      const content = words.flatMap((word, at) => (/^\p{L}{4,}$/u.test(word) && !STOP_WORDS.has(word.toLowerCase()) ? [at] : []));
      if (content.length < 2) return null;
      const at = content[rng.below(content.length)]!;
      words[at] = mistypedFirstLetter(words[at]!);
      return { q: words.join(' '), fits: (other) => other.key === book.key };
    }),
    ...queriesOf('name_title', single, perKind, (book) => {
      const name = book.row.authors[0]!;
      const first = authorKey(name);
      if (!titledNames.has(first)) return null;
      return { q: name, fits: (other) => authorKey(other.row.authors[0]!) === first };
    }),
    // Last, so that the kinds above draw their queries as before (the series kind less the names of wholes read as one).
    ...queriesOf(
      'set_whole',
      wholes,
      perKind,
      (whole) =>
        readAsOne(whole)
          ? { q: whole.title, fits: (other) => other.key === whole.key && other.subtitle === null && isWhole(other) }
          : { ...seriesQuery(mostRead(volumes.get(whole.key)!)!), q: whole.title },
      books,
    ),
    ...queriesOf('set_volume', single, perKind, (book) =>
      // A title that is also a series' name ("Vampire Academy", #1) means what set_series means.
      book.seriesKey !== null && book.seriesNumber !== null && gathered.has(book.seriesKey) && !volumes.has(book.key)
        ? { q: book.title, fits: (other) => other.key === book.key && isOneBook(other) }
        : null,
    ),
    ...queriesOf('set_series', single, perKind, (book) =>
      book.seriesKey !== null && book.seriesNumber !== null && gathered.has(book.seriesKey) && !namesWholeReadAsOne.has(book.seriesKey)
        ? seriesQuery(book)
        : null,
    ),
  ];
}

const APOSTROPHE = /['’]/u;
// Words people add to a title that no title of the catalogue is about.
const EXTRA_WORDS = ['paperback', 'hardcover', 'ebook', 'audiobook', 'kindle', 'pdf'];
const STOP_WORDS = new Set(['the', 'and', 'with', 'from', 'into', 'that', 'this', 'their', 'there']);
// The next key of the keyboard, in place of the first letter: typo tolerance keeps the first letter.
const KEYBOARD = 'qwertyuiopasdfghjklzxcvbnm';
const mistypedFirstLetter = (word: string): string => {
  const at = KEYBOARD.indexOf(word[0]!.toLowerCase());
  const other = at < 0 ? 'x' : KEYBOARD[at === KEYBOARD.length - 1 ? at - 1 : at + 1]!;
  return other + word.slice(1);
};
const apostropheKinds: [Kind, (text: string) => string][] = [
  ['apostrophe_split', (text) => text.replace(/['’]/gu, ' ')],
  ['apostrophe_dropped', (text) => text.replace(/['’]/gu, '')],
  ['apostrophe_kept', (text) => text],
];

interface Outcome {
  query: Query;
  expectedBook: BookRecord;
  /** 1-based rank of the meant work in the first AT results, or null. */
  rank: number | null;
  results: BookRecord[];
  splitPairs: [BookRecord, BookRecord][];
  ms: number;
}

const pct = (part: number, whole: number): string => `${((100 * part) / Math.max(whole, 1)).toFixed(1)}%`;

// Volumes of one series differ in a number only ("Vol. 1", "Vol. 2"): those are different books.
const numbersIn = (title: string): string => (title.match(/\d+/gu) ?? []).join(' ');

function splitPairsIn(results: readonly BookRecord[]): [BookRecord, BookRecord][] {
  const pairs: [BookRecord, BookRecord][] = [];
  for (let i = 0; i < results.length; i++) {
    for (let j = i + 1; j < results.length; j++) {
      const [a, b] = [results[i]!, results[j]!];
      // A boxset, omnibus or companion is a work of its own, never the books it gathers.
      if (a.work_id !== b.work_id && a.kind === b.kind && numbersIn(a.title) === numbersIn(b.title) && likelySameWork(a, b))
        pairs.push([a, b]);
    }
  }
  return pairs;
}

/** A generated Open Library catalogue of `editions` editions and its readers, imported, its dumps deleted. */
async function importDistractors(db: Pool, rows: readonly SourceBook[], editions: number): Promise<void> {
  const famous = [...rows]
    .sort((a, b) => b.readers - a.readers)
    .map((row) => ({ title: splitTitle(row.rawTitle).title, author: row.authors[0] ?? '' }));
  const dir = await mkdtemp(join(tmpdir(), 'bookmeta-eval-ol-'));
  try {
    process.stderr.write(`generating ${editions} Open Library editions in ${dir}...\n`);
    const { files } = await generateOpenLibrary({ editions, seed: 42, famous }, dir);
    await importOpenLibrary([files.authors, files.works, files.editions, files.readingLog, files.ratings], {
      db,
      cache: null,
      log: createLogger('warn'),
    });
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

async function main(): Promise<void> {
  const rows = await readGoodbooks();
  const queries = generate(rows, Number(options['per-kind']));

  const distractors = Number(options.distractors);
  const world = await openEvalWorld(
    distractors > 0 ? `bookmeta_eval_search_ol${distractors}` : 'bookmeta_eval_search',
    options.fresh,
    async (db) => {
      const log = createLogger('silent');
      await importCatalogue(goodbooks, GOODBOOKS, { db, cache: null, log });
      await importCatalogue(bookCrossing, BX_BOOKS, { db, cache: null, log });
      if (distractors > 0) await importDistractors(db, rows, distractors);
      else await deriveWorkPopularity(db); // editions count alike with and without distractors
    },
  );
  const { services } = world;
  try {
    const { rows: live } = await services.db.query<{ id: string; isbn_13: string | null; source_key: string | null }>(
      'select public_id(id) as id, isbn_13, source_key from books where merged_into is null',
    );
    const bookOf = new Map(
      live.flatMap((row) => [
        ...(row.isbn_13 ? [[row.isbn_13, row.id] as const] : []),
        ...(row.source_key ? [[row.source_key, row.id] as const] : []),
      ]),
    );
    const idOf = (row: SourceBook) => bookOf.get(row.isbn13 ?? row.sourceKey ?? '');
    const expectedIds = [
      ...new Set(
        queries.flatMap((query) => [query.expected, ...(query.alsoRight ? [query.alsoRight] : [])].flatMap((book) => idOf(book.row) ?? [])),
      ),
    ];
    // In chunks: on a loaded machine one read of them all can outlast the request path's statement timeout.
    const expectedBooks = new Map<string, BookRecord>();
    for (let at = 0; at < expectedIds.length; at += 200) {
      for (const book of await booksByIds(services.db, expectedIds.slice(at, at + 200))) expectedBooks.set(book.id, book);
    }

    const outcomes: Outcome[] = [];
    for (const query of queries) {
      const expectedBook = expectedBooks.get(idOf(query.expected.row) ?? '');
      if (expectedBook === undefined) continue; // rejected by the importer
      const started = performance.now();
      const page = await searchBooks(services, { q: query.q, limit: String(AT) });
      const ms = performance.now() - started;
      const results = page.results.map((hit) => hit.book);
      const index = results.findIndex((book) => book.work_id === expectedBook.work_id);
      const alsoRight = query.alsoRight === null ? undefined : expectedBooks.get(idOf(query.alsoRight.row) ?? '');
      const rank = alsoRight !== undefined && results[0]?.work_id === alsoRight.work_id ? 1 : index < 0 ? null : index + 1;
      outcomes.push({ query, expectedBook, rank, results, splitPairs: splitPairsIn(results), ms });
    }

    console.log(
      `search evaluation (seed ${options.seed}, ${distractors > 0 ? `${distractors} generated Open Library editions beside the real books` : 'no distractors'}): ${outcomes.length} known-item queries, ${AT} results each`,
    );
    console.log('kind           queries  right first  MRR@10  first is the meant book split off its work');
    for (const kind of KINDS) {
      const ofKind = outcomes.filter((outcome) => outcome.query.kind === kind);
      const right = ofKind.filter((outcome) => outcome.rank === 1).length;
      const mrr = ofKind.reduce((sum, outcome) => sum + (outcome.rank === null ? 0 : 1 / outcome.rank), 0) / Math.max(ofKind.length, 1);
      const twin = ofKind.filter(
        (outcome) => outcome.rank !== 1 && outcome.results[0] !== undefined && likelySameWork(outcome.expectedBook, outcome.results[0]),
      ).length;
      console.log(
        `${kind.padEnd(14)} ${String(ofKind.length).padStart(7)}  ${pct(right, ofKind.length).padStart(11)}  ${mrr.toFixed(3).padStart(6)}  ${pct(twin, ofKind.length).padStart(6)}`,
      );
    }
    const all = outcomes.length;
    const mrrAll = outcomes.reduce((sum, outcome) => sum + (outcome.rank === null ? 0 : 1 / outcome.rank), 0) / Math.max(all, 1);
    console.log(
      `${'all'.padEnd(14)} ${String(all).padStart(7)}  ${pct(outcomes.filter((outcome) => outcome.rank === 1).length, all).padStart(11)}  ${mrrAll.toFixed(3).padStart(6)}`,
    );
    const withSplits = outcomes.filter((outcome) => outcome.splitPairs.length > 0);
    console.log(
      `split works: ${withSplits.reduce((sum, outcome) => sum + outcome.splitPairs.length, 0)} pairs of results that are one book in two works, in ${withSplits.length} of ${all} top ${AT}s (target 0)`,
    );
    const latencies = outcomes.map((outcome) => outcome.ms);
    console.log(
      `latency: p50 ${percentile(latencies, 50).toFixed(1)} ms, p95 ${percentile(latencies, 95).toFixed(1)} ms (in-process service calls, sequential)`,
    );

    if (options.verbose) {
      const show = (book: BookRecord) =>
        `${book.title}${book.series ? ` (${book.series} #${book.series_number ?? '?'})` : ''} / ${book.authors[0]?.name ?? '?'} [${book.ratings_count}]`;
      console.log('\nmisses:');
      for (const outcome of outcomes.filter((outcome) => outcome.rank !== 1)) {
        console.log(`  ${outcome.query.kind} "${outcome.query.q}": meant ${show(outcome.expectedBook)}, rank ${outcome.rank ?? '-'}`);
        for (const book of outcome.results.slice(0, 3)) console.log(`      ${show(book)}`);
      }
      console.log('\nsplit works:');
      const credit = (book: BookRecord) => `${book.title} / ${book.authors.map((author) => author.name).join(', ')} (${book.kind})`;
      for (const outcome of withSplits) {
        console.log(`  "${outcome.query.q}":`);
        for (const [a, b] of outcome.splitPairs) console.log(`      ${credit(a)}  ~  ${credit(b)}`);
      }
    }
  } finally {
    await world.close();
  }
}

await main();

// Synthetic Open Library dumps (authors, works and editions files in the monthly dumps' format), for
// scale runs of `bookmeta import openlibrary`. Deterministic for a seed, written in constant memory.
// Proportions follow the real dumps: about 0.7 works and 0.25 authors per edition, a third of the
// editions without an ISBN, works with many editions and authors with many works (skewed), a few
// percent redirects, some deletes, non-English titles, and the known defects (hyphenated and invalid
// ISBNs, both shapes of descriptions and author roles, repeated author keys, cover -1, broken lines).
// Beside them, the readers' dumps (reading log and ratings) with a Zipf-like popularity per work, and
// the collisions of the real catalogue: hundreds of works sharing a common title ("Poems", "Selected
// Stories"), and study guides, summaries, adaptations and same-titled books of famous works (the
// generator's own most popular ones, or those of --famous FILE: "title<TAB>author" lines, most
// famous first).
//
// With --changed FRACTION, next month's dumps of the same seed: that fraction of the records revised,
// redirected or deleted, and a few new ones (see NextMonth).
//
//   node --import tsx scripts/dev/generate-openlibrary.ts --editions 1000000 --seed 42 --out DIR [--famous FILE] [--changed 0.02]

import { createWriteStream } from 'node:fs';
import { mkdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Writable } from 'node:stream';
import { finished } from 'node:stream/promises';
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';

import { isbn10To13 } from '../../src/domain/isbn.js';
import { AuthorPool, Random, bookTitle, drained, hash32, integerOption, isbn10FromBody } from './synthetic.js';

export interface OpenLibraryOptions {
  editions: number;
  seed: number;
  /** Books whose titles the catalogue's companions and namesakes take, most famous first. */
  famous?: readonly FamousBook[];
  /**
   * Next month's dumps of the same seed: this fraction of the author, work and edition records is
   * revised (see NextMonth), and a tenth as many new records follow them. The other lines, the
   * readers' dumps included, are the same as this month's, byte for byte.
   */
  changed?: number;
}

export interface FamousBook {
  title: string;
  author: string;
}

const KINDS = ['authors', 'works', 'editions', 'readingLog', 'ratings'] as const;
type DumpKind = (typeof KINDS)[number];

export interface OpenLibrarySummary {
  files: Record<DumpKind, string>;
  lines: Record<DumpKind, number>;
}

export const MAX_EDITIONS = 50_000_000;
const CHUNK_CHARACTERS = 1 << 16;
// Keys of each kind start here, with room below for the keys of redirects and deletes.
const KEY_BASE = 10_000_000;
const REDIRECT_KEY_BASE = 200_000_000;
const DELETED_KEY_BASE = 300_000_000;
const LAST_MODIFIED = '2024-06-01T08:15:00.000000';

const LANGUAGES = [
  ...Array<string>(70).fill('eng'),
  'ger',
  'ger',
  'fre',
  'fre',
  'spa',
  'spa',
  'ita',
  'por',
  'rus',
  'jpn',
  'chi',
  'dut',
  'swe',
  'pol',
  'dan',
];
// Titles in other languages, by language code, for the editions that are translations.
const FOREIGN_TITLES: Record<string, readonly string[]> = {
  ger: ['Die Stadt der Träume', 'Das Haus am See', 'Der letzte Sommer', 'Über die Grenze'],
  fre: ['Le Château des étoiles', 'La Nuit des rois', "L'Été dernier", 'Les Misérables enfants'],
  spa: ['El jardín de las sombras', 'La casa de los espíritus', 'Cien días de lluvia', 'Años de soledad'],
  ita: ['Il nome della rosa blu', 'La città invisibile', 'Le notti bianche'],
  por: ['O livro do desassossego', 'A cidade e as serras'],
  rus: ['Преступление и наказание', 'Война и мир', 'Белые ночи'],
  jpn: ['雪国の夜', '海辺のカフカ', '吾輩は猫である'],
  chi: ['红楼梦', '活着', '三体'],
  dut: ['Het achterhuis', 'De avonden'],
  swe: ['Röda rummet', 'Utvandrarna'],
  pol: ['Lalka', 'Pan Tadeusz'],
  dan: ['Eventyr og historier', 'Kongens fald'],
};
const PUBLISHERS = [
  'Penguin Books',
  'Random House',
  'HarperCollins',
  'Vintage',
  'Oxford University Press',
  'Gallimard',
  'Suhrkamp',
  'Anagrama',
  'Einaudi',
  'Kodansha',
  'Scholastic',
  'Tor',
  'Pan Books',
  'Bantam',
  'Dover Publications',
];
const FORMATS = ['Paperback', 'Hardcover', 'Mass Market Paperback', 'paperback', 'E-book', 'Audio CD', 'Library Binding'];
const SUBJECTS = [
  'Fiction',
  'History',
  'Biography',
  'Science fiction',
  'Fantasy',
  'Mystery',
  'Romance',
  'Poetry',
  'Philosophy',
  'Travel',
  'Cooking',
  'Art',
  'Juvenile fiction',
  'Politics and government',
  'Social life and customs',
  'World War, 1939-1945',
  'Detective and mystery stories',
  'Love stories',
];
// Titles hundreds of works share in the real catalogue.
const COMMON_TITLES = [
  'Poems',
  'Selected Stories',
  'Selected Poems',
  'Collected Poems',
  'Short Stories',
  'Stories',
  'Essays',
  'Letters',
  'Plays',
  'Works',
  'Sonnets',
  'Fables',
  'Sermons',
  'Memoirs',
  'Autobiography',
  'Journal',
  'Diary',
  'Speeches',
  'Collected Works',
  'Complete Poems',
];
// Books about a famous book: study guides, summaries, adaptations. `%t` is its title, `%a` its author.
const COMPANION_TITLES = [
  'Study Guide: %t',
  'Summary of %t by %a',
  '%t: A Study Guide',
  'SparkNotes: %t',
  "CliffsNotes on %a's %t",
  '%t (Graphic Novel)',
  'Summary & Analysis of %t',
  '%t: Screenplay',
  'Reading Guide to %t',
  'Teaching %t',
  '%t: Notes',
];
// Shares of works: a common title, a companion of a famous book, a different book of a famous title.
const COMMON_SHARE = 0.015;
const COMPANION_SHARE = 0.02;
const NAMESAKE_SHARE = 0.005;
// Readers' entries in the dumps per edition (the real reading log has about a third of a line per edition).
const READING_LOG_PER_EDITION = 0.3;
const RATINGS_PER_ENTRY = 0.15;
const SHELVES = [
  'Want to Read',
  'Want to Read',
  'Want to Read',
  'Want to Read',
  'Want to Read',
  'Want to Read',
  'Already Read',
  'Already Read',
  'Already Read',
  'Currently Reading',
];
const STARS = ['5', '5', '5', '5', '5', '5', '5', '4', '4', '4', '4', '4', '4', '4', '3', '3', '3', '3', '2', '1'];
const MONTHS = ['January', 'February', 'March', 'April', 'May', 'June', 'July', 'August', 'September', 'October', 'November', 'December'];

const workKey = (index: number): string => `/works/OL${KEY_BASE + index}W`;
const authorKey = (index: number): string => `/authors/OL${KEY_BASE + index}A`;
const editionKey = (index: number): string => `/books/OL${KEY_BASE + index}M`;

function dumpLine(type: string, key: string, revision: number, json: Record<string, unknown>): string {
  return `${type}\t${key}\t${revision}\t${LAST_MODIFIED}\t${JSON.stringify({ ...json, key, type: { key: type }, revision })}\n`;
}

/** A writer of one file in chunks, waiting whenever the stream asks to drain. */
class ChunkedFile {
  private chunk = '';
  lines = 0;
  constructor(private readonly stream: Writable) {}

  async add(line: string): Promise<void> {
    this.chunk += line;
    this.lines += 1;
    if (this.chunk.length >= CHUNK_CHARACTERS) await this.flush();
  }

  async flush(): Promise<void> {
    const text = this.chunk;
    this.chunk = '';
    if (text !== '' && !this.stream.write(text)) await drained(this.stream);
  }
}

export async function generateOpenLibrary(options: OpenLibraryOptions, dir: string): Promise<OpenLibrarySummary> {
  const { editions, seed } = options;
  if (!Number.isSafeInteger(editions) || editions < 1 || editions > MAX_EDITIONS)
    throw new RangeError(`editions must be an integer from 1 to ${MAX_EDITIONS}, got ${editions}`);
  await mkdir(dir, { recursive: true });
  const files: Record<DumpKind, string> = {
    authors: join(dir, 'ol_dump_authors.txt'),
    works: join(dir, 'ol_dump_works.txt'),
    editions: join(dir, 'ol_dump_editions.txt'),
    readingLog: join(dir, 'ol_dump_reading-log.txt'),
    ratings: join(dir, 'ol_dump_ratings.txt'),
  };
  const workCount = Math.max(1, Math.round(editions * 0.7));
  const authorCount = Math.max(1, Math.round(editions * 0.25));
  const titles: Titles = { pool: new AuthorPool(authorCount, seed), seed, workCount, famous: options.famous ?? [] };
  const pool = titles.pool;
  const lines = { authors: 0, works: 0, editions: 0, readingLog: 0, ratings: 0 };
  // Entries of the most read work: the sum over works of (w + 1)^-0.9 is about 10 * (W^0.1 - 1) + 1.
  const topReaders = (READING_LOG_PER_EDITION * editions) / (10 * (workCount ** 0.1 - 1) + 1);

  for (const kind of KINDS) {
    const stream = createWriteStream(files[kind], { highWaterMark: 1 << 20 });
    const out = new ChunkedFile(stream);
    const random = new Random(hash32(seed, kind.length));
    if (kind === 'readingLog' || kind === 'ratings') {
      for (let work = 0; work < workCount; work++) for (const line of readerLines(kind, seed, work, topReaders)) await out.add(line);
      await out.flush();
      stream.end();
      await finished(stream);
      lines[kind] = out.lines;
      continue;
    }
    const total = kind === 'authors' ? authorCount : kind === 'works' ? workCount : editions;
    const keyOf = kind === 'authors' ? authorKey : kind === 'works' ? workKey : editionKey;
    const recordLine = (index: number): string =>
      kind === 'authors'
        ? authorLine(random, pool, index)
        : kind === 'works'
          ? workLine(random, titles, index, authorCount)
          : editionLine(random, titles, index);
    const month = options.changed === undefined ? null : new NextMonth(seed, kind, total, options.changed, keyOf);
    for (let index = 0; index < total; index++) {
      // Drawn whether revised or not: the lines after it stay this month's.
      const line = recordLine(index);
      await out.add(month ? month.revise(line, index) : line);
    }
    // A few percent of keys were merged into others, and some records deleted.
    const path = kind === 'authors' ? 'authors' : kind === 'works' ? 'works' : 'books';
    const suffix = kind === 'authors' ? 'A' : kind === 'works' ? 'W' : 'M';
    for (let n = 0; n < Math.ceil(total * 0.03); n++) {
      await out.add(
        dumpLine('/type/redirect', `/${path}/OL${REDIRECT_KEY_BASE + n}${suffix}`, 2 + random.below(3), {
          location: keyOf(redirectTarget(seed, n, total)),
        }),
      );
    }
    for (let n = 0; n < Math.ceil(total * 0.005); n++)
      await out.add(dumpLine('/type/delete', `/${path}/OL${DELETED_KEY_BASE + n}${suffix}`, 3 + random.below(5), {}));
    // Records new this month, after every line of last month's (whose draws they follow).
    for (let n = 0; n < (month?.added ?? 0); n++) await out.add(recordLine(total + n));
    await out.flush();
    stream.end();
    await finished(stream);
    lines[kind] = out.lines;
  }
  return { files, lines };
}

/**
 * What a month changes in a kind's records, decided per record by the seed alone: of the revised
 * records a twentieth are deleted, a twentieth redirected to another record of their kind, a fifth
 * get a newer revision that maps to the same fields (a change to a field the catalogue does not
 * keep), and the rest a newer revision with a field changed. Broken lines stay as they were.
 */
class NextMonth {
  readonly added: number;
  private readonly stream: number;

  constructor(
    private readonly seed: number,
    private readonly kind: DumpKind,
    private readonly total: number,
    private readonly fraction: number,
    private readonly keyOf: (index: number) => string,
  ) {
    if (!(fraction >= 0 && fraction <= 1)) throw new RangeError(`changed must be a fraction from 0 to 1, got ${fraction}`);
    this.added = Math.ceil(total * fraction * 0.1);
    this.stream = hash32(seed, 90_000 + KINDS.indexOf(kind));
  }

  revise(line: string, index: number): string {
    const share = hash32(this.stream, index) / 2 ** 32 / this.fraction;
    if (!(share < 1)) return line;
    const columns = line.slice(0, -1).split('\t');
    if (columns.length !== 5) return line;
    const [type, key, revisionText, , json] = columns as [string, string, string, string, string];
    let data: Record<string, unknown>;
    try {
      data = JSON.parse(json) as Record<string, unknown>;
    } catch {
      return line;
    }
    const revision = Number(revisionText) + 1;
    if (share < 0.05) return dumpLine('/type/delete', key, revision, {});
    if (share < 0.1 && this.total > 1) {
      const target = (index + 1 + (hash32(this.seed, 8_000_000 + index) % (this.total - 1))) % this.total;
      return dumpLine('/type/redirect', key, revision, { location: this.keyOf(target) });
    }
    if (share < 0.3) data.latest_revision = revision;
    else if (this.kind === 'authors') data.bio = `${String(data.name)} was revised in the next dump.`;
    else if (this.kind === 'works') data.description = `Revised in the next dump (${index}).`;
    else data.publishers = ['Revised Press'];
    return dumpLine(type, key, revision, data);
  }
}

/** The record a redirect key was merged into: the n-th redirect of a kind always names the same one. */
const redirectTarget = (seed: number, n: number, total: number): number => hash32(seed, 7_000_000 + n) % total;

/** Editions and works name redirected keys sometimes, as real records do until they are fixed. */
function referenceKey(random: Random, index: number, total: number, path: 'authors' | 'works', keyOf: (index: number) => string): string {
  if (random.next() >= 0.01) return keyOf(index);
  const n = random.below(Math.ceil(total * 0.03));
  return `/${path}/OL${REDIRECT_KEY_BASE + n}${path === 'authors' ? 'A' : 'W'}`;
}

function authorLine(random: Random, pool: AuthorPool, index: number): string {
  const name = pool.name(index);
  const json: Record<string, unknown> = { name, personal_name: name, created: { type: '/type/datetime', value: LAST_MODIFIED } };
  if (random.next() < 0.4) json.birth_date = String(1800 + random.below(200));
  if (random.next() < 0.15) json.death_date = `${1 + random.below(28)} ${random.pick(MONTHS)} ${1850 + random.below(170)}`;
  if (random.next() < 0.1) json.alternate_names = [name.toUpperCase(), name.split(' ').reverse().join(', ')];
  if (random.next() < 0.08) {
    const bio = `${name} wrote ${1 + random.below(40)} books.`;
    json.bio = random.next() < 0.5 ? bio : { type: '/type/text', value: bio };
  }
  if (random.next() < 0.1) json.remote_ids = { viaf: String(10_000_000 + index), wikidata: `Q${100_000 + index}` };
  return dumpLine('/type/author', authorKey(index), 1 + random.below(8), json);
}

/** A work's first author, by popularity (a few authors write very many works); its editions credit the same. */
const firstAuthor = (pool: AuthorPool, seed: number, work: number): number =>
  pool.popularRank(new Random(hash32(hash32(seed, work), 13)).next());

/** Authors of a work: one to three. */
function workAuthors(random: Random, pool: AuthorPool, seed: number, work: number, authorCount: number): number[] {
  const ranks = [firstAuthor(pool, seed, work)];
  if (random.next() < 0.15) ranks.push(random.below(authorCount));
  if (random.next() < 0.03) ranks.push(random.below(authorCount));
  return ranks;
}

function workLine(random: Random, titles: Titles, index: number, authorCount: number): string {
  const { pool, seed } = titles;
  const authors = workAuthors(random, pool, seed, index, authorCount);
  const title = workTitle(titles, index);
  const colon = title.indexOf(': ');
  const json: Record<string, unknown> = {
    title: colon > 0 ? title.slice(0, colon) : title,
    authors: authors.map((rank) => ({
      // Both shapes of an author role occur in the dumps.
      type: random.next() < 0.5 ? { key: '/type/author_role' } : '/type/author_role',
      author: { key: referenceKey(random, rank, authorCount, 'authors', authorKey) },
    })),
  };
  if (colon > 0) json.subtitle = title.slice(colon + 2);
  if (random.next() < 0.7) json.subjects = Array.from({ length: 1 + random.below(5) }, () => random.pick(SUBJECTS));
  if (random.next() < 0.3) {
    const description = `A ${random.pick(SUBJECTS).toLowerCase()} book by ${pool.name(authors[0]!)}.`;
    json.description = random.next() < 0.5 ? description : { type: '/type/text', value: description };
  }
  if (random.next() < 0.6) json.first_publish_date = String(1850 + Math.floor(175 * random.next() ** 0.5));
  if (random.next() < 0.5) json.covers = [random.next() < 0.05 ? -1 : 1_000_000 + index];
  return dumpLine('/type/work', workKey(index), 1 + random.below(12), json);
}

/** What a work's title is drawn from. */
interface Titles {
  pool: AuthorPool;
  seed: number;
  workCount: number;
  famous: readonly FamousBook[];
}

/** A work's title is a pure function of the work, so each of its editions can repeat it. */
function workTitle(titles: Titles, work: number): string {
  const random = new Random(hash32(hash32(titles.seed, work), 11));
  const own = (index: number) =>
    bookTitle(new Random(hash32(hash32(titles.seed, index), 12)), titles.pool.surname(firstAuthor(titles.pool, titles.seed, index)));
  const kind = random.next();
  if (kind >= COMMON_SHARE + COMPANION_SHARE + NAMESAKE_SHARE) return own(work);
  if (kind < COMMON_SHARE) return random.pick(COMMON_TITLES);
  // A famous book, the most famous most often.
  const rank = Math.floor(random.next() ** 3 * (titles.famous.length > 0 ? titles.famous.length : titles.workCount));
  const famous = titles.famous[rank] ?? {
    title: own(rank).split(': ')[0]!,
    author: titles.pool.name(firstAuthor(titles.pool, titles.seed, rank)),
  };
  if (kind >= COMMON_SHARE + COMPANION_SHARE) return famous.title;
  return random.pick(COMPANION_TITLES).replace('%t', famous.title).replace('%a', famous.author);
}

/**
 * A work's lines in the reading-log or ratings dump: Zipf-like, the w-th work (works with low
 * numbers have the most editions too) read by about top / (w + 1)^0.9 readers.
 */
function readerLines(kind: 'readingLog' | 'ratings', seed: number, work: number, top: number): string[] {
  const random = new Random(hash32(hash32(seed, work), kind === 'readingLog' ? 31 : 37));
  const entries = (top * (0.5 + random.next())) / (work + 1) ** 0.9;
  const count = Math.floor(
    kind === 'readingLog' ? entries + random.next() : entries * RATINGS_PER_ENTRY * 2 * random.next() + random.next(),
  );
  const lines: string[] = [];
  for (let n = 0; n < count; n++) {
    const edition = random.next() < 0.4 ? editionKey(work) : '\\N';
    const date = `${2010 + random.below(15)}-${String(1 + random.below(12)).padStart(2, '0')}-${String(1 + random.below(28)).padStart(2, '0')}`;
    const value = kind === 'readingLog' ? random.pick(SHELVES) : random.pick(STARS);
    // A few lines broken, as in any dump of this size.
    lines.push(random.next() < 0.001 ? `${workKey(work)}\t${value}\t${date}\n` : `${workKey(work)}\t${edition}\t${value}\t${date}\n`);
  }
  return lines;
}

/** Which work an edition belongs to: every work has one, and the rest go mostly to popular works. */
function workOfEdition(random: Random, index: number, workCount: number): number {
  return index < workCount ? index : Math.floor(workCount * random.next() ** 3);
}

function editionLine(random: Random, titles: Titles, index: number): string {
  const { pool, seed, workCount } = titles;
  const work = workOfEdition(random, index, workCount);
  const author = firstAuthor(pool, seed, work);
  const language = random.pick(LANGUAGES);
  const foreign = FOREIGN_TITLES[language];
  const title = foreign && random.next() < 0.7 ? random.pick(foreign) : workTitle(titles, work).split(': ')[0]!;
  if (random.next() < 0.001) {
    // A broken line: the JSON cut short, or a column lost.
    return random.next() < 0.5
      ? `/type/edition\t${editionKey(index)}\t1\t${LAST_MODIFIED}\t{"title": "${title}", "publishers": [\n`
      : `/type/edition\t${editionKey(index)}\t1\t{"title": "x"}\n`;
  }
  const json: Record<string, unknown> = { title, works: [{ key: referenceKey(random, work, workCount, 'works', workKey) }] };
  if (random.next() < 0.02) delete json.works;
  const authorChoice = random.next();
  if (authorChoice < 0.85) json.authors = [{ key: authorKey(author) }];
  else if (authorChoice < 0.87) json.authors = [{ key: authorKey(author) }, { key: authorKey(author) }];
  if (random.next() < 2 / 3) {
    const isbn10 = isbn10FromBody(hash32(seed, 20_000_000 + index) % 1_000_000_000);
    const defect = random.next();
    if (defect < 0.03) json.isbn_10 = [`${isbn10.slice(0, 1)}-${isbn10.slice(1, 4)}-${isbn10.slice(4, 9)}-${isbn10.slice(9)}`];
    else if (defect < 0.04)
      json.isbn_10 = [`${isbn10.slice(0, 9)}${isbn10[9] === '0' ? '1' : '0'}`]; // a wrong check digit
    else if (defect < 0.6) json.isbn_13 = [isbn10To13(isbn10)];
    else {
      json.isbn_10 = [isbn10];
      json.isbn_13 = [isbn10To13(isbn10)];
    }
  }
  json.publishers = [random.pick(PUBLISHERS)];
  const year = 1900 + Math.floor(125 * random.next() ** 0.4);
  const dateStyle = random.next();
  json.publish_date =
    dateStyle < 0.6
      ? String(year)
      : dateStyle < 0.8
        ? `${random.pick(MONTHS)} ${1 + random.below(28)}, ${year}`
        : dateStyle < 0.9
          ? `c${year}`
          : dateStyle < 0.95
            ? `[${year}?]`
            : 'n.d.';
  if (random.next() < 0.6) json.number_of_pages = 40 + random.below(900);
  if (random.next() < 0.8) json.languages = [{ key: `/languages/${language}` }];
  if (random.next() < 0.5) json.physical_format = random.pick(FORMATS);
  if (random.next() < 0.4) json.covers = [random.next() < 0.1 ? -1 : 5_000_000 + index];
  if (random.next() < 0.05) json.series = [`${pool.seriesName(author, 0)} ; ${1 + random.below(9)}`];
  if (random.next() < 0.3) json.subjects = [random.pick(SUBJECTS)];
  const identifiers: Record<string, string[]> = {};
  if (random.next() < 0.2) identifiers.goodreads = [String(1_000_000 + index)];
  if (Object.keys(identifiers).length > 0) json.identifiers = identifiers;
  if (random.next() < 0.3) json.oclc_numbers = [String(30_000_000 + index)];
  if (random.next() < 0.1) json.lccn = [`${80 + random.below(20)}0${String(index % 100_000).padStart(5, '0')}`];
  return dumpLine('/type/edition', editionKey(index), 1 + random.below(10), json);
}

// ---------------------------------------------------------------------------------------------
// Command line

const USAGE =
  'usage: node --import tsx scripts/dev/generate-openlibrary.ts --editions N [--seed S] [--famous FILE] [--changed FRACTION] --out DIR';

/** "title<TAB>author" lines, most famous first. */
export async function readFamous(path: string): Promise<FamousBook[]> {
  return (await readFile(path, 'utf8'))
    .split('\n')
    .map((line) => line.split('\t'))
    .filter((columns): columns is [string, string] => columns.length === 2 && columns[0]!.trim() !== '')
    .map(([title, author]) => ({ title: title.trim(), author: author.trim() }));
}

async function main(argv: string[]): Promise<void> {
  const { values } = parseArgs({
    args: argv,
    options: {
      editions: { type: 'string' },
      seed: { type: 'string' },
      out: { type: 'string' },
      famous: { type: 'string' },
      changed: { type: 'string' },
      help: { type: 'boolean', short: 'h' },
    },
    strict: true,
  });
  if (values.help) {
    process.stdout.write(`${USAGE}\n`);
    return;
  }
  if (values.out === undefined) throw new Error(`--out is required\n${USAGE}`);
  const famous = values.famous === undefined ? [] : await readFamous(values.famous);
  const changed = values.changed === undefined ? undefined : Number(values.changed);
  const summary = await generateOpenLibrary(
    { editions: integerOption('editions', values.editions, USAGE), seed: integerOption('seed', values.seed, USAGE, 1), famous, changed },
    values.out,
  );
  for (const kind of KINDS) process.stdout.write(`${summary.files[kind]}: ${summary.lines[kind]} lines\n`);
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  main(process.argv.slice(2)).catch((error: unknown) => {
    process.stderr.write(`${error instanceof Error ? error.message : String(error)}\n`);
    process.exitCode = 1;
  });
}

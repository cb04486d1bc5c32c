// Author resolution across sources, measured: the shipped goodbooks and Book-Crossing books, the Open
// Library samples, a generated Open Library catalogue, and Open Library records of a sample of the
// goodbooks books (the generator shares no book with goodbooks, so this script writes those). Each
// import resolves the authors it touched; then `resolveAuthors` (what `bookmeta resolve-authors`
// runs), a full pass, shows what they left, and a second one that it changes nothing.
//
//   node --import tsx scripts/eval/authors.ts [--seed 7] [--shared 3000] [--generated 20000] [--sample 40] [--keep]
//
// The Open Library records of shared books: one author record per goodbooks author, named as Open
// Library might (as goodbooks writes it, surname first, a middle initial dropped, capitals,
// diacritics stripped), a work and the edition of the goodbooks ISBN, sometimes another edition
// of that work and another work of the author. They carry traps that must not merge: a namesake
// (an Open Library author of the same name with books of their own), and an edition credited only
// to a book's second goodbooks author (an illustrator, say).
//
// Printed: duplicates the design knows (an author's goodbooks and Open Library records) left
// unmerged, traps merged (wrong by construction), pairs of live records that still share a work
// and a surname (possible duplicates left, by why they stay apart), and a random sample of every
// author merge made, with a title they share, for a human to check. Target: no wrong merge.

import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { resolveAuthors } from '../../loader/import/authors.js';
import { bookCrossing } from '../../loader/import/bookCrossing.js';
import { goodbooks } from '../../loader/import/goodbooks.js';
import { importCatalogue } from '../../loader/import/importer.js';
import { importOpenLibrary } from '../../loader/import/openlibrary/import.js';
import { authorRecords, authorsSharingWorks } from '../../loader/stores/postgres/authors.js';
import { isbn10To13 } from '../../src/domain/isbn.js';
import { authorKey, sameAuthorNames } from '../../src/domain/names.js';
import { splitTitle } from '../../src/domain/titles.js';
import { createLogger } from '../../src/log.js';
import { projectPath } from '../../src/paths.js';
import { Random, isbn10FromBody } from '../dev/synthetic.js';
import { generateOpenLibrary } from '../dev/generate-openlibrary.js';
import { benchDatabase } from '../lib/bench.js';
import { BX_BOOKS, GOODBOOKS, readGoodbooks } from './lib/sources.js';

const { values: options } = parseArgs({
  options: {
    seed: { type: 'string', default: '7' },
    shared: { type: 'string', default: '3000' },
    generated: { type: 'string', default: '20000' },
    sample: { type: 'string', default: '40' },
    keep: { type: 'boolean', default: false },
  },
});
const seed = Number(options.seed);
const random = new Random(seed);
const quiet = createLogger('silent');

// Keys and ISBNs of the written records, apart from the generator's (its keys start at 10,000,000,
// its redirects and deletes below 400,000,000) and from real ISBNs (group 99 is unassigned).
const KEY_BASE = 500_000_000;
const ISBN_BODY_BASE = 990_000_000;

type Variant = 'as written' | 'surname first' | 'middle initial dropped' | 'capitals' | 'no diacritics';

function variantOf(name: string): { name: string; variant: Variant } {
  const u = random.next();
  const words = name.split(' ');
  if (u < 0.1 && words.length >= 2) return { name: `${words.at(-1)}, ${words.slice(0, -1).join(' ')}`, variant: 'surname first' };
  if (u < 0.2 && words.length >= 3 && /^\p{L}\.$/u.test(words[1]!))
    return { name: [words[0], ...words.slice(2)].join(' '), variant: 'middle initial dropped' };
  if (u < 0.25) return { name: name.toUpperCase(), variant: 'capitals' };
  if (u < 0.3 && /[^\p{ASCII}]/u.test(name)) return { name: name.normalize('NFD').replace(/\p{M}/gu, ''), variant: 'no diacritics' };
  return { name, variant: 'as written' };
}

interface Design {
  lines: string[];
  /** goodbooks author name → the Open Library key of the same person. */
  same: Map<string, string>;
  /** Open Library keys that are not the goodbooks author of that name: namesakes and credited illustrators. */
  traps: Map<string, string>;
  variants: Map<Variant, number>;
}

async function design(count: number): Promise<Design> {
  const books = (await readGoodbooks()).filter((book) => book.isbn13 !== null && book.authors.length > 0);
  const chosen = new Set<number>();
  while (chosen.size < Math.min(count, books.length)) chosen.add(random.below(books.length));
  let next = 0;
  const key = (kind: 'A' | 'W' | 'M') => `OL${KEY_BASE + next++}${kind}`;
  const isbn = () => isbn10To13(isbn10FromBody(ISBN_BODY_BASE + next++));
  const line = (type: string, path: string, json: object) =>
    `/type/${type}\t${path}\t1\t2024-06-01T08:15:00.000000\t${JSON.stringify({ ...json, key: path, revision: 1, type: { key: `/type/${type}` } })}`;
  const out: Design = { lines: [], same: new Map(), traps: new Map(), variants: new Map() };
  const authorOf = (name: string): string => {
    const known = out.same.get(name);
    if (known) return known;
    const olKey = key('A');
    const { name: written, variant } = variantOf(name);
    out.variants.set(variant, (out.variants.get(variant) ?? 0) + 1);
    out.same.set(name, olKey);
    out.lines.push(line('author', `/authors/${olKey}`, { name: written }));
    if (random.next() < 0.1) {
      // A namesake: another person of the same name, with a book of their own.
      const namesake = key('A');
      out.traps.set(namesake, name);
      out.lines.push(line('author', `/authors/${namesake}`, { name }));
      work(`Collected Essays of ${namesake}`, namesake, [isbn()]);
    }
    return olKey;
  };
  const work = (title: string, authorKey: string, isbns: string[]) => {
    const workKey = key('W');
    out.lines.push(
      line('work', `/works/${workKey}`, {
        title,
        authors: [{ type: { key: '/type/author_role' }, author: { key: `/authors/${authorKey}` } }],
      }),
    );
    for (const isbn13 of isbns) {
      out.lines.push(
        line('edition', `/books/${key('M')}`, {
          title,
          isbn_13: [isbn13],
          works: [{ key: `/works/${workKey}` }],
          authors: [{ key: `/authors/${authorKey}` }],
        }),
      );
    }
  };
  for (const index of chosen) {
    const book = books[index]!;
    const title = splitTitle(book.rawTitle).title;
    const [first, second] = book.authors;
    if (second !== undefined && random.next() < 0.1) {
      // Open Library credits the edition to the second goodbooks author alone: a trap for the first.
      const olKey = key('A');
      out.traps.set(olKey, first!);
      out.lines.push(line('author', `/authors/${olKey}`, { name: second }));
      work(title, olKey, [book.isbn13!]);
      continue;
    }
    const olKey = authorOf(first!);
    work(title, olKey, random.next() < 0.5 ? [book.isbn13!, isbn()] : [book.isbn13!]);
    if (random.next() < 0.3) work(`${title}: A Reader's Companion`, olKey, [isbn()]);
  }
  return out;
}

async function main(): Promise<void> {
  const name = 'bookmeta_eval_authors';
  const database = await benchDatabase(name);
  const { db } = database;
  const scratch = await mkdtemp(join(tmpdir(), 'eval-authors-'));
  try {
    const started = Date.now();
    const stage = (what: string) => process.stderr.write(`${what} (${((Date.now() - started) / 1000).toFixed(0)} s)\n`);
    const designed = await design(Number(options.shared));
    await writeFile(join(scratch, 'ol_dump_shared.txt'), `${designed.lines.join('\n')}\n`);
    const { files } = await generateOpenLibrary({ editions: Number(options.generated), seed }, scratch);
    stage('dumps written');
    await importCatalogue(goodbooks, GOODBOOKS, { db, cache: null, log: quiet });
    await importCatalogue(bookCrossing, BX_BOOKS, { db, cache: null, log: quiet });
    stage('goodbooks and Book-Crossing imported');
    const sample = ['authors', 'works', 'editions'].map((kind) => projectPath('data', 'openlibrary', `ol_dump_${kind}_sample.txt`));
    await importOpenLibrary(
      [...sample, files.authors, files.works, files.editions, join(scratch, 'ol_dump_shared.txt')],
      { db, cache: null, log: quiet },
      { progress: false },
    );
    await db.query('analyze');
    stage('Open Library imported');

    const count = async (sql: string, params: unknown[] = []) => (await db.query<{ n: number }>(sql, params)).rows[0]!.n;
    const mergesOf = (entity: string) =>
      count(`select count(*)::int as n from changes where entity = $1 and operation = 'merge'`, [entity]);
    const byImports = { authors: await mergesOf('author'), works: await mergesOf('work') };
    const resolveStarted = Date.now();
    const outcome = await resolveAuthors(db, null);
    const resolveSeconds = (Date.now() - resolveStarted) / 1000;
    const again = await resolveAuthors(db, null);
    stage('resolved twice');

    // The design: each goodbooks author with Open Library's record of them, and the traps.
    const survivorOf = async (where: string, value: string): Promise<string | null> =>
      (await db.query<{ id: string }>(`select public_id(coalesce(merged_into, id)) as id from authors where ${where} = $1`, [value]))
        .rows[0]?.id ?? null;
    let left = 0;
    const leftExamples: string[] = [];
    for (const [goodbooksName, olKey] of designed.same) {
      const ours = await survivorOf('name_key', authorKey(goodbooksName));
      const theirs = await survivorOf('name_key', `ol:${olKey}`);
      if (ours !== null && ours !== theirs) {
        left += 1;
        if (leftExamples.length < 10) leftExamples.push(`${goodbooksName} / ${olKey}`);
      }
    }
    let trapsMerged = 0;
    for (const [olKey, goodbooksName] of designed.traps) {
      if ((await survivorOf('name_key', authorKey(goodbooksName))) === (await survivorOf('name_key', `ol:${olKey}`))) trapsMerged += 1;
    }

    // Every pair of live records still tied by a work, with the same surname: possible duplicates left.
    const pairs = await authorsSharingWorks(db);
    const records = await authorRecords(db, [...new Set(pairs.flatMap((pair) => [pair.a, pair.b]))]);
    const surname = (record: { names: string[] }) => authorKey(record.names[0]!).split(' ').at(-1);
    const possible = pairs.flatMap((pair) => {
      const [a, b] = [records.get(pair.a)!, records.get(pair.b)!];
      if (surname(a) !== surname(b)) return [];
      const why =
        a.openLibrary && b.openLibrary
          ? 'both Open Library'
          : a.names.some((x) => b.names.some((y) => sameAuthorNames(x, y)))
            ? 'tied to two Open Library records'
            : 'names not one person';
      return [{ a: a.names[0]!, b: b.names[0]!, why }];
    });
    const byWhy = new Map<string, number>();
    for (const pair of possible) byWhy.set(pair.why, (byWhy.get(pair.why) ?? 0) + 1);

    // A random sample of the merges made, for a human to check.
    const { rows: merges } = await db.query<{
      from_name: string;
      from_key: string;
      into_name: string;
      into_key: string;
      title: string | null;
    }>(
      `select f.name as from_name, f.name_key as from_key, i.name as into_name, i.name_key as into_key,
              (select b.title from book_authors ba join books b on b.id = ba.book_id where ba.author_id = i.id and b.merged_into is null order by b.popularity desc, b.id limit 1) as title
         from changes c join authors f on f.id = c.entity_id join authors i on i.id = c.survivor_id
        where c.entity = 'author' and c.operation = 'merge' order by c.seq`,
    );
    // Merges between records of goodbooks and Book-Crossing come from the real files alone: sampled apart.
    const source = (nameKey: string) => (nameKey.startsWith('ol:') ? 'Open Library' : 'by name');
    const samples = [
      merges.filter((merge) => merge.into_key.startsWith('ol:')),
      merges.filter((merge) => !merge.into_key.startsWith('ol:')),
    ].map((pool) => {
      const picked = new Set<number>();
      while (picked.size < Math.min(Number(options.sample), pool.length)) picked.add(random.below(pool.length));
      return { pool, picked: [...picked].sort((x, y) => x - y).map((index) => pool[index]!) };
    });

    console.log(
      `seed ${seed}: ${designed.same.size} goodbooks authors given an Open Library record (${[...designed.variants].map(([variant, n]) => `${n} ${variant}`).join(', ')}), ${designed.traps.size} traps`,
    );
    console.log(
      `author merges / work merges by the imports (Open Library's redirects among them): ${byImports.authors} / ${byImports.works}; a full pass after them: ${outcome.authors} / ${outcome.works} in ${resolveSeconds.toFixed(1)} s; a second: ${again.authors} / ${again.works}`,
    );
    console.log(
      `designed duplicates left unmerged: ${left} of ${designed.same.size}${leftExamples.length ? ` (${leftExamples.join('; ')})` : ''}`,
    );
    console.log(`traps merged (wrong by construction): ${trapsMerged} of ${designed.traps.size}`);
    console.log(
      `live records still sharing a work and a surname: ${possible.length} (${[...byWhy].map(([why, n]) => `${n} ${why}`).join(', ')})`,
    );
    for (const pair of possible.slice(0, 15)) console.log(`  ${pair.a} | ${pair.b} (${pair.why})`);
    for (const [index, what] of ['into an Open Library record', 'between records named by goodbooks and Book-Crossing'].entries()) {
      const { pool, picked } = samples[index]!;
      console.log(`sample of ${picked.length} of ${pool.length} author merges ${what} (from -> into: a book of the survivor):`);
      for (const merge of picked)
        console.log(
          `  ${merge.from_name} [${source(merge.from_key)}] -> ${merge.into_name} [${source(merge.into_key)}]: ${merge.title ?? ''}`,
        );
    }
  } finally {
    await rm(scratch, { recursive: true, force: true });
    if (options.keep) await db.end();
    else await database.drop();
  }
}

await main();

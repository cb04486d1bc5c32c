// The resolution of authors an import ends with, against the catalogue's size: for each size, a
// catalogue of the goodbooks books and a first load of that many generated Open Library editions,
// then an import of Open Library records of `--shared` goodbooks writers (an author, a work, an
// edition of one of their goodbooks ISBNs each), applied as an import's batches apply them. Timed:
// the resolution of what that import touched (resolveTouchedAuthors, what every import ends with)
// and, as the baseline on the same catalogue, a full pass (resolveAuthors, `bookmeta resolve-authors`).
// The first should stay flat as the catalogue grows; the second grows with it.
//
//   node --import tsx scripts/bench/resolveAuthors.ts [--editions 20000,80000] [--shared 50] [--seed 42]
//     [--work-dir /var/tmp/bookmeta-bench] [--keep]
//
// The databases are dropped and the dumps deleted at the end, unless --keep.

import { mkdir, rm } from 'node:fs/promises';
import { loadavg } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';

import { resolveAuthors, resolveTouchedAuthors } from '../../loader/import/authors.js';
import { applyOlRecords } from '../../loader/import/openlibrary/apply.js';
import { importOpenLibrary } from '../../loader/import/openlibrary/import.js';
import { parseOlLine, type OlRecord } from '../../src/domain/openlibrary.js';
import { createLogger } from '../../src/log.js';
import { formatTable } from '../../src/table.js';
import { generateOpenLibrary } from '../dev/generate-openlibrary.js';
import { readGoodbooks } from '../eval/lib/sources.js';
import { benchDatabase, importSampleBooks } from '../lib/bench.js';

const { values } = parseArgs({
  options: {
    editions: { type: 'string', default: '20000,80000' },
    shared: { type: 'string', default: '50' },
    seed: { type: 'string', default: '42' },
    'work-dir': { type: 'string', default: '/var/tmp/bookmeta-bench' },
    keep: { type: 'boolean', default: false },
  },
});
const sizes = values.editions.split(',').map(Number);
const shared = Number(values.shared);
const say = (text: string) => process.stderr.write(`bench-resolve-authors: ${text}\n`);
const quiet = createLogger('silent');

/** Open Library records of the first `shared` goodbooks writers with an ISBN, keyed apart from the generator's. */
async function sharedRecords(): Promise<OlRecord[]> {
  const seen = new Set<string>();
  const lines: string[] = [];
  const line = (type: string, key: string, json: object) =>
    `${type}\t${key}\t1\t2024-01-01T00:00:00\t${JSON.stringify({ ...json, key, type: { key: type }, revision: 1 })}`;
  for (const book of await readGoodbooks()) {
    const name = book.authors[0];
    if (!book.isbn13 || !name || seen.has(name) || seen.size >= shared) continue;
    const n = 900_000_000 + seen.size;
    seen.add(name);
    const title = book.originalTitle ?? book.rawTitle;
    lines.push(
      line('/type/author', `/authors/OL${n}A`, { name }),
      line('/type/work', `/works/OL${n}W`, { title, authors: [{ author: { key: `/authors/OL${n}A` } }] }),
      line('/type/edition', `/books/OL${n}M`, {
        title,
        isbn_13: [book.isbn13],
        works: [{ key: `/works/OL${n}W` }],
        authors: [{ key: `/authors/OL${n}A` }],
      }),
    );
  }
  return lines.flatMap((text) => {
    const parsed = parseOlLine(text);
    return parsed && 'record' in parsed ? [parsed.record] : [];
  });
}

const seconds = async <T>(work: () => Promise<T>): Promise<{ result: T; seconds: number }> => {
  const started = performance.now();
  const result = await work();
  return { result, seconds: (performance.now() - started) / 1000 };
};

const records = await sharedRecords();
const rows: string[][] = [];
const timings: { incremental: number; full: number }[] = [];
for (const editions of sizes) {
  const dir = join(values['work-dir'], `resolve-authors-${editions}`);
  await mkdir(dir, { recursive: true });
  const bench = await benchDatabase(`bookmeta_bench_resolve_authors_${editions}`);
  try {
    say(`${editions} editions: loading the goodbooks books and the generated dumps`);
    await importSampleBooks(bench.db);
    const { files } = await generateOpenLibrary({ editions, seed: Number(values.seed) }, dir);
    await importOpenLibrary([files.authors, files.works, files.editions], { db: bench.db, cache: null, log: quiet }, { progress: false });
    await bench.db.query('vacuum analyze');
    const { rows: size } = await bench.db.query<{ books: number; authors: number }>(
      'select (select count(*) from books)::int as books, (select count(*) from authors)::int as authors',
    );

    say(`${editions} editions: the import of ${shared} writers' records, then its resolution and a full pass`);
    await applyOlRecords(bench.db, records);
    const incremental = await seconds(() => resolveTouchedAuthors(bench.db, null));
    const full = await seconds(() => resolveAuthors(bench.db, null));
    timings.push({ incremental: incremental.seconds, full: full.seconds });
    rows.push([
      String(size[0]!.books),
      String(size[0]!.authors),
      `${incremental.seconds.toFixed(2)} s (${incremental.result.authors} authors, ${incremental.result.works} works merged)`,
      `${full.seconds.toFixed(2)} s (${full.result.authors} + ${full.result.works})`,
      loadavg()
        .map((load) => load.toFixed(1))
        .join(' '),
    ]);
  } finally {
    if (!values.keep) {
      await bench.drop();
      await rm(dir, { recursive: true, force: true });
    }
  }
}
console.log(formatTable(['books', 'authors', "import's resolution", 'full pass (baseline)', 'load 1/5/15 min'], rows));
const first = timings[0]!;
const last = timings.at(-1)!;
console.log(
  `catalogue ${sizes.at(-1)! / sizes[0]!}x the editions: the import's resolution took ${(last.incremental / first.incremental).toFixed(2)}x, ` +
    `the full pass ${(last.full / first.full).toFixed(2)}x; at the largest, the import's resolution is ${((100 * last.incremental) / last.full).toFixed(1)} % of a full pass`,
);

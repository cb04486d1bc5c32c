// The resolution a goodbooks import of generated books ends with, against a full pass: the import of
// `--books` generated books into an empty catalogue, its noted rows (authors_to_resolve) kept aside as
// it writes them, then timed on the imported catalogue: resolveTouchedAuthors over exactly those rows
// (what the import ends with) and a full pass (resolveAuthors, `bookmeta resolve-authors`) over them.
// An import that touched most authors should cost about a full pass, not more.
//
//   node --import tsx scripts/bench/resolveImport.ts [--books 100000] [--seed 42] [--work-dir /var/tmp/bookmeta-bench]
//     [--keep] [--reuse]
//
// --keep leaves the database (and its rows aside); --reuse times again on the database a --keep run left
// (another version of the code on the same catalogue).

import { createWriteStream } from 'node:fs';
import { mkdir, rm } from 'node:fs/promises';
import { loadavg } from 'node:os';
import { join } from 'node:path';
import { finished } from 'node:stream/promises';
import { parseArgs } from 'node:util';
import pg from 'pg';

import { resolveAuthors, resolveTouchedAuthors } from '../../loader/import/authors.js';
import { goodbooks } from '../../loader/import/goodbooks.js';
import { importCatalogue } from '../../loader/import/importer.js';
import { createLogger } from '../../src/log.js';
import { generateCatalogue } from '../dev/generate-catalogue.js';
import { createPool, type Pool } from '../../src/stores/postgres/pool.js';
import { ADMIN_URL, benchDatabase, type BenchDatabase } from '../lib/bench.js';

const { values } = parseArgs({
  options: {
    books: { type: 'string', default: '100000' },
    seed: { type: 'string', default: '42' },
    'work-dir': { type: 'string', default: '/var/tmp/bookmeta-bench' },
    keep: { type: 'boolean', default: false },
    reuse: { type: 'boolean', default: false },
  },
});
const books = Number(values.books);
const say = (text: string) => process.stderr.write(`bench-resolve-import: ${text} (load ${loadavg()[0]!.toFixed(1)})\n`);
function existingDatabase(name: string): BenchDatabase {
  const url = new URL(ADMIN_URL);
  url.pathname = `/${name}`;
  const db = createPool(url.toString(), 4);
  const drop = async () => {
    await db.end();
    const admin = new pg.Client({ connectionString: ADMIN_URL });
    await admin.connect();
    await admin.query(`drop database if exists ${pg.escapeIdentifier(name)} with (force)`);
    await admin.end();
  };
  return { url: url.toString(), db, drop };
}

/** Generates the books and imports them, their noted rows going aside as the import writes them (its own resolution has none to do). */
async function importAside(db: Pool): Promise<void> {
  await mkdir(values['work-dir'], { recursive: true });
  const out = createWriteStream(file);
  await generateCatalogue({ count: books, seed: Number(values.seed) }, out);
  out.end();
  await finished(out);
  await db.query(`create table noted_aside (like authors_to_resolve including all);
    create function note_aside() returns trigger language plpgsql as
      'begin insert into noted_aside values (new.*); return null; end';
    create trigger note_aside before insert on authors_to_resolve for each row execute function note_aside()`);
  say(`importing ${books} generated books`);
  const started = performance.now();
  await importCatalogue(goodbooks, file, { db, cache: null, log: createLogger('silent') });
  say(`imported in ${((performance.now() - started) / 1000).toFixed(1)} s`);
  await db.query('drop trigger note_aside on authors_to_resolve');
  await db.query('vacuum analyze');
}

const load = () =>
  loadavg()
    .map((value) => value.toFixed(1))
    .join(' ');

const file = join(values['work-dir'], `resolve-import-${books}.csv`);
const name = `bookmeta_bench_resolve_import_${books}`;
const bench = values.reuse ? existingDatabase(name) : await benchDatabase(name);
try {
  if (!values.reuse) await importAside(bench.db);
  const { rows: size } = await bench.db.query<{ authors: number; noted: number }>(
    'select (select count(*) from authors)::int as authors, (select count(*) from noted_aside)::int as noted',
  );
  say(`${size[0]!.authors} authors, ${size[0]!.noted} noted rows`);

  const timed = async (name: string, run: () => Promise<{ authors: number; works: number }>) => {
    await bench.db.query('insert into authors_to_resolve select * from noted_aside order by id; analyze authors_to_resolve');
    const loadBefore = load();
    const begun = performance.now();
    const outcome = await run();
    const seconds = (performance.now() - begun) / 1000;
    console.log(
      `${name}: ${seconds.toFixed(1)} s (${outcome.authors} authors, ${outcome.works} works merged), load ${loadBefore} -> ${load()}`,
    );
  };
  await timed("import's resolution (resolveTouchedAuthors)", () => resolveTouchedAuthors(bench.db, null));
  await timed('full pass (resolveAuthors)', () => resolveAuthors(bench.db, null));
} finally {
  if (!values.keep) {
    await bench.drop();
    await rm(file, { force: true });
  }
}

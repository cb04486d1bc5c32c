// The resolution an Open Library first load ends with: generated dumps of `--editions` editions loaded
// set-based (`bookmeta import openlibrary`) into an empty catalogue, their noted rows (authors_to_resolve:
// the works of editions that name none, "ol-edition:...") kept aside as the load writes them; then, on a
// fresh copy of that catalogue each run, resolveTouchedAuthors over exactly those rows, timed, with the
// process's peak RSS (sampled every 50 ms) against its RSS before. Orphan editions' works grouped into
// the Open Library work of the same first author and title are what it merges.
//
//   node --import tsx scripts/bench/resolveOpenLibrary.ts [--editions 200000] [--seed 42] [--runs 1]
//     [--work-dir /var/tmp/bookmeta-bench] [--keep] [--reuse]
//
// --keep leaves the loaded catalogue (a template database) for --reuse, which times again on a copy of
// it: another version of the code on the same catalogue.

import { rm } from 'node:fs/promises';
import { loadavg } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import pg from 'pg';

import { resolveTouchedAuthors } from '../../loader/import/authors.js';
import { importOpenLibrary } from '../../loader/import/openlibrary/import.js';
import { createLogger } from '../../src/log.js';
import { createPool } from '../../src/stores/postgres/pool.js';
import { generateOpenLibrary } from '../dev/generate-openlibrary.js';
import { ADMIN_URL, benchDatabase } from '../lib/bench.js';

const { values } = parseArgs({
  options: {
    editions: { type: 'string', default: '200000' },
    seed: { type: 'string', default: '42' },
    runs: { type: 'string', default: '1' },
    'work-dir': { type: 'string', default: '/var/tmp/bookmeta-bench' },
    keep: { type: 'boolean', default: false },
    reuse: { type: 'boolean', default: false },
  },
});
const editions = Number(values.editions);
const template = `bookmeta_bench_resolve_ol_${editions}_${values.seed}`;
const copy = `${template}_run`;
const load = () =>
  loadavg()
    .map((value) => value.toFixed(1))
    .join(' ');
const say = (text: string) => process.stderr.write(`bench-resolve-openlibrary: ${text} (load ${load()})\n`);
const urlOf = (name: string) => Object.assign(new URL(ADMIN_URL), { pathname: `/${name}` }).toString();

async function admin(sql: string): Promise<void> {
  const client = new pg.Client({ connectionString: ADMIN_URL });
  await client.connect();
  try {
    await client.query(sql);
  } finally {
    await client.end();
  }
}

/** Generates the dumps and loads them, the noted rows going aside as the load writes them (its own resolution has none to do). */
async function loadAside(): Promise<void> {
  const dir = join(values['work-dir'], `resolve-ol-${editions}-${values.seed}`);
  const bench = await benchDatabase(template);
  try {
    const files = await generateOpenLibrary({ editions, seed: Number(values.seed) }, dir);
    await bench.db.query(`create table noted_aside (like authors_to_resolve including all);
      create function note_aside() returns trigger language plpgsql as
        'begin insert into noted_aside values (new.*); return null; end';
      create trigger note_aside before insert on authors_to_resolve for each row execute function note_aside()`);
    say(`loading ${editions} generated editions`);
    const started = performance.now();
    await importOpenLibrary([files.files.authors, files.files.works, files.files.editions], {
      db: bench.db,
      cache: null,
      log: createLogger('silent'),
    });
    say(`loaded in ${((performance.now() - started) / 1000).toFixed(1)} s`);
    await bench.db.query('drop trigger note_aside on authors_to_resolve');
    await bench.db.query('vacuum analyze');
  } finally {
    await bench.db.end();
    await rm(dir, { recursive: true, force: true });
  }
}

async function timedRun(): Promise<void> {
  await admin(`drop database if exists ${pg.escapeIdentifier(copy)} with (force)`);
  await admin(`create database ${pg.escapeIdentifier(copy)} template ${pg.escapeIdentifier(template)}`);
  const db = createPool(urlOf(copy), 4);
  try {
    await db.query('insert into authors_to_resolve select * from noted_aside order by id; analyze authors_to_resolve');
    const { rows } = await db.query<{ noted: number; authors: number; works: number }>(
      `select (select count(*) from noted_aside)::int as noted, (select count(*) from authors)::int as authors,
              (select count(*) from works)::int as works`,
    );
    const size = rows[0]!;
    const loadBefore = load();
    const rssBefore = process.memoryUsage.rss();
    let peak = rssBefore;
    const sampler = setInterval(() => (peak = Math.max(peak, process.memoryUsage.rss())), 50);
    const begun = performance.now();
    const outcome = await resolveTouchedAuthors(db, null);
    const seconds = (performance.now() - begun) / 1000;
    clearInterval(sampler);
    const mb = (bytes: number) => `${Math.round(bytes / 1e6)} MB`;
    // What it left, to compare between versions: the works' redirects and the change feed.
    const { rows: left } = await db.query<{ works: string; changes: number }>(
      `select (select md5(string_agg(public_id(id) || '>' || coalesce(public_id(merged_into), ''), ',' order by id)) from works) as works,
              (select count(*) from changes)::int as changes`,
    );
    console.log(
      `resolveTouchedAuthors: ${seconds.toFixed(1)} s over ${size.noted} noted rows (${size.authors} authors, ${size.works} works): ` +
        `${outcome.authors} authors, ${outcome.works} works merged; RSS ${mb(rssBefore)} -> peak ${mb(peak)}; ` +
        `works ${left[0]!.works.slice(0, 12)}, ${left[0]!.changes} changes; load ${loadBefore} -> ${load()}`,
    );
  } finally {
    await db.end();
    await admin(`drop database if exists ${pg.escapeIdentifier(copy)} with (force)`);
  }
}

try {
  if (!values.reuse) await loadAside();
  for (let run = 0; run < Number(values.runs); run += 1) await timedRun();
} finally {
  if (!values.keep) await admin(`drop database if exists ${pg.escapeIdentifier(template)} with (force)`);
}

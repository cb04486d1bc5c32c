// Follow-mode lag: commit to searchable, with `bookmeta sync --follow` running and a writer making
// 100 changes per second.
//
//   node --import tsx scripts/bench/follow.ts [--rate 100] [--seconds 30] [--database NAME --index-prefix PREFIX]
//
// Imports data/goodbooks-10k/books.csv into a dedicated database (bookmeta_bench_follow, kept),
// reindexes it (or, with --database and --index-prefix, takes a catalogue already indexed under that
// prefix, such as the 10 M one of scripts/bench/openlibrary.ts, and leaves its indices), starts
// `bookmeta sync --follow` as its own process, then commits `rate` title updates per second (an
// UPDATE and recordChanges in one transaction, as every writer does) for `seconds`.
// A poller looks for the pending titles in the books alias every 20 ms; the lag of a write is the
// time from its COMMIT returning to the first search that finds it. Prints p50/p95/p99/max
// (target p99 < 2 s). Honours DATABASE_URL (its server) and ELASTICSEARCH_URL.

import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { stat } from 'node:fs/promises';
import { createInterface } from 'node:readline';
import { parseArgs } from 'node:util';
import { setTimeout as sleep } from 'node:timers/promises';
import { goodbooks } from '../../loader/import/goodbooks.js';
import { importCatalogue } from '../../loader/import/importer.js';
import { reindex } from '../../loader/index/reindex.js';
import { createLogger } from '../../src/log.js';
import { projectPath } from '../../src/paths.js';
import { createElastic, indexAliases } from '../../src/stores/elasticsearch/client.js';
import { recordChanges } from '../../src/stores/postgres/changes.js';
import { ensureDatabase, migrate } from '../../src/stores/postgres/migrate.js';
import { createPool, withTransaction } from '../../src/stores/postgres/pool.js';
import { percentile } from '../lib/percentile.js';

const { values } = parseArgs({
  options: {
    rate: { type: 'string', default: '100' },
    seconds: { type: 'string', default: '30' },
    database: { type: 'string' },
    'index-prefix': { type: 'string' },
  },
});
const rate = Number(values.rate);
const seconds = Number(values.seconds);
const say = (text: string) => process.stderr.write(`bench-follow: ${text}\n`);

const databaseUrl = new URL(process.env.DATABASE_URL || 'postgres://postgres@127.0.0.1:5432/bookmeta');
const existing = values.database !== undefined && values['index-prefix'] !== undefined;
databaseUrl.pathname = `/${existing ? values.database : 'bookmeta_bench_follow'}`;
const esUrl = process.env.ELASTICSEARCH_URL || 'http://127.0.0.1:9200';
const prefix = existing ? values['index-prefix']! : 'bench-follow-';
const aliases = indexAliases(prefix);
const log = createLogger('warn');

await ensureDatabase(databaseUrl.toString());
const db = createPool(databaseUrl.toString(), 4);
await migrate(db);
const es = createElastic(esUrl);
if (!existing) {
  const { rows: counted } = await db.query<{ n: number }>('select count(*)::int as n from books');
  if (counted[0]!.n < 9_000) {
    say('importing goodbooks-10k');
    await importCatalogue(goodbooks, projectPath('data', 'goodbooks-10k', 'books.csv'), { db, cache: null, log });
  }
  say('reindexing');
  await reindex({ db, es, aliases, log }, 'all', { progress: false });
}
// The books written to: as many as the run writes, spread over the catalogue.
const { rows: bookRows } = await db.query<{ id: string }>(
  'select public_id(id) as id from books tablesample system (least(100, $1 * 100.0 / greatest(1, (select reltuples from pg_class where relname = $2)))) where merged_into is null and deleted_at is null limit $1',
  [rate * seconds, 'books'],
);
const bookIds = bookRows.map((row) => row.id);

// The follower, as an operator runs it.
const compiled = projectPath('dist', 'loader', 'cli.js');
const useDist = existsSync(compiled) && (await stat(compiled)).mtimeMs > (await stat(projectPath('loader', 'index', 'sync.ts'))).mtimeMs;
const follower = spawn(
  process.execPath,
  [...(useDist ? [compiled] : ['--import', 'tsx', projectPath('loader', 'cli.ts')]), 'sync', '--follow'],
  {
    env: { ...process.env, DATABASE_URL: databaseUrl.toString(), ELASTICSEARCH_URL: esUrl, INDEX_PREFIX: prefix, LOG_LEVEL: 'info' },
    stdio: ['ignore', 'ignore', 'pipe'],
  },
);
const followerExited = new Promise<number | null>((resolve) => follower.on('exit', resolve));
await new Promise<void>((resolve, reject) => {
  createInterface({ input: follower.stderr }).on('line', (line) => {
    if (line.includes('sync following the change sequence')) resolve();
  });
  void followerExited.then((code) => reject(new Error(`sync --follow exited with ${code}`)));
});
await sleep(1_000);

const pending = new Map<string, number>(); // folded title -> commit time
const lags: number[] = [];
let writing = true;

const poller = (async () => {
  while (writing || pending.size > 0) {
    const titles = [...pending.keys()];
    if (titles.length > 0) {
      const response = await es.search<{ title: string }>({
        index: aliases.books,
        size: titles.length,
        _source: ['title'],
        query: { terms: { 'title.keyword': titles } },
      });
      const now = performance.now();
      for (const hit of response.hits.hits) {
        const title = hit._source!.title.toLowerCase();
        const committed = pending.get(title);
        if (committed !== undefined) {
          lags.push(now - committed);
          pending.delete(title);
        }
      }
      for (const [title, committed] of pending) {
        if (now - committed > 30_000) pending.delete(title); // lost: counted below
      }
    }
    await sleep(20);
  }
})();

say(`writing ${rate} changes/s for ${seconds} s`);
const total = rate * seconds;
const started = performance.now();
for (let n = 0; n < total; n += 1) {
  const due = started + (n * 1000) / rate;
  const wait = due - performance.now();
  if (wait > 0) await sleep(wait);
  const id = bookIds[n % bookIds.length]!;
  const title = `bench follow ${n} ${Date.now()}`;
  await withTransaction(db, async (client) => {
    await client.query('update books set title = $2, updated_at = now() where id = entity_key($1)', [id, title]);
    await recordChanges(client, [{ entity: 'book', id, operation: 'update' }]);
  });
  pending.set(title, performance.now());
}
const achieved = total / ((performance.now() - started) / 1000);
writing = false;
await poller;
follower.kill('SIGTERM');
const code = await followerExited;

// Nearest-rank percentiles; with no lags at all they read 0, but every write is then counted as lost.
const p99 = percentile(lags, 99);
const max = lags.length > 0 ? Math.max(...lags) : NaN;
const lost = total - lags.length;
console.log(`writes: ${total} at ${achieved.toFixed(0)}/s; seen: ${lags.length}; not seen within 30 s: ${lost}`);
console.log(
  `commit -> searchable: p50 ${percentile(lags, 50).toFixed(0)} ms, p95 ${percentile(lags, 95).toFixed(0)} ms, p99 ${p99.toFixed(0)} ms, max ${max.toFixed(0)} ms`,
);
console.log(`p99 target < 2000 ms: ${p99 < 2000 && lost === 0 ? 'OK' : 'MISSED'}; sync --follow exited with ${code} on SIGTERM`);
if (!existing) await es.indices.delete({ index: `${prefix}*`, ignore_unavailable: true, allow_no_indices: true }).catch(() => undefined);
await es.close();
await db.end();

// What readers read: latency of a subject's page (GET /v1/subjects/{subject}) and of trending
// (GET /v1/trending), each as a ratio against a baseline on the same catalogue in the same run:
// a subject's page against book search of the same subject sorted by readers, one per work
// (`q=subject:"…"&sort=readers`: the same documents and order, without the three aggregations);
// trending against reading its page of works by id (the hydration alone, without the ranking).
// Service functions the routes call, in-process, one call at a time. Both pages are kept as
// summaries (src/services/summaryCache.ts): the benchmark empties them first, then reports the cold
// pages (the first call of each distinct page, which computes it) apart from the warm calls (the
// calls after, served from the summary, which the run's long refresh age keeps from going stale).
//
//   node --import tsx scripts/bench/readers.ts [--editions 20000] [--seed 42] [--calls 200] [--work-dir /var/tmp/bookmeta-bench] [--keep]
//     [--database NAME [--index-prefix PREFIX]] [--only subjects|trending]
//
// Generates Open Library dumps with readers' dumps (scripts/dev/generate-openlibrary.ts), imports
// them into a database of its own, indexes it, measures, and drops the database, the indices and
// the dumps at the end (unless --keep). With --database, measures that catalogue as it is (its
// readers' dumps imported, e.g. the 10 M one of scripts/bench/openlibrary.ts), through the indices
// under --index-prefix (default: the search benchmarks', `bench-search-NAME-`), indexed first only
// when missing; it drops nothing. `--only trending` measures trending alone, which reads PostgreSQL
// only, so it needs no indices. Target at 10 M editions: p95 under 50 ms for both.

import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { Client } from '@elastic/elasticsearch';

import { importOpenLibrary } from '../../loader/import/openlibrary/import.js';
import { reindex } from '../../loader/index/reindex.js';
import { loadConfig } from '../../src/config.js';
import { TRENDING_PERIODS } from '../../src/domain/trending.js';
import { createLogger } from '../../src/log.js';
import { subjectAnswer, trendingAnswer } from '../../src/services/readers.js';
import { searchBooks } from '../../src/services/search.js';
import { indexAliases } from '../../src/stores/elasticsearch/client.js';
import { workListings } from '../../src/stores/postgres/catalogue.js';
import { createPool } from '../../src/stores/postgres/pool.js';
import { deleteKeysUnder } from '../../src/stores/redis/client.js';
import { buildServices, closeServices } from '../../src/wiring.js';
import { generateOpenLibrary } from '../dev/generate-openlibrary.js';
import { indexState, timedSequentially } from '../lib/bench.js';
import { dropDatabase, freshDatabase, loadAverage, urlOf } from '../lib/openlibraryImport.js';
import { percentile } from '../lib/percentile.js';

const { values } = parseArgs({
  options: {
    editions: { type: 'string', default: '20000' },
    seed: { type: 'string', default: '42' },
    calls: { type: 'string', default: '200' },
    'work-dir': { type: 'string', default: '/var/tmp/bookmeta-bench' },
    keep: { type: 'boolean', default: false },
    database: { type: 'string' },
    'index-prefix': { type: 'string' },
    only: { type: 'string' },
  },
});
const editions = Number(values.editions);
const seed = Number(values.seed);
const calls = Number(values.calls);
if (values.only !== undefined && values.only !== 'subjects' && values.only !== 'trending')
  throw new Error('--only takes subjects or trending');
const measured = { subjects: values.only !== 'trending', trending: values.only !== 'subjects' };
const say = (text: string) => process.stderr.write(`bench-readers: ${text}\n`);
const log = createLogger('warn');

const existing = values.database;
const name = existing ?? `bookmeta_bench_readers_${editions}_${seed}`;
const dumpDir = join(values['work-dir'], `openlibrary-readers-${editions}-${seed}`);
const indexPrefix = values['index-prefix'] ?? (existing ? `bench-search-${existing}-` : `bench-readers-${editions}-${seed}-`);

const summary = (label: string, latencies: number[]): string =>
  `${label.padEnd(20)} n=${latencies.length}  p50 ${percentile(latencies, 50).toFixed(1)} ms  p95 ${percentile(latencies, 95).toFixed(1)} ms  p99 ${percentile(latencies, 99).toFixed(1)} ms`;
const ratio = (label: string, measured: number[], baseline: number[]): string =>
  `${label} p95 ratio ${(percentile(measured, 95) / percentile(baseline, 95)).toFixed(2)}`;

async function main(): Promise<void> {
  const databaseUrl = existing ? urlOf(existing) : await freshDatabase(name);
  const config = {
    ...loadConfig({
      ...process.env,
      DATABASE_URL: databaseUrl,
      INDEX_PREFIX: indexPrefix,
      REDIS_PREFIX: 'bench-readers:',
      // A loaded machine may keep a store busy past the API's short wait: a benchmark waits rather than fails.
      STORE_WAIT_MS: '30000',
      // No page goes stale during the run: a warm call is a served summary, never one refreshing meanwhile.
      SUMMARY_REFRESH_S: String(24 * 60 * 60),
    }),
    shortCacheTtlS: 0,
    meteringEnabled: false,
  };
  let subjects: { subject: string }[] = [];
  const elastic = new Client({ node: config.elasticsearchUrl, requestTimeout: 300_000, maxRetries: 5 });
  try {
    const db = createPool(databaseUrl, 4);
    try {
      if (!existing) {
        say(`generating ${editions} editions with their readers' dumps`);
        const { files } = await generateOpenLibrary({ editions, seed }, dumpDir);
        say('importing');
        await importOpenLibrary(Object.values(files), { db, cache: null, log }, { progress: false });
        await db.query('vacuum analyze');
      }
      const aliases = indexAliases(indexPrefix);
      const indexed = await elastic.indices.existsAlias({ name: [aliases.books, aliases.authors] });
      if (measured.subjects && (!existing || !indexed)) {
        say(`indexing into ${aliases.books} and ${aliases.authors}`);
        await reindex({ db, es: elastic, aliases, log }, 'all', { progress: false });
      }
      if (measured.subjects) {
        ({ rows: subjects } = await db.query<{ subject: string }>(
          'select s as subject from works, unnest(subjects) s group by s order by count(*) desc limit 20',
        ));
      }
    } finally {
      await db.end();
    }
    const services = await buildServices(config, log);
    try {
      const asked = Array.from({ length: measured.subjects ? calls : 0 }, (_, n) => ({
        subject: subjects[n % subjects.length]!.subject,
        offset: String([0, 20, 100][n % 3]),
      }));
      const trendingAsked = Array.from({ length: measured.trending ? calls : 0 }, (_, n) => ({
        period: TRENDING_PERIODS[n % 4]!,
        offset: String([0, 20, 100][n % 3]),
      }));
      // The summaries of an earlier run (and their refresh locks) would make every page warm.
      await deleteKeysUnder(services.redis, `${config.redisPrefix}summary`);
      say(`cold pages; load ${await loadAverage()}`);
      // Each distinct page once, computed in the call, one at a time: a catalogue of millions keeps
      // each busy long enough that many at once would meet the statement timeout. Each beside its
      // baseline, so that both see the same load (one baseline for the cold and the warm calls); the
      // trending pages give the ids their baseline reads.
      const [subjectCold, search, trendingCold, hydration]: [number[], number[], number[], number[]] = [[], [], [], []];
      const firsts = <T>(queries: T[]): T[] => [...new Map(queries.map((query) => [JSON.stringify(query), query])).values()];
      const subjectBaseline = (query: { subject: string; offset: string }) => () =>
        searchBooks(services, { q: `subject:"${query.subject}"`, sort: 'readers', offset: query.offset });
      const idsOf = new Map<string, string[]>();
      const hydrationBaseline = (query: (typeof trendingAsked)[number]) => () =>
        workListings(services.db, idsOf.get(JSON.stringify(query))!);
      for (const query of firsts(asked)) {
        subjectCold.push(...(await timedSequentially([() => subjectAnswer(services, query.subject, query)])));
        search.push(...(await timedSequentially([subjectBaseline(query)])));
      }
      for (const query of firsts(trendingAsked)) {
        const started = performance.now();
        const page = await trendingAnswer(services, query);
        trendingCold.push(performance.now() - started);
        idsOf.set(
          JSON.stringify(query),
          page.results.map((entry) => entry.work.id),
        );
        hydration.push(...(await timedSequentially([hydrationBaseline(query)])));
      }
      say(`warm calls; load ${await loadAverage()}`);
      // Alternated call by call, so that the measure and its baseline see the same load.
      const [subject, trending]: [number[], number[]] = [[], []];
      for (let n = 0; n < calls; n++) {
        if (measured.subjects) {
          const query = asked[n]!;
          subject.push(...(await timedSequentially([() => subjectAnswer(services, query.subject, query)])));
          search.push(...(await timedSequentially([subjectBaseline(query)])));
        }
        if (measured.trending) {
          trending.push(...(await timedSequentially([() => trendingAnswer(services, trendingAsked[n]!)])));
          hydration.push(...(await timedSequentially([hydrationBaseline(trendingAsked[n]!)])));
        }
      }
      const where = existing ?? `${editions} generated editions`;
      if (measured.subjects) {
        const { count: indexed } = await services.elastic.count({ index: services.indices.books });
        const state = await indexState(services.elastic, services.indices.books);
        console.log(`what readers read: ${where} (${indexed} indexed), ${subjects.length} subjects; ${state}; load ${await loadAverage()}`);
        console.log(summary('subject page, cold', subjectCold));
        console.log(summary('subject page, warm', subject));
        console.log(summary('search by subject', search));
        console.log(ratio('subject page cold / search by subject', subjectCold, search));
        console.log(ratio('subject page warm / search by subject', subject, search));
      }
      if (measured.trending) {
        console.log(`what readers read: ${where}, trending; load ${await loadAverage()}`);
        console.log(summary('trending page, cold', trendingCold));
        console.log(summary('trending page, warm', trending));
        console.log(summary('works by id', hydration));
        console.log(ratio('trending cold / works by id', trendingCold, hydration));
        console.log(ratio('trending warm / works by id', trending, hydration));
      }
    } finally {
      await closeServices(services);
    }
  } finally {
    if (!values.keep && !existing) {
      await elastic.indices.delete({ index: `${indexPrefix}*`, ignore_unavailable: true, allow_no_indices: true }).catch(() => undefined);
      await dropDatabase(name);
      await rm(dumpDir, { recursive: true, force: true });
    }
    await elastic.close();
  }
}

await main();

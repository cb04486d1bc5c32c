// Latency of type-ahead suggestions, and what facets cost book search: p50/p95/p99 of the service
// functions the routes call, one call at a time, short cache off.
//
//   node --import tsx scripts/bench/suggest.ts [--count 1000000] [--seed 42] [--queries 400] [--work-dir /var/tmp/bookmeta-bench] [--database NAME]
//
// The catalogue and its indices are those of scripts/bench/search.ts (built when missing). Typed
// text comes from random books: a title's first 60 % of characters, a whole title, the first
// letters of an author's surname, and one to three letters. Facets: the search queries of
// scripts/bench/search.ts's kinds run without facets and with all five, in alternation, so that both
// see the same load; the ratio of their p95s is the cost of facets. The same pair with `editions=all`
// shows how much of it is counting works rather than editions (a distinct count per value). It
// prints which facets counted something (a generated catalogue has no subjects or publishers).
// Targets at 10 M editions: suggestions p95 under 10 ms and p99 under 25 ms; facets at most 1.5 × search p95.

import { parseArgs } from 'node:util';
import { createLogger } from '../../src/log.js';
import { buildServices, closeServices } from '../../src/wiring.js';
import { searchBooks, type BookSearchPage } from '../../src/services/search.js';
import { suggestBooks } from '../../src/services/suggest.js';
import { FACET_FIELDS } from '../../src/stores/elasticsearch/facets.js';
import { Random } from '../dev/synthetic.js';
import {
  generatedCatalogueDatabase,
  indexState,
  SEARCH_BENCH_OPTIONS,
  searchBenchConfig,
  searchIndices,
  timedSequentially,
} from '../lib/bench.js';
import { loadAverage } from '../lib/openlibraryImport.js';
import { percentile } from '../lib/percentile.js';

const { values } = parseArgs({ options: SEARCH_BENCH_OPTIONS });
const count = Number(values.count);
const seed = Number(values.seed);
const rng = new Random(seed);
const say = (text: string) => process.stderr.write(`bench-suggest: ${text}\n`);
const log = createLogger('warn');

// A node still merging a fresh index may keep a call past the API's 500 ms wait: a benchmark waits rather than fails.
const config = { ...searchBenchConfig({ count, seed, database: values.database, redisPrefix: 'bench-suggest:' }), storeWaitMs: 30_000 };

const surname = (name: string): string => name.split(' ').at(-1) ?? name;

const KINDS = ['60 % of a title', 'whole title', 'surname 3-5', '1-3 letters'] as const;

/** What a reader has typed of a book, and which of the kinds it is. */
function typed(book: { title: string; author: string | null }): { q: string; kind: (typeof KINDS)[number] } {
  const choices: [(typeof KINDS)[number], () => string][] = [
    ['60 % of a title', () => book.title.slice(0, Math.max(1, Math.ceil(book.title.length * 0.6)))],
    ['whole title', () => book.title],
    ['surname 3-5', () => surname(book.author ?? book.title).slice(0, 3 + Math.floor(rng.next() * 3))],
    ['1-3 letters', () => book.title.slice(0, 1 + Math.floor(rng.next() * 3))],
  ];
  const [kind, typing] = rng.pick(choices);
  return { q: typing().trim() || book.title, kind };
}

const summary = (label: string, latencies: number[]): string =>
  `${label.padEnd(18)} n=${latencies.length}  p50 ${percentile(latencies, 50).toFixed(1)} ms  p95 ${percentile(latencies, 95).toFixed(1)} ms  p99 ${percentile(latencies, 99).toFixed(1)} ms  max ${Math.max(...latencies).toFixed(1)} ms`;

async function main(): Promise<void> {
  if (!values.database)
    await generatedCatalogueDatabase({ databaseUrl: config.databaseUrl, count, seed, workDir: values['work-dir'], say });
  await searchIndices(config, log, say);
  const services = await buildServices(config, log);
  try {
    const { rows: books } = await services.db.query<{ title: string; author: string | null }>(
      `select b.title, (select a.name from book_authors ba join authors a on a.id = ba.author_id where ba.book_id = b.id order by ba.position limit 1) as author
         from books b tablesample system (1) repeatable ($1) where b.merged_into is null limit $2`,
      [seed, Number(values.queries)],
    );
    const prefixes = books.map(typed);
    const { count: indexed } = await services.elastic.count({ index: services.indices.books });
    say(`${indexed} books indexed; warming up`);
    await timedSequentially(
      prefixes.slice(0, 50).map(
        ({ q }) =>
          () =>
            suggestBooks(services, { q: `${q}x` }),
      ),
    );
    const suggest = await timedSequentially(
      prefixes.map(
        ({ q }) =>
          () =>
            suggestBooks(services, { q }),
      ),
    );
    const searches = books.map((book) =>
      rng.next() < 0.5 ? book.title : `${book.title.split(' ')[0]} ${surname(book.author ?? '')}`.trim(),
    );
    const [plain, faceted, plainEditions, facetedEditions]: [number[], number[], number[], number[]] = [[], [], [], []];
    const facets = FACET_FIELDS.join(',');
    // Searches whose answer had at least one value of each facet: a facet that counts nothing costs less.
    const counted = new Map(FACET_FIELDS.map((field) => [field, 0]));
    for (const q of searches) {
      plain.push(...(await timedSequentially([() => searchBooks(services, { q })])));
      let page: BookSearchPage | undefined;
      faceted.push(...(await timedSequentially([async () => (page = await searchBooks(services, { q, facets }))])));
      for (const field of FACET_FIELDS) if (page?.facets?.[field]?.length) counted.set(field, counted.get(field)! + 1);
      plainEditions.push(...(await timedSequentially([() => searchBooks(services, { q, editions: 'all' })])));
      facetedEditions.push(...(await timedSequentially([() => searchBooks(services, { q, facets, editions: 'all' })])));
    }
    console.log(
      `suggestions and facets, ${indexed} books on ${config.elasticsearchUrl} (service calls in-process, sequential, short cache off); ` +
        `${await indexState(services.elastic, services.indices.books)}; load ${await loadAverage()}`,
    );
    console.log(summary('suggest', suggest));
    for (const kind of KINDS)
      console.log(
        summary(
          `  ${kind}`,
          suggest.filter((_, at) => prefixes[at]!.kind === kind),
        ),
      );
    console.log(summary('search', plain));
    console.log(summary('search+5 facets', faceted));
    console.log(`facets with a value: ${[...counted].map(([field, n]) => `${field} ${n}/${searches.length}`).join(', ')}`);
    console.log(`facet ratio p95 ${(percentile(faceted, 95) / percentile(plain, 95)).toFixed(2)} (target ≤ 1.5)`);
    console.log(summary('editions=all', plainEditions));
    console.log(summary('  +5 facets', facetedEditions));
    console.log(`facet ratio p95, editions=all ${(percentile(facetedEditions, 95) / percentile(plainEditions, 95)).toFixed(2)}`);
  } finally {
    await closeServices(services);
  }
}

await main();

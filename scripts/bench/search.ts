// Latency of book search and match at scale: p50/p95/p99 of the service functions the routes call
// (Elasticsearch query, then the records from PostgreSQL), one call at a time, short cache off.
//
//   node --import tsx scripts/bench/search.ts [--count 1000000] [--seed 42] [--queries 400] [--work-dir /var/tmp/bookmeta-bench]
//     [--database NAME] [--profile N]
//
// The catalogue: N generated books (scripts/dev/generate-catalogue.ts) in the database
// bookmeta_bench_<N>_<seed>, the one scripts/bench/reindex.ts builds (generated and imported here when
// missing), indexed into `bench-search-<N>-<seed>-books` on ELASTICSEARCH_URL (built when missing).
// Queries come from random books of the catalogue: two title words, a whole title, a title word and
// a surname, a word with a typo, an author's name, an ISBN; match records are titles with a typo,
// case or article changed, with the author surname first, some with an ISBN.
// Targets at 1,000,000 books on one node: search p95 under 50 ms, match p95 under 100 ms.
// With --profile N, also where the time goes: each call's time against its searches' `took`, and the
// N slowest searches and matches re-run with Elasticsearch's profile API (scripts/lib/esProfile.ts).

import { parseArgs } from 'node:util';
import { createLogger } from '../../src/log.js';
import { buildServices, closeServices } from '../../src/wiring.js';
import { matchBook } from '../../src/services/match.js';
import { searchAuthors, searchBooks } from '../../src/services/search.js';
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
import { profileCall, searchTracer, tookSummary, type TracedCall } from '../lib/esProfile.js';

const { values } = parseArgs({ options: { ...SEARCH_BENCH_OPTIONS, profile: { type: 'string', default: '0' } } });
const profiled = Number(values.profile);
const count = Number(values.count);
const seed = Number(values.seed);
const rng = new Random(seed);
const random = (): number => rng.next();
const pick = <T>(items: readonly T[]): T => rng.pick(items);
const say = (text: string) => process.stderr.write(`bench-search: ${text}\n`);
const log = createLogger('warn');

const config = searchBenchConfig({ count, seed, database: values.database, redisPrefix: 'bench-search:' });

/** The generated catalogue in PostgreSQL: reused when a previous run (or scripts/bench/reindex.ts) left it. */
async function prepareDatabase(): Promise<void> {
  if (values.database) return;
  return generatedCatalogueDatabase({ databaseUrl: config.databaseUrl, count, seed, workDir: values['work-dir'], say });
}

interface SampleBook {
  title: string;
  isbn_13: string | null;
  authors: string[];
}

const words = (text: string): string[] => text.split(/\s+/).filter((word) => /^\p{L}{3,}$/u.test(word));
const surname = (name: string): string => name.split(' ').at(-1) ?? name;

function typo(word: string): string {
  const at = 1 + Math.floor(random() * (word.length - 1));
  return word.slice(0, at) + word.slice(at + 1);
}

function searchQuery(book: SampleBook): string {
  const titleWords = words(book.title);
  const author = book.authors[0] ?? 'Smith';
  const choices: (() => string)[] = [
    () => titleWords.slice(0, 2).join(' ') || book.title,
    () => book.title,
    () => `${pick(titleWords.length > 0 ? titleWords : [book.title])} ${surname(author)}`,
    () => (titleWords.length > 0 ? book.title.replace(titleWords[0]!, typo(titleWords[0]!)) : book.title),
    () => author,
    () => book.isbn_13 ?? book.title,
  ];
  return pick(choices)();
}

function matchRecord(book: SampleBook): Record<string, unknown> {
  const titleWords = words(book.title);
  const author = book.authors[0];
  const title = pick([
    () => book.title.toLowerCase(),
    () => (titleWords.length > 0 ? book.title.replace(titleWords.at(-1)!, typo(titleWords.at(-1)!)) : book.title),
    () => book.title.replace(/^(The|A|An) /, ''),
  ])();
  const record: Record<string, unknown> = { title };
  if (author) record.author = random() < 0.5 ? `${surname(author)}, ${author.split(' ').slice(0, -1).join(' ')}` : author;
  if (book.isbn_13 && random() < 0.2) record.isbn = book.isbn_13;
  return record;
}

const summary = (label: string, latencies: number[], target: number): string =>
  `${label.padEnd(7)} n=${latencies.length}  p50 ${percentile(latencies, 50).toFixed(1)} ms  p95 ${percentile(latencies, 95).toFixed(1)} ms  p99 ${percentile(latencies, 99).toFixed(1)} ms  max ${Math.max(...latencies).toFixed(1)} ms  (target p95 < ${target} ms)`;

async function whereTheTimeGoes(elastic: Parameters<typeof profileCall>[0], calls: TracedCall[]): Promise<void> {
  for (const kind of ['search', 'match']) {
    const ofKind = calls.filter((call) => call.label.startsWith(kind));
    console.log(tookSummary(kind, ofKind));
    for (const call of [...ofKind].sort((a, b) => b.ms - a.ms).slice(0, profiled)) {
      for (const line of await profileCall(elastic, call)) console.log(line);
    }
  }
}

async function main(): Promise<void> {
  await prepareDatabase();
  await searchIndices(config, log, say);
  const services = await buildServices(config, log);
  try {
    const { rows: books } = await services.db.query<SampleBook>(
      `select b.title, b.isbn_13, coalesce((select array_agg(a.name order by ba.position) from book_authors ba join authors a on a.id = ba.author_id where ba.book_id = b.id), '{}') as authors
         from books b tablesample system (1) repeatable ($1) where b.merged_into is null limit $2`,
      [seed, Number(values.queries)],
    );
    const searches = books.map((book) => searchQuery(book));
    const records = books.map((book) => matchRecord(book));
    const { count: indexed } = await services.elastic.count({ index: services.indices.books });
    say(`${indexed} books indexed; warming up`);
    await timedSequentially(searches.slice(0, 50).map((q) => () => searchBooks(services, { q: `${q} warm` })));
    const tracer = profiled > 0 ? searchTracer(services.elastic) : null;
    const traced = <T>(label: string, call: () => Promise<T>) => (tracer ? () => tracer.traced(label, call) : call);
    const search = await timedSequentially(searches.map((q) => traced(`search ${JSON.stringify(q)}`, () => searchBooks(services, { q }))));
    const match = await timedSequentially(
      records.map((record) => traced(`match ${JSON.stringify(record)}`, () => matchBook(services, record))),
    );
    // Author queries: a name as written, or its surname alone.
    const names = books.flatMap((book) => book.authors.slice(0, 1)).map((name) => (random() < 0.7 ? name : surname(name)));
    const authors = await timedSequentially(names.map((q) => () => searchAuthors(services, { q })));
    console.log(
      `search and match latency, ${indexed} books on ${config.elasticsearchUrl} (service calls in-process, sequential, short cache off); ` +
        `${await indexState(services.elastic, services.indices.books)}; load ${await loadAverage()}`,
    );
    console.log(summary('search', search, 50));
    console.log(summary('match', match, 100));
    console.log(summary('authors', authors, 50));
    if (tracer) await whereTheTimeGoes(services.elastic, tracer.calls);
  } finally {
    await closeServices(services);
  }
}

await main();

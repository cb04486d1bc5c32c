// Throughput of match records sent as batches (POST /v1/match/batch, 50 records a request) against
// the same records sent one by one (POST /v1/match), on one API process in one run on this machine,
// in records matched per second. The two alternate in short rounds, so a change in the machine's
// load during the run weighs on both alike. The short cache is off: every record is matched.
// Records are noisy references to books of the goodbooks sample (case, a typo, a dropped article,
// the author surname first, sometimes a year or an ISBN), some of them needing the typo round.
// Single requests have 8 connections, batches 2 (100 records in flight): both keep the two cores
// busy, while 8 batches at once (400 records) measure mostly how long each waits behind the others,
// past the store wait of its _msearch (docs/operations.md, Failure modes) on a loaded machine. Rounds are 10 s: a
// round ends with its requests in flight unanswered, a larger share of the work of a 5 s round for
// batches of most of a second than for single requests.
// Target: batches at least 3 times the records per second of single requests.
// Run: ELASTICSEARCH_URL=... node --import tsx scripts/bench/batch.ts [--seconds 40] [--rounds 4] [--connections 8] [--batch-connections 2] [--seed 7]
import { parseArgs } from 'node:util';
import { Client } from '@elastic/elasticsearch';
import { reindex } from '../../loader/index/reindex.js';
import { createLogger } from '../../src/log.js';
import { indexAliases } from '../../src/stores/elasticsearch/client.js';
import { Random } from '../dev/synthetic.js';
import { benchDatabase, benchKey, benchRedisPrefix, importSampleBooks, startApi } from '../lib/bench.js';
import { alternate, formatLoad, type LoadRequest, type LoadResult } from './lib/load.js';

const { values } = parseArgs({
  options: {
    seconds: { type: 'string', default: '40' },
    rounds: { type: 'string', default: '4' },
    connections: { type: 'string', default: '8' },
    'batch-connections': { type: 'string', default: '2' },
    seed: { type: 'string', default: '7' },
  },
});
const rounds = Number(values.rounds);
const roundS = Number(values.seconds) / rounds;
const connections = Number(values.connections);
const batchConnections = Number(values['batch-connections']);
const rng = new Random(Number(values.seed));
const BATCH = 50;

const elasticsearchUrl = process.env.ELASTICSEARCH_URL || 'http://127.0.0.1:9200';
const indexPrefix = `bench-batch-${process.pid}-`;
const aliases = indexAliases(indexPrefix);

interface SampleBook {
  title: string;
  isbn_13: string | null;
  year: number | null;
  author: string | null;
}

const typo = (word: string): string => {
  const at = 1 + Math.floor(rng.next() * (word.length - 1));
  return word.slice(0, at) + word.slice(at + 1);
};

function record(book: SampleBook): Record<string, unknown> {
  const words = book.title.split(' ').filter((word) => /^\p{L}{5,}$/u.test(word));
  const title = rng.pick([
    () => book.title.toLowerCase(),
    () => (words.length > 0 ? book.title.replace(words.at(-1)!, typo(words.at(-1)!)) : book.title),
    () => book.title.replace(/^(The|A|An) /, ''),
  ])();
  const fields: Record<string, unknown> = { title };
  if (book.author) {
    const parts = book.author.split(' ');
    fields.author = rng.next() < 0.5 ? `${parts.at(-1)}, ${parts.slice(0, -1).join(' ')}` : book.author;
  }
  if (book.year !== null && rng.next() < 0.3) fields.year = book.year;
  if (book.isbn_13 && rng.next() < 0.2) fields.isbn = book.isbn_13;
  return fields;
}

const database = await benchDatabase('bookmeta_bench_batch');
const redis = benchRedisPrefix('bench-batch');
const elastic = new Client({ node: elasticsearchUrl, requestTimeout: 300_000 });
let api: Awaited<ReturnType<typeof startApi>> | undefined;
try {
  await importSampleBooks(database.db);
  await reindex({ db: database.db, es: elastic, aliases, log: createLogger('warn') }, 'books', { progress: false });
  const auth = await benchKey(database.db);
  const { rows: books } = await database.db.query<SampleBook>(
    `select b.title, b.isbn_13, b.year,
            (select a.name from book_authors ba join authors a on a.id = ba.author_id where ba.book_id = b.id order by ba.position limit 1) as author
       from books b where b.merged_into is null order by md5(public_id(b.id) || $1) limit $2`,
    [values.seed, BATCH],
  );
  const records = books.map(record);
  api = await startApi({
    DATABASE_URL: database.url,
    INDEX_PREFIX: indexPrefix,
    RATE_LIMIT_MAX: '1000000000',
    REDIS_PREFIX: redis.prefix,
    SHORT_CACHE_TTL_S: '0',
  });

  const headers = { ...auth, 'Content-Type': 'application/json' };
  const bodies = records.map((fields) => JSON.stringify(fields));
  let next = 0;
  const single: LoadRequest = {
    label: 'POST /v1/match (one record)',
    url: `${api.url}/v1/match`,
    method: 'POST',
    headers,
    nextBody: () => bodies[next++ % bodies.length]!,
  };
  const batch: LoadRequest = {
    label: `POST /v1/match/batch (${BATCH} records)`,
    url: `${api.url}/v1/match/batch`,
    method: 'POST',
    headers,
    body: JSON.stringify({ records }),
    connections: batchConnections,
  };

  // The batch must answer each record exactly as the single route does before its speed means anything.
  const batchAnswer = (await (await fetch(batch.url, { method: 'POST', headers, body: batch.body })).json()) as { results: unknown[] };
  // One at a time: fifty at once would be a burst the measured load never makes.
  const singleAnswers: unknown[] = [];
  for (const body of bodies) singleAnswers.push(await (await fetch(single.url, { method: 'POST', headers, body })).json());
  const differs = singleAnswers.findIndex((answer, index) => JSON.stringify(answer) !== JSON.stringify(batchAnswer.results?.[index]));
  if (differs >= 0) {
    const shown = (answer: unknown) => JSON.stringify(answer)?.slice(0, 300);
    throw new Error(
      `the batch answers record ${differs} otherwise than the single route: ${shown(batchAnswer.results?.[differs] ?? batchAnswer)} vs ${shown(singleAnswers[differs])}`,
    );
  }
  const matched = singleAnswers.filter((answer) => (answer as { match: unknown }).match !== null).length;

  const [one, many] = (await alternate([single, batch], { rounds, roundS, connections })) as [LoadResult, LoadResult];
  console.log(
    `${BATCH} records (${matched} matched), ${rounds} alternating rounds of ${roundS} s each, ${connections} connections one by one, ${batchConnections} in batches, short cache off`,
  );
  console.log(formatLoad(one));
  console.log(formatLoad(many));
  const singleRecords = one.rps;
  const batchRecords = many.rps * BATCH;
  console.log('');
  console.log(`records/s: one by one ${singleRecords.toFixed(0)}, in batches ${batchRecords.toFixed(0)}`);
  console.log(`batch / one-by-one throughput: ${(batchRecords / singleRecords).toFixed(2)}  (target >= 3)`);
  if (one.failures + many.failures > 0) {
    // A failed answer (a 503 past the store wait) is quick and counted as one answered: the ratio is then no figure.
    console.log(
      `failed answers: ${one.failures} one by one, ${many.failures} batches; the ratio above counts them as answered and is not valid`,
    );
    process.exitCode = 1;
  }
} finally {
  await api?.stop();
  await elastic.indices.delete({ index: `${indexPrefix}*`, ignore_unavailable: true, allow_no_indices: true }).catch(() => undefined);
  await elastic.close();
  await redis.drop();
  await database.drop();
}

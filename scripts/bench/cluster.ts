// Reindex, sync and search against a local cluster of three Elasticsearch nodes (scripts/dev/es-node
// cluster start) with 3 shards and 1 replica, while one node is stopped mid-run: what an operator
// who outgrows one node gets. Each phase is timed against the same phase with every node up, in
// the same run.
//
//   node --import tsx scripts/bench/cluster.ts [--count 100000] [--seed 42] [--seconds 20]
//
// The catalogue: N generated books in bookmeta_bench_<N>_<seed> (shared with scripts/bench/search.ts).
// Writes during the run: a few thousand more generated books imported while search runs, which the
// change feed carries to the cluster (sync). The stopped node is started again at the end.
import { execFile, execFileSync } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createWriteStream } from 'node:fs';
import { finished } from 'node:stream/promises';
import { parseArgs, promisify } from 'node:util';
import { goodbooks } from '../../loader/import/goodbooks.js';
import { importCatalogue } from '../../loader/import/importer.js';
import { reindex } from '../../loader/index/reindex.js';
import { ensureAliases, syncOnce, type LoaderDeps } from '../../loader/index/sync.js';
import { dropIndex, physicalPattern } from '../../loader/stores/elasticsearch/indices.js';
import { createLogger } from '../../src/log.js';
import { projectPath } from '../../src/paths.js';
import { createElastic, indexAliases } from '../../src/stores/elasticsearch/client.js';
import { createPool } from '../../src/stores/postgres/pool.js';
import { generateCatalogue } from '../dev/generate-catalogue.js';
import { generatedCatalogueDatabase } from '../lib/bench.js';
import { percentile } from '../lib/percentile.js';

const { values } = parseArgs({
  options: {
    count: { type: 'string', default: '100000' },
    seed: { type: 'string', default: '42' },
    seconds: { type: 'string', default: '20' },
    'work-dir': { type: 'string', default: '/var/tmp/bookmeta-bench' },
  },
});
const count = Number(values.count);
const seconds = Number(values.seconds);
const say = (text: string) => process.stderr.write(`bench-cluster: ${text}\n`);
const esNode = projectPath('scripts', 'dev', 'es-node');
const clusterDir = process.env.ES_CLUSTER_DIR ?? '/var/tmp/bookmeta-es-cluster';

say('starting (or reusing) the three-node cluster');
const urls = execFileSync(esNode, ['cluster', 'start'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] })
  .trim()
  .split('\n')
  .at(-1)!;
const databaseUrl = new URL(process.env.DATABASE_URL || 'postgres://postgres@127.0.0.1:5432/bookmeta');
databaseUrl.pathname = `/bookmeta_bench_${count}_${values.seed}`;
await generatedCatalogueDatabase({
  databaseUrl: databaseUrl.toString(),
  count,
  seed: Number(values.seed),
  workDir: values['work-dir'],
  say,
});

const db = createPool(databaseUrl.toString(), 4);
// Patient, as the loader is: a node leaving the cluster holds requests until its shards move.
const es = createElastic(urls);
const aliases = indexAliases('bench-cluster-');
const deps: LoaderDeps = { db, es, aliases, log: createLogger('warn'), shape: { shards: 3, replicas: 1 } };

async function timedReindex(label: string): Promise<number> {
  const started = performance.now();
  const [result] = await reindex(deps, 'books', { progress: false });
  const rate = result!.documents / ((performance.now() - started) / 1000);
  say(`${label}: reindexed ${result!.documents} books at ${rate.toFixed(0)} docs/s`);
  return rate;
}

/** Searches the alias one at a time for `durationS`, calling `midway` halfway; latencies of the answers before and after it. */
async function searchLoad(durationS: number, midway: () => void): Promise<{ before: number[]; after: number[]; failed: number }> {
  const words = ['love', 'night', 'house', 'war', 'river', 'king', 'garden', 'secret', 'winter', 'city'];
  const result = { before: [] as number[], after: [] as number[], failed: 0 };
  const end = Date.now() + durationS * 1000;
  let halfway = false;
  for (let index = 0; Date.now() < end; index++) {
    if (!halfway && Date.now() > end - (durationS * 1000) / 2) {
      halfway = true;
      midway();
    }
    const started = performance.now();
    try {
      await es.search({
        index: aliases.books,
        size: 10,
        query: { match: { all_text: `${words[index % words.length]} ${words[(index * 7) % words.length]}` } },
      });
      (halfway ? result.after : result.before).push(performance.now() - started);
    } catch {
      result.failed += 1;
    }
  }
  return result;
}

/** More books, through the importer, so that the change feed has something for sync to carry. */
async function importMoreBooks(howMany: number): Promise<void> {
  const dir = await mkdtemp(join(tmpdir(), 'bench-cluster-'));
  try {
    const file = join(dir, 'more.csv');
    const out = createWriteStream(file);
    await generateCatalogue({ count: howMany, seed: Date.now() % 1_000_000 }, out);
    out.end();
    await finished(out);
    await importCatalogue(goodbooks, file, { db, cache: null, log: createLogger('warn') });
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

// Asynchronous: the searches keep running while the node shuts down.
const stopNode = (n: number) =>
  promisify(execFile)(esNode, ['stop'], { env: { ...process.env, ES_DIR: `${clusterDir}/node${n}` } }).then(() => undefined);

try {
  await ensureAliases(deps);
  const allUp = await timedReindex('all three nodes up');
  await syncOnce(deps);
  const steady = await searchLoad(Math.min(6, seconds), () => undefined);

  say(`searching for ${seconds} s while importing more books; node2 stops halfway`);
  let stopped: Promise<void> = Promise.resolve();
  const writes = importMoreBooks(3_000);
  const load = await searchLoad(seconds, () => {
    stopped = stopNode(2);
  });
  await stopped;
  await writes;
  const syncStarted = performance.now();
  const synced = await syncOnce(deps);
  say(`sync with node2 down: ${synced.changes} changes in ${((performance.now() - syncStarted) / 1000).toFixed(1)} s`);
  const oneDown = await timedReindex('node2 down');
  const health = await es.cluster.health();

  const p95 = (latencies: number[]) => (latencies.length > 0 ? percentile(latencies, 95).toFixed(1) : 'n/a');
  console.log('| What | All nodes up | One node stopped |');
  console.log('|---|---|---|');
  console.log(`| reindex, docs/s | ${allUp.toFixed(0)} | ${oneDown.toFixed(0)} (${(oneDown / allUp).toFixed(2)}×) |`);
  console.log(
    `| search p95, ms (searches) | ${p95(steady.before)} (${steady.before.length}) | before the stop ${p95(load.before)} (${load.before.length}), after ${p95(load.after)} (${load.after.length}) |`,
  );
  console.log(`| failed searches | ${steady.failed} | ${load.failed} |`);
  console.log(`| sync | — | ${synced.changes} changes applied |`);
  console.log(`| cluster health after | — | ${health.status}, ${health.number_of_nodes} nodes |`);
} finally {
  for (const index of Object.keys(
    await es.indices.get({ index: physicalPattern(aliases.books), ignore_unavailable: true }).catch(() => ({})),
  ))
    await dropIndex(es, index).catch(() => undefined);
  for (const index of Object.keys(
    await es.indices.get({ index: physicalPattern(aliases.authors), ignore_unavailable: true }).catch(() => ({})),
  ))
    await dropIndex(es, index).catch(() => undefined);
  await es.close();
  await db.end();
  say('starting node2 again');
  execFileSync(esNode, ['cluster', 'start'], { stdio: 'ignore' });
}

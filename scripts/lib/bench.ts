import { spawn, type ChildProcess } from 'node:child_process';
import { createWriteStream, existsSync } from 'node:fs';
import { mkdir, readFile, rename } from 'node:fs/promises';
import { join } from 'node:path';
import { finished } from 'node:stream/promises';
import { createInterface } from 'node:readline';
import pg from 'pg';
import { Client } from '@elastic/elasticsearch';
import { reindex } from '../../loader/index/reindex.js';
import type { Config } from '../../src/config.js';
import type { Logger } from '../../src/log.js';
import { indexAliases } from '../../src/stores/elasticsearch/client.js';
import { goodbooks } from '../../loader/import/goodbooks.js';
import { importCatalogue } from '../../loader/import/importer.js';
import { loadConfig } from '../../src/config.js';
import { createLogger } from '../../src/log.js';
import { connectRedis, deleteKeysUnder } from '../../src/stores/redis/client.js';
import { projectPath } from '../../src/paths.js';
import { generateCatalogue } from '../dev/generate-catalogue.js';
import { issueApiKey } from '../../src/services/apiKeys.js';
import { ensureDatabase, migrate } from '../../src/stores/postgres/migrate.js';
import { createPool, type Pool } from '../../src/stores/postgres/pool.js';

/** What the benchmarks share: a scratch database with the sample catalogue, a key, server processes. */

export const ADMIN_URL = process.env.BENCH_ADMIN_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';

export interface BenchDatabase {
  url: string;
  db: Pool;
  drop(): Promise<void>;
}

/** A fresh database named `name`, migrated (dropped first if a previous run left it). */
export async function benchDatabase(name: string): Promise<BenchDatabase> {
  const admin = new pg.Client({ connectionString: ADMIN_URL });
  await admin.connect();
  await admin.query(`drop database if exists ${pg.escapeIdentifier(name)} with (force)`);
  await admin.end();
  const url = new URL(ADMIN_URL);
  url.pathname = `/${name}`;
  await ensureDatabase(url.toString());
  const db = createPool(url.toString(), 4);
  await migrate(db);
  return {
    url: url.toString(),
    db,
    async drop() {
      await db.end();
      const client = new pg.Client({ connectionString: ADMIN_URL });
      await client.connect();
      await client.query(`drop database if exists ${pg.escapeIdentifier(name)} with (force)`);
      await client.end();
    },
  };
}

/**
 * Imports the goodbooks sample, then settles PostgreSQL: statistics gathered and the import's dirty
 * pages written now, so that autovacuum and the checkpointer do not do it during the measurement.
 */
export async function importSampleBooks(db: Pool): Promise<void> {
  await importCatalogue(goodbooks, projectPath('data', 'goodbooks-10k', 'books.csv'), { db, cache: null, log: createLogger('silent') });
  await db.query('vacuum analyze');
  await db.query('checkpoint').catch(() => undefined); // needs a superuser; without one, only less settled
}

export async function benchKey(db: Pool): Promise<Record<string, string>> {
  const { key } = await issueApiKey(db, 'bench');
  return { Authorization: `Bearer ${key}` };
}

export interface BenchServer {
  url: string;
  /** The server's process, whose CPU time a benchmark may read. */
  pid: number;
  stop(): Promise<void>;
}

/** Starts a process running `script` (TypeScript through tsx) and waits until `ready` finds its URL in a line of output. */
export function startProcess(
  args: string[],
  env: NodeJS.ProcessEnv,
  stream: 'stdout' | 'stderr',
  ready: (line: string) => string | null,
): Promise<BenchServer> {
  const child: ChildProcess = spawn(process.execPath, ['--import', 'tsx', ...args], {
    env,
    cwd: projectPath(),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const exited = new Promise<void>((resolve) => child.on('exit', () => resolve()));
  // The other stream is drained unread: a full pipe would stall a process that writes to it.
  child[stream === 'stdout' ? 'stderr' : 'stdout']!.resume();
  return new Promise((resolve, reject) => {
    const lines = createInterface({ input: child[stream]! });
    lines.on('line', (line) => {
      const url = ready(line);
      if (!url) return;
      // From here on the output is only drained, not parsed: reading a server's log line by line
      // would load the benchmark's own process, which also generates the load.
      lines.close();
      child[stream]!.resume();
      resolve({
        url,
        pid: child.pid!,
        stop: async () => {
          child.kill('SIGTERM');
          await exited;
        },
      });
    });
    child.on('exit', (code) => reject(new Error(`${args.join(' ')} exited with ${code} before it was ready`)));
  });
}

/** `bookmeta serve` on a free port with the given settings. */
export function startApi(env: NodeJS.ProcessEnv): Promise<BenchServer> {
  return startProcess(['loader/cli.ts', 'serve'], { ...process.env, PORT: '0', LOG_LEVEL: 'info', ...env }, 'stderr', (line) => {
    try {
      const entry = JSON.parse(line) as { msg?: string; url?: string };
      return entry.msg === 'listening' ? (entry.url ?? null) : null;
    } catch {
      return null;
    }
  });
}

const printedPort = (line: string): string | null => (/^\d+$/.test(line) ? `http://127.0.0.1:${line}` : null);

export function startBareKoa(body: string): Promise<BenchServer> {
  return startProcess(['scripts/bench/bareKoa.ts'], { ...process.env, BARE_BODY: body }, 'stdout', printedPort);
}

/** The cached lookup's own middlewares alone (scripts/bench/partsOnly.ts), with the given settings. */
export function startPartsOnly(env: NodeJS.ProcessEnv): Promise<BenchServer> {
  return startProcess(['scripts/bench/partsOnly.ts'], { ...process.env, LOG_LEVEL: 'info', ...env }, 'stdout', printedPort);
}

/** A Redis prefix of this run's own (answers cached by an earlier run would show its catalogue), and its removal. */
export function benchRedisPrefix(name: string): { prefix: string; drop(): Promise<void> } {
  const prefix = `${name}:${process.pid}:`;
  return {
    prefix,
    async drop() {
      const redis = await connectRedis(loadConfig().redisUrl);
      await deleteKeysUnder(redis, prefix);
      await redis.quit();
    },
  };
}

/**
 * A database holding `count` generated books (seed `seed`), the scale benchmarks' catalogue: reused
 * when a previous run left it, else generated into `workDir` (kept for reruns) and imported.
 */
export async function generatedCatalogueDatabase(options: {
  databaseUrl: string;
  count: number;
  seed: number;
  workDir: string;
  say: (line: string) => void;
}): Promise<void> {
  const { databaseUrl, count, seed, workDir, say } = options;
  await ensureDatabase(databaseUrl);
  const db = createPool(databaseUrl, 4);
  try {
    await migrate(db);
    const { rows } = await db.query<{ n: number }>('select count(*)::int as n from books');
    if (rows[0]!.n >= count * 0.99) {
      say(`database already holds ${rows[0]!.n} books`);
      return;
    }
    await mkdir(workDir, { recursive: true });
    const csv = join(workDir, `catalogue-${count}-${seed}.csv`);
    if (!existsSync(csv)) {
      say(`generating ${count} books into ${csv}`);
      const out = createWriteStream(`${csv}.part`);
      await generateCatalogue({ count, seed }, out);
      out.end();
      await finished(out);
      await rename(`${csv}.part`, csv);
    }
    say('importing them with the goodbooks importer');
    const started = performance.now();
    const report = await importCatalogue(goodbooks, csv, { db, cache: null, log: createLogger('warn') });
    say(`imported ${report.imported} rows (${report.rejected.length} rejected) in ${((performance.now() - started) / 1000).toFixed(0)} s`);
    await db.query('vacuum analyze');
  } finally {
    await db.end();
  }
}

/** The peak RSS (VmHWM, kB) of process `pid`, sampled every 100 ms until `exited` settles. */
export async function peakRssKb(pid: number, exited: Promise<unknown>): Promise<number> {
  let peakKb = 0;
  let running = true;
  void exited.then(() => (running = false));
  while (running) {
    try {
      const match = /VmHWM:\s+(\d+) kB/.exec(await readFile(`/proc/${pid}/status`, 'utf8'));
      if (match) peakKb = Math.max(peakKb, Number(match[1]));
    } catch {
      // exited between the check and the read
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return peakKb;
}

/** Runs a command to its end, as its own process: wall seconds, what it printed on stdout, its peak RSS. stderr passes through. */
export async function runMeasured(
  command: string,
  args: string[],
  env: NodeJS.ProcessEnv,
): Promise<{ code: number | null; stdout: string; seconds: number; peakRssMb: number }> {
  const child = spawn(command, args, { env, cwd: projectPath(), stdio: ['ignore', 'pipe', 'inherit'] });
  let stdout = '';
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  const started = performance.now();
  const exited = new Promise<number | null>((resolve) => child.on('exit', resolve));
  const peakKb = await peakRssKb(child.pid!, exited);
  const code = await exited;
  return { code, stdout, seconds: (performance.now() - started) / 1000, peakRssMb: peakKb / 1024 };
}

/** CPU seconds (user and system) process `pid` has used so far, from /proc (clock ticks of 1/100 s). */
export async function cpuSeconds(pid: number): Promise<number> {
  const stat = await readFile(`/proc/${pid}/stat`, 'utf8');
  // The fields after the command name (which may hold spaces): state is the 3rd, utime the 14th, stime the 15th.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) / 100;
}

/** Latencies in ms of calls made one after another. */
export async function timedSequentially(calls: (() => Promise<unknown>)[]): Promise<number[]> {
  const latencies: number[] = [];
  for (const call of calls) {
    const started = performance.now();
    await call();
    latencies.push(performance.now() - started);
  }
  return latencies;
}

/** The command line of the benchmarks over the search benchmarks' catalogue (search.ts, suggest.ts), for parseArgs. */
export const SEARCH_BENCH_OPTIONS = {
  count: { type: 'string', default: '1000000' },
  seed: { type: 'string', default: '42' },
  queries: { type: 'string', default: '400' },
  'work-dir': { type: 'string', default: '/var/tmp/bookmeta-bench' },
  // An existing catalogue instead of a generated one (an Open Library import: scripts/bench/openlibrary.ts).
  database: { type: 'string' },
} as const;

/**
 * The configuration of a benchmark over the search benchmarks' catalogue: the generated one of
 * `count` books from `seed` (or an existing `database`), its indices under one prefix shared by
 * those benchmarks, its own Redis prefix, short cache and metering off.
 */
export function searchBenchConfig(options: { count: number; seed: number; database?: string; redisPrefix: string }): Config {
  const { count, seed, database, redisPrefix } = options;
  const databaseUrl = new URL(process.env.DATABASE_URL || 'postgres://postgres@127.0.0.1:5432/bookmeta');
  databaseUrl.pathname = `/${database ?? `bookmeta_bench_${count}_${seed}`}`;
  return {
    ...loadConfig({
      ...process.env,
      DATABASE_URL: databaseUrl.toString(),
      INDEX_PREFIX: `bench-search-${database ?? `${count}-${seed}`}-`,
      REDIS_PREFIX: redisPrefix,
    }),
    shortCacheTtlS: 0,
    meteringEnabled: false,
  };
}

/** The search indices of a benchmark's catalogue under its prefix: built from its database when missing. */
export async function searchIndices(config: Config, log: Logger, say: (text: string) => void): Promise<void> {
  // Patient: a node busy merging segments may take longer than the API's 30 s to accept a bulk request.
  const elastic = new Client({ node: config.elasticsearchUrl, requestTimeout: 300_000, maxRetries: 5 });
  const aliases = indexAliases(config.indexPrefix);
  try {
    if ((await elastic.indices.existsAlias({ name: aliases.books })) && (await elastic.indices.existsAlias({ name: aliases.authors })))
      return;
    say(`indexing into ${aliases.books} and ${aliases.authors} on ${config.elasticsearchUrl}`);
    const db = createPool(config.databaseUrl, 4);
    try {
      await reindex({ db, es: elastic, aliases, log }, 'all', { progress: true });
    } finally {
      await db.end();
    }
  } finally {
    await elastic.close();
  }
}

/**
 * What a latency figure was taken with: the segments of an index's primaries and the heap of the
 * cluster's nodes (used of max), e.g. "12 segments, heap 0.9 of 2.0 GB".
 */
export async function indexState(elastic: Client, index: string): Promise<string> {
  const stats = await elastic.indices.stats({ index, metric: ['segments'] });
  const nodes = await elastic.nodes.stats({ metric: ['jvm'] });
  const heap = Object.values(nodes.nodes).map((node) => node.jvm?.mem);
  const gb = (bytes: number) => (bytes / 2 ** 30).toFixed(1);
  const used = heap.reduce((sum, mem) => sum + (mem?.heap_used_in_bytes ?? 0), 0);
  const max = heap.reduce((sum, mem) => sum + (mem?.heap_max_in_bytes ?? 0), 0);
  return `${stats._all.primaries?.segments?.count ?? 0} segments, heap ${gb(used)} of ${gb(max)} GB`;
}

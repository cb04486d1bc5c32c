import test from 'ava';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { pino } from 'pino';

import { importOpenLibrary } from '../loader/import/openlibrary/import.js';
import { reindex } from '../loader/index/reindex.js';
import type { Config } from '../src/config.js';
import { createLogger, loggerOptions } from '../src/log.js';
import { projectPath } from '../src/paths.js';
import { startServer, type RunningServer } from '../src/server.js';
import { useApi, startTestServer } from './helpers/env.js';
import { eventually } from './helpers/eventually.js';
import { RedisProcess, TcpProxy } from './helpers/faults.js';
import { loaderDeps, type TestLoaderDeps } from './helpers/indexing.js';
import { callTool, connect } from './helpers/mcp.js';
import { scrape, value } from './helpers/scrape.js';

/**
 * The summaries of a subject's page and of trending (issue 29, item 5): kept in Redis, served as
 * kept within the refresh age whatever the catalogue does meanwhile, served once more and
 * recomputed in the background past it, by one caller across instances, and computed in the
 * request when Redis is away; a refresh that fails leaves the kept page in place. Each test changes the catalogue by importing a new reading log,
 * which changes trending and the readers of the subject's works, and compares with a server that
 * keeps no summaries (SUMMARY_REFRESH_S=0): the catalogue's answer now.
 */

const log = createLogger('silent');
const sample = (name: string) => projectPath('data', 'openlibrary', `ol_dump_${name}_sample.txt`);
// Small enough for a test to wait out, long enough for a loaded machine to read a page within it.
const SHORT_REFRESH_S = 2;

let deps: TestLoaderDeps;
let scratch: string;
const api = useApi(test, {
  server: { rateLimitMax: 1_000_000, summaryRefreshS: 3_600, metricsPort: 0 },
  prepare: async (world) => {
    scratch = await mkdtemp(join(tmpdir(), 'bookmeta-summaries-'));
    const paths = ['authors', 'works', 'editions', 'reading-log', 'ratings'].map(sample);
    await importOpenLibrary(paths, { db: world.db, cache: world.cache, log }, { progress: false });
    deps = loaderDeps(world);
    await reindex(deps, 'all', { progress: false });
  },
});

/** Servers beside `api` on the same world (same Redis prefix), started once `api` is: one keeping nothing, two refreshing often. */
let uncached: RunningServer;
let often: [RunningServer, RunningServer];
const started: RunningServer[] = [];
const start = async (overrides: Partial<Config>): Promise<RunningServer> => {
  const server = await startTestServer(api.world, { rateLimitMax: 1_000_000, ...overrides });
  started.push(server);
  return server;
};
test.serial.beforeEach(async () => {
  uncached ??= await start({ summaryRefreshS: 0 });
  often ??= [
    await start({ summaryRefreshS: SHORT_REFRESH_S, metricsPort: 0 }),
    await start({ summaryRefreshS: SHORT_REFRESH_S, metricsPort: 0 }),
  ];
});
test.after.always(async () => {
  await Promise.all(started.map((server) => server.stop()));
  await deps?.close();
  if (scratch) await rm(scratch, { recursive: true, force: true });
});

const get = (server: RunningServer, path: string, headers: Record<string, string> = {}): Promise<Response> =>
  fetch(`${server.url}${path}`, { headers: { ...api.auth, ...headers } });

async function page(server: RunningServer, path: string): Promise<unknown> {
  const response = await get(server, path);
  if (response.status !== 200) throw new Error(`${path}: ${response.status} ${await response.text()}`);
  return response.json();
}

let logsImported = 0;
/**
 * Imports a reading log of one new day (a later one each time, after the sample's), the whole reading log from then on:
 * one entry of The Hunger Games and `introductionReaders` of An introduction to poetry (a Poetry work).
 */
async function newReadingLog(introductionReaders: number): Promise<void> {
  const day = new Date(Date.UTC(2024, 2, 31 + logsImported++)).toISOString().slice(0, 10);
  const entries = [
    `/works/OL5735363W\t\\N\tWant to Read\t${day}`,
    ...Array.from({ length: introductionReaders }, () => `/works/OL2010880W\t\\N\tAlready Read\t${day}`),
  ];
  const file = join(scratch, `ol_dump_reading-log_${day}.txt`);
  await writeFile(file, `${entries.join('\n')}\n`);
  await importOpenLibrary([file], { db: api.world.db, cache: api.world.cache, log }, { progress: false });
}

/** Summaries a server computed of a kind (`subject`, `trending`), `when` cold or in a background refresh. */
async function computed(server: RunningServer, summary: string, when: 'cold' | 'refresh'): Promise<number> {
  return value(await scrape(server.metricsUrl!), 'bookmeta_summary_computations_total', { summary, when }) ?? 0;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, Math.max(0, ms)));

test.serial(
  'within the refresh age a page is served as kept, over HTTP and MCP, with its ETag, though the catalogue changed since',
  async (t) => {
    const paths = ['/v1/subjects/Poetry', '/v1/trending?period=year'];
    const first = await Promise.all(paths.map((path) => get(api.server, path)));
    const kept = await Promise.all(first.map((response) => response.json()));
    await newReadingLog(0);
    const now = await Promise.all(paths.map((path) => page(uncached, path)));
    t.notDeepEqual(now[0], kept[0], "the catalogue's subject page changed");
    t.notDeepEqual(now[1], kept[1], "the catalogue's trending changed");

    for (const [at, path] of paths.entries()) {
      t.deepEqual(await page(api.server, path), kept[at], path);
      const etag = first[at]!.headers.get('etag')!;
      t.is((await get(api.server, path, { 'If-None-Match': etag })).status, 304, path);
    }
    const { client } = await connect(api.server.url, api.auth);
    try {
      const tool = async (name: string, args: Record<string, unknown>) =>
        JSON.parse((await callTool(client, name, args)).content[0]!.text) as unknown;
      t.deepEqual(await tool('subject_works', { subject: 'Poetry' }), kept[0]);
      t.deepEqual(await tool('trending_works', { period: 'year' }), kept[1]);
    } finally {
      await client.close();
    }
    // Each computed once, in its first request; nothing refreshed.
    for (const summary of ['subject', 'trending']) {
      t.is(await computed(api.server, summary, 'cold'), 1, summary);
      t.is(await computed(api.server, summary, 'refresh'), 0, summary);
    }
  },
);

test.serial('a page asked for many times at once before it is kept is computed once on an instance, and all get it', async (t) => {
  const paths = { subject: '/v1/subjects/Poetry?limit=11', trending: '/v1/trending?period=year&limit=11' };
  const before = { subject: await computed(api.server, 'subject', 'cold'), trending: await computed(api.server, 'trending', 'cold') };
  const asked = Array.from({ length: 12 }, (_, n): keyof typeof paths => (n % 2 === 0 ? 'subject' : 'trending'));
  const answers = await Promise.all(asked.map((summary) => page(api.server, paths[summary])));
  for (const [n, summary] of asked.entries()) t.deepEqual(answers[n], answers[summary === 'subject' ? 0 : 1], `request ${n}`);
  t.is((await computed(api.server, 'subject', 'cold')) - before.subject, 1);
  t.is((await computed(api.server, 'trending', 'cold')) - before.trending, 1);
});

test.serial('past the refresh age the kept page is served once more, then replaced by the one computed in the background', async (t) => {
  const [server] = often;
  const paths = ['/v1/subjects/Poetry?limit=5', '/v1/trending?period=month'];
  const first = await Promise.all(paths.map((path) => get(server, path)));
  const keptAt = Date.now();
  const kept = await Promise.all(first.map((response) => response.json()));
  await newReadingLog(2);
  const now = await Promise.all(paths.map((path) => page(uncached, path)));
  t.notDeepEqual(now, kept);

  await sleep(keptAt + SHORT_REFRESH_S * 1_000 + 200 - Date.now());
  t.deepEqual(await Promise.all(paths.map((path) => page(server, path))), kept, 'served stale');
  for (const [at, path] of paths.entries()) {
    t.true(await eventually(async () => JSON.stringify(await page(server, path)) === JSON.stringify(now[at]), 30_000), path);
    // The page changed: the kept one's ETag no longer revalidates.
    t.is((await get(server, path, { 'If-None-Match': first[at]!.headers.get('etag')! })).status, 200, path);
  }
});

test.serial('stale pages asked for at once on two instances are recomputed once each', async (t) => {
  const paths = { subject: '/v1/subjects/Poetry?limit=7', trending: '/v1/trending?period=week' };
  const refreshes = async (summary: string) =>
    (await computed(often[0], summary, 'refresh')) + (await computed(often[1], summary, 'refresh'));
  const before = { subject: await refreshes('subject'), trending: await refreshes('trending') };
  const kept = { subject: await page(often[0], paths.subject), trending: await page(often[0], paths.trending) };
  await sleep(SHORT_REFRESH_S * 1_000 + 200);

  const asked = Array.from(
    { length: 12 },
    (_, n) => ({ summary: n % 2 === 0 ? 'subject' : 'trending', server: often[n % 4 < 2 ? 0 : 1] }) as const,
  );
  const answers = await Promise.all(asked.map(({ summary, server }) => page(server, paths[summary])));
  for (const [n, { summary }] of asked.entries()) t.deepEqual(answers[n], kept[summary], `request ${n}`);

  for (const summary of ['subject', 'trending'] as const) {
    t.true(await eventually(async () => (await refreshes(summary)) > before[summary], 30_000), summary);
  }
  // Time for any second refresh to have been counted too.
  await sleep(1_000);
  t.is((await refreshes('subject')) - before.subject, 1);
  t.is((await refreshes('trending')) - before.trending, 1);
});

test.serial('with Redis away a page is computed in the request, as the catalogue is now, without an error', async (t) => {
  const redis = await RedisProcess.start();
  const server = await startTestServer(api.world, { rateLimitMax: 1_000_000, redisUrl: redis.url, summaryRefreshS: 3_600, metricsPort: 0 });
  try {
    const paths = ['/v1/subjects/Poetry?limit=3', '/v1/trending?period=day'];
    const kept = await Promise.all(paths.map((path) => page(server, path)));
    await newReadingLog(0);
    t.deepEqual(await Promise.all(paths.map((path) => page(server, path))), kept, 'kept while Redis is up');

    await redis.stop();
    const now = await Promise.all(paths.map((path) => page(uncached, path)));
    t.notDeepEqual(now, kept);
    for (const [at, path] of paths.entries()) {
      const response = await get(server, path);
      t.is(response.status, 200, path);
      t.deepEqual(await response.json(), now[at], path);
    }
    t.is(await computed(server, 'subject', 'cold'), 2);
    t.is(await computed(server, 'trending', 'cold'), 2);
  } finally {
    // Redis back and reconnected first: a client still reconnecting would hold the server's stop.
    await redis.start();
    await eventually(async () => (await fetch(`${server.url}/health`)).status === 200);
    await server.stop();
    await redis.stop();
  }
});

test.serial('a background refresh that fails is logged and counted, and the kept page is still served', async (t) => {
  const elasticsearch = await TcpProxy.start(api.world.config.elasticsearchUrl);
  const lines: { level: number; msg: string }[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _encoding, done) {
      for (const line of chunk.toString().split('\n')) if (line) lines.push(JSON.parse(line) as { level: number; msg: string });
      done();
    },
  });
  const config = { ...api.world.config, rateLimitMax: 1_000_000, elasticsearchUrl: elasticsearch.url, summaryRefreshS: SHORT_REFRESH_S };
  const server = await startServer({ ...config, metricsPort: 0 }, pino(loggerOptions('warn'), sink));
  try {
    const path = '/v1/subjects/Poetry?limit=9';
    const keptAt = Date.now();
    const kept = await page(server, path);
    await elasticsearch.close();
    await sleep(keptAt + SHORT_REFRESH_S * 1_000 + 200 - Date.now());
    t.deepEqual(await page(server, path), kept, 'served stale while its refresh fails');
    const failures = async () =>
      value(await scrape(server.metricsUrl!), 'bookmeta_summary_refresh_failures_total', { summary: 'subject' }) ?? 0;
    t.true(await eventually(async () => (await failures()) === 1, 30_000));
    t.true(lines.some((line) => line.level === 40 && line.msg.startsWith('summary refresh failed')));
    t.deepEqual(await page(server, path), kept, 'still the kept page');
    t.is(await computed(server, 'subject', 'refresh'), 0);
  } finally {
    await server.stop();
    await elasticsearch.close();
  }
});

test.serial(
  "a page's first computation waits for a slow Elasticsearch past the request path's wait, which a search still keeps",
  async (t) => {
    const elasticsearch = await TcpProxy.start(api.world.config.elasticsearchUrl);
    const storeWaitMs = 1_000;
    const config = { ...api.world.config, rateLimitMax: 1_000_000, elasticsearchUrl: elasticsearch.url, summaryRefreshS: 3_600 };
    const server = await startServer({ ...config, storeWaitMs, metricsPort: 0 }, log);
    try {
      // Every answer later than the request path may wait: a large catalogue's aggregation, as slow.
      elasticsearch.delay(1_500);
      const started = Date.now();
      const subject = await get(server, '/v1/subjects/Poetry?limit=7&offset=1');
      t.is(subject.status, 200, await subject.clone().text());
      t.true(Date.now() - started >= 1_500);
      t.is(await computed(server, 'subject', 'cold'), 1);
      const search = await get(server, '/v1/books/search?q=poems');
      t.is(search.status, 503);
      t.is(((await search.json()) as { error: { code: string } }).error.code, 'unavailable');
    } finally {
      await server.stop();
      await elasticsearch.close();
    }
  },
);

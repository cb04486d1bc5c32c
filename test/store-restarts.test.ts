import test from 'ava';
import { spawn, type ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';
import { setTimeout as sleep } from 'node:timers/promises';
import { createLogger } from '../src/log.js';
import { projectPath } from '../src/paths.js';
import { startServer, type RunningServer } from '../src/server.js';
import { recordChanges } from '../src/stores/postgres/changes.js';
import { withTransaction } from '../src/stores/postgres/pool.js';
import { mixedTraffic, type Outcome } from '../scripts/lib/mixedTraffic.js';
import { liveBooks, type LiveBook } from './helpers/catalogue.js';
import { newKey, type TestWorld } from './helpers/env.js';
import { openPrivateWorld, PostgresCluster, RedisProcess, TcpProxy, type PrivateWorld } from './helpers/faults.js';
import type { TestLoaderDeps } from './helpers/indexing.js';
import { meteredCount } from './helpers/usage.js';

/**
 * Each store restarted under steady traffic, with `bookmeta sync --follow` running throughout, as an
 * operator's upgrade does it: the test's own PostgreSQL cluster stopped and started, its own
 * redis-server killed (it keeps nothing on disk) and started empty, and Elasticsearch made
 * unreachable and reachable again through a proxy (a second node of its own would take minutes to
 * start on this machine).
 * What docs/operations.md promises, "Restarting a store", is checked: never a 500, the service whole
 * within 5 s of the store's return without restarting the API or the loader, sync catching up by
 * itself, and no usage record lost.
 */

let stores: PrivateWorld;
let redis: RedisProcess;
let postgres: PostgresCluster;
let elastic: TcpProxy;
let world: TestWorld;
let deps: TestLoaderDeps;
let server: RunningServer;
let follower: ChildProcess;
/** What `sync --follow` logged (pino's JSON lines). */
const followerLog: { msg?: string; err?: unknown }[] = [];

test.before(async () => {
  stores = await openPrivateWorld('bookmeta_restarts');
  ({ redis, postgres, elastic, world, deps } = stores);
  server = await startServer({ ...world.config, rateLimitMax: 1_000_000 }, createLogger('silent'));
  follower = spawn(process.execPath, ['--import', 'tsx', projectPath('loader', 'cli.ts'), 'sync', '--follow'], {
    env: { ...world.env, LOG_LEVEL: 'info' },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  await new Promise<void>((resolve, reject) => {
    createInterface({ input: follower.stderr! }).on('line', (line) => {
      if (line.startsWith('{')) followerLog.push(JSON.parse(line) as (typeof followerLog)[number]);
      if (line.includes('sync following the change sequence')) resolve();
    });
    follower.once('exit', (code) => reject(new Error(`sync --follow exited with ${code}`)));
  });
});

test.after.always(async () => {
  follower?.kill('SIGTERM');
  await server?.stop();
  await stores?.close();
});

/** How long after `since` a check first holds, polled every 100 ms; Infinity past 30 s. */
async function msUntil(check: () => Promise<boolean>, since: number): Promise<number> {
  while (performance.now() - since < 30_000) {
    if (await check().catch(() => false)) return performance.now() - since;
    await sleep(100);
  }
  return Infinity;
}

test('PostgreSQL, Redis and Elasticsearch restarted under traffic: never a 500, whole within 5 s of each return, sync catches up, no usage lost', async (t) => {
  const books = await liveBooks(world.db, 300, { withIsbn: true });
  const traffic = await newKey(world, 'traffic');
  const probe = await newKey(world, 'probe');
  const outcomes: Outcome[] = [];
  const stop = new AbortController();
  // The four clients: lookups (cached and not) and searches, among the rest of the mix.
  const sending = mixedTraffic({
    baseUrl: server.url,
    headers: traffic.auth,
    catalogue: { isbns: books.map((book) => book.isbn_13), bookIds: books.map((book) => book.id), titles: books.map((book) => book.title) },
    rate: 40,
    connections: 4,
    signal: stop.signal,
    onOutcome: (outcome) => outcomes.push(outcome),
  });

  // Writes the loader must carry into the index, made whenever PostgreSQL is up.
  const written = new Map<string, string>();
  let writes = 0;
  const write = async (book: LiveBook) => {
    const title = `${book.title} (restart ${++writes})`;
    await withTransaction(world.db, async (client) => {
      await client.query('update books set title = $2, updated_at = now() where id = entity_key($1)', [book.id, title]);
      await recordChanges(client, [{ entity: 'book', id: book.id, operation: 'update' }]);
    });
    written.set(book.id, title);
  };
  // A book no request has asked for yet: its lookup needs PostgreSQL.
  let fresh = books.length - 1;
  const get = (path: string) => fetch(`${server.url}${path}`, { headers: probe.auth });
  const wholeAgain: Record<string, () => Promise<boolean>> = {
    PostgreSQL: async () => (await get(`/v1/books/${books[fresh--]!.id}`)).status === 200,
    // The cache works again: a lookup is stored, and the next answered from it.
    Redis: async () => {
      const path = `/v1/books/${books[fresh--]!.id}`;
      if ((await get(path)).status !== 200) return false;
      await sleep(50);
      return (await get(path)).headers.get('X-Cache') === 'HIT';
    },
    Elasticsearch: async () => (await get(`/v1/books/search?q=${encodeURIComponent(books[writes]!.title.split(' ')[0]!)}`)).status === 200,
  };
  const restarts: [string, () => Promise<void>, () => Promise<void>][] = [
    ['PostgreSQL', () => postgres.stop(), () => postgres.start()],
    ['Redis', () => redis.stop(), () => redis.start()],
    ['Elasticsearch', () => elastic.close(), () => elastic.open()],
  ];
  await sleep(1_000);
  for (const [store, stopStore, startStore] of restarts) {
    for (let i = 0; i < 3; i++) await write(books[writes]!);
    const from = outcomes.length;
    await stopStore();
    if (store !== 'PostgreSQL') for (let i = 0; i < 3; i++) await write(books[writes]!);
    await sleep(2_000);
    // Sync's page takes the client's retries (a few seconds) to find Elasticsearch away: it stays away until then.
    if (store === 'Elasticsearch')
      await msUntil(() => Promise.resolve(followerLog.some(({ msg }) => msg === `${store} unavailable`)), performance.now());
    const down = outcomes.slice(from);
    await startStore();
    const ms = await msUntil(wholeAgain[store]!, performance.now());
    t.log(
      `${store}: ${down.length} requests while away, ${down.filter((outcome) => outcome.status === 503).length} answered 503; whole ${ms.toFixed(0)} ms after its return`,
    );
    t.true(ms <= 5_000, `${store}: whole ${ms} ms after its return`);
  }
  await sleep(1_000);
  stop.abort();
  await sending;

  // An MCP tool answers a store's absence as the route does, inside its 200: `unavailable`.
  const broken = outcomes.filter(
    ({ status, error }) =>
      status === 0 || (status !== 200 && status !== 503) || (status === 200 && error !== null && !error.includes('"unavailable"')),
  );
  t.deepEqual(
    broken.slice(0, 5).map(({ kind, status, error }) => ({ kind, status, error })),
    [],
    'every answer a 200 or a 503, none a 500 nor a reset',
  );

  // Sync, never restarted, applies every write.
  const titles = [...written.values()].map((title) => title.toLowerCase());
  const indexed = async () => {
    await deps.es.indices.refresh({ index: deps.aliases.books });
    return (await deps.es.count({ index: deps.aliases.books, query: { terms: { 'title.keyword': titles } } })).count === titles.length;
  };
  t.true((await msUntil(indexed, performance.now())) < 30_000, `sync --follow indexed the ${titles.length} writes by itself`);
  // Still running, having said once that each of the two stores it uses was away, without a stack.
  t.is(follower.exitCode, null, 'sync --follow still running');
  const outages = followerLog.filter(({ msg }) => msg?.endsWith(' unavailable'));
  t.deepEqual(
    outages.map(({ msg, err }) => ({ msg, err: typeof err })),
    [
      { msg: 'PostgreSQL unavailable', err: 'string' },
      { msg: 'Elasticsearch unavailable', err: 'string' },
    ],
  );

  // Usage held while PostgreSQL was away is written once it is back: every answered call is recorded.
  await server.stop();
  t.is(await meteredCount(world.db, traffic.kid), outcomes.filter((outcome) => outcome.status !== 0).length);
});

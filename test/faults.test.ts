import { Writable } from 'node:stream';
import test, { type ExecutionContext } from 'ava';
import { pino } from 'pino';
import type { Config } from '../src/config.js';
import { loggerOptions } from '../src/log.js';
import { startServer, type RunningServer } from '../src/server.js';
import { liveBooks } from './helpers/catalogue.js';
import { newKey, type TestWorld } from './helpers/env.js';
import { eventually } from './helpers/eventually.js';
import { openPrivateWorld, PostgresCluster, RedisProcess, TcpProxy, type PrivateWorld } from './helpers/faults.js';
import { meteredCount } from './helpers/usage.js';
import { pointCached } from './helpers/cache.js';

/**
 * Each store taken away for real, with a server in this process: its own redis-server (stopped and
 * paused), its own PostgreSQL cluster (stopped), and a proxy in front of the shared Elasticsearch
 * (closed and stalled). For each: what keeps working, what answers 503 within its bounded wait, and that
 * it recovers without a restart.
 */

let stores: PrivateWorld;
let redis: RedisProcess;
let postgres: PostgresCluster;
let elastic: TcpProxy;
let world: TestWorld;
let api: Api;
let books: { id: string; isbn_13: string }[];
/** Every server started, stopped after the tests whatever happened to them. */
const servers: RunningServer[] = [];

interface LogLine {
  level: number;
  msg: string;
  store?: string;
  requestId?: string;
  ms?: number;
}

interface Api {
  server: RunningServer;
  log: LogLine[];
  auth: { Authorization: string };
  kid: string;
  call(path: string, init?: RequestInit): Promise<Answer>;
}

interface Answer {
  status: number;
  /** How long the server took, from its request log line: the machine's load on the client side aside. */
  ms: number;
  headers: Headers;
  body: { error?: { code: string; message: string } } & Record<string, unknown>;
}

async function startApi(overrides: Partial<Config> = {}): Promise<Api> {
  const log: LogLine[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _encoding, done) {
      for (const line of chunk.toString().split('\n')) if (line) log.push(JSON.parse(line) as LogLine);
      done();
    },
  });
  const server = await startServer({ ...world.config, rateLimitMax: 100_000, ...overrides }, pino(loggerOptions('info'), sink));
  servers.push(server);
  const { kid, auth } = await newKey(world);
  // The key's first check (a read of PostgreSQL) is made before any answer is timed.
  await (await fetch(`${server.url}/v1/isbn/123`, { headers: auth })).arrayBuffer();
  return {
    server,
    log,
    auth,
    kid,
    async call(path, init = {}) {
      const response = await fetch(`${server.url}${path}`, {
        ...init,
        headers: { ...auth, 'Content-Type': 'application/json', ...(init.headers as Record<string, string>) },
      });
      const text = await response.text();
      const requestId = response.headers.get('X-Request-Id');
      const line = log.find((entry) => entry.msg === 'request' && entry.requestId === requestId);
      return {
        status: response.status,
        ms: line?.ms ?? Infinity,
        headers: response.headers,
        body: text ? (JSON.parse(text) as Answer['body']) : {},
      };
    },
  };
}

test.before(async () => {
  stores = await openPrivateWorld('bookmeta_faults');
  ({ redis, postgres, elastic, world } = stores);
  books = await liveBooks(world.db, 40, { withIsbn: true });
  api = await startApi();
});

test.after.always(async () => {
  await Promise.all(servers.map((server) => server.stop()));
  await stores?.close();
});

/**
 * What a loaded 2-core machine (four test files at once) may add to a bounded wait before the server
 * logs its answer: a bound is the wait plus this, so it tells a bounded wait from a hang or from one
 * wait per call, whatever else the machine runs.
 */
const LOAD_MARGIN_MS = 1_000;

/** A 503 in the contract's shape naming the store, with Retry-After, answered within the store wait (and the margin). */
function assertUnavailable(t: ExecutionContext, answer: Answer, store: string, what: string): void {
  t.is(answer.status, 503, `${what}: ${JSON.stringify(answer.body)}`);
  t.is(answer.body.error?.code, 'unavailable', what);
  t.regex(answer.body.error?.message ?? '', new RegExp(`^${store} is unavailable`), what);
  t.true(Number(answer.headers.get('Retry-After')) >= 1, what);
  t.true(answer.ms < world.config.storeWaitMs + LOAD_MARGIN_MS, `${what} took ${answer.ms} ms`);
}

/** The store's lines since `from`, and every warning or error: an outage must be said once, not per request. */
function outageLines(from: number, store: string): LogLine[] {
  return api.log.slice(from).filter((line) => line.store === store || line.level >= 40);
}

/** A search text no earlier request used, so no short-cache entry answers it. */
const nextQuery = (() => {
  let n = 0;
  return () => `q${++n}x${Date.now()}`;
})();

/** /health's entry for Elasticsearch, and the status code /health answered with. */
async function elasticsearchHealth(): Promise<{ status: number; entry: { status: string } | undefined }> {
  const health = await api.call('/health');
  return { status: health.status, entry: (health.body.checks as Record<string, { status: string }>).elasticsearch };
}

/** /health answers from its last check for a second. */
const pastHealthReuse = () => new Promise((resolve) => setTimeout(resolve, 1_100));

test.serial(
  'Elasticsearch unreachable: search, match and recommendations answer 503 naming it, /health says it is down; lookups and changes keep working; it comes back without a restart',
  async (t) => {
    const before = await elasticsearchHealth();
    t.is(before.status, 200);
    t.deepEqual(before.entry, { status: 'up' });
    const from = api.log.length;
    await elastic.close();
    await pastHealthReuse();
    const down = await elasticsearchHealth();
    t.is(down.status, 503);
    t.deepEqual(down.entry, { status: 'down' }, 'why is in the log, not in the public answer');
    const needsSearch: [string, RequestInit?][] = [
      [`/v1/books/search?q=${nextQuery()}`],
      [`/v1/authors/search?q=${nextQuery()}`],
      ['/v1/match', { method: 'POST', body: JSON.stringify({ title: nextQuery() }) }],
      [`/v1/books/${books[0]!.id}/recommendations`],
    ];
    for (let round = 0; round < 5; round++) {
      for (const [path, init] of needsSearch)
        assertUnavailable(t, await api.call(round === 0 ? path : path.replace(/q\d+x\d+/, nextQuery()), init), 'Elasticsearch', path);
    }
    const lookup = await api.call(`/v1/isbn/${books[1]!.isbn_13}`);
    t.is(lookup.status, 200);
    t.is((await api.call(`/v1/books/${books[2]!.id}`)).status, 200);
    t.is((await api.call('/v1/changes?since=0&limit=5')).status, 200);
    t.deepEqual(
      outageLines(from, 'Elasticsearch').map((line) => line.msg),
      ['Elasticsearch unavailable'],
    );

    await elastic.open();
    t.true(await eventually(async () => (await api.call(`/v1/books/search?q=${nextQuery()}`)).status === 200, 5_000));
    await pastHealthReuse();
    const back = await elasticsearchHealth();
    t.is(back.status, 200);
    t.is(back.entry?.status, 'up');
    t.is((await api.call('/v1/match', { method: 'POST', body: JSON.stringify({ title: 'The Hunger Games' }) })).status, 200);
    t.deepEqual(
      outageLines(from, 'Elasticsearch').map((line) => line.msg),
      ['Elasticsearch unavailable', 'Elasticsearch available again'],
    );
  },
);

test.serial(
  'Elasticsearch stalled: a search waits at most its bound, then 503; while it stays stalled, searches are refused at once',
  async (t) => {
    // A server whose client has seen no error yet: its searches meet the hung node itself.
    const fresh = await startApi();
    elastic.stall();
    try {
      for (let i = 0; i < 10; i++)
        assertUnavailable(t, await fresh.call(`/v1/books/search?q=${nextQuery()}`), 'Elasticsearch', 'search while stalled');
      t.is((await fresh.call(`/v1/isbn/${books[3]!.isbn_13}`)).status, 200);
    } finally {
      await elastic.open();
    }
    try {
      t.true(await eventually(async () => (await fresh.call(`/v1/books/search?q=${nextQuery()}`)).status === 200, 5_000));
    } finally {
      await fresh.server.stop();
    }
  },
);

test.serial(
  'Elasticsearch slow: a batch waits longer than one search, by its size; a search or batch past its wait is a 503, and slow answers do not make the store count as away',
  async (t) => {
    // Every answer of Elasticsearch 1.2 s late, against a wait of 1 s for one search and 5.9 s for a
    // batch's 50: the batch's searches keep seconds of margin on a loaded machine.
    const slow = await startApi({ storeWaitMs: 1_000 });
    const batchBooks = await liveBooks(world.db, 50, { withIsbn: true });
    // Title and ISBN: each is matched in the first round, so the batch makes one _msearch of 50 searches.
    const records = batchBooks.map((book) => ({ title: book.title, isbn: book.isbn_13 }));
    elastic.delay(1_200);
    try {
      const batch = await slow.call('/v1/match/batch', { method: 'POST', body: JSON.stringify({ records }) });
      t.is(
        batch.status,
        200,
        JSON.stringify({ ms: batch.ms, body: batch.body, log: slow.log.filter((line) => line.store === 'Elasticsearch') }).slice(0, 800),
      );
      const results = batch.body.results as { match: { id: string } | null }[];
      t.deepEqual(
        results.map((result) => result.match?.id),
        batchBooks.map((book) => book.id),
      );

      const single = await slow.call('/v1/match', { method: 'POST', body: JSON.stringify({ title: nextQuery() }) });
      t.is(single.status, 503, JSON.stringify(single.body));
      t.is(single.body.error?.code, 'unavailable');
      t.true(single.ms < 1_000 + LOAD_MARGIN_MS, `${single.ms} ms`);

      // Past even a batch's wait (1.9 s for 10): each batch is a 503 of its own, and batches running out in a row do not count the store away.
      // Other records: the first batch's answers are in the short cache.
      const others = (await liveBooks(world.db, 10, { offset: 50, withIsbn: true })).map((book) => ({
        title: book.title,
        isbn: book.isbn_13,
      }));
      await elastic.open();
      // Later than the batch's wait and the margin: an answer within the bound did not wait for Elasticsearch.
      elastic.delay(1_900 + LOAD_MARGIN_MS + 600);
      for (let i = 0; i < 3; i++) {
        const late = await slow.call('/v1/match/batch', { method: 'POST', body: JSON.stringify({ records: others }) });
        t.is(late.status, 503, JSON.stringify(late.body));
        t.true(late.ms < 1_900 + LOAD_MARGIN_MS, `${late.ms} ms`);
      }
    } finally {
      await elastic.open();
    }
    // Waits that ran out are slow answers, not an outage: the next search is answered.
    t.is((await slow.call(`/v1/books/search?q=${nextQuery()}`)).status, 200);
    t.deepEqual(
      slow.log.filter((line) => line.store === 'Elasticsearch').map((line) => line.msg),
      [],
    );
    await slow.server.stop();
  },
);

test.serial(
  'Elasticsearch slow: a search or match that asks it twice waits one budget for all its calls, not one wait per call',
  async (t) => {
    // Each answer 1.8 s late against a wait of 2 s: one call fits, two do not (3.6 s and more, one wait
    // each), which the bound of the wait and the margin tells apart.
    const slow = await startApi({ storeWaitMs: 2_000 });
    elastic.delay(1_800);
    try {
      // Words no book has: the round as typed finds nothing, so a second round tolerates typos.
      const answers: [string, Answer][] = [
        ['search', await slow.call(`/v1/books/search?q=${nextQuery()}`)],
        ['author search', await slow.call(`/v1/authors/search?q=${nextQuery()}`)],
        ['match', await slow.call('/v1/match', { method: 'POST', body: JSON.stringify({ title: nextQuery() }) })],
      ];
      for (const [what, answer] of answers) {
        t.true(answer.status === 200 || answer.body.error?.code === 'unavailable', `${what}: ${JSON.stringify(answer.body)}`);
        t.true(answer.ms < 2_000 + LOAD_MARGIN_MS, `${what} took ${answer.ms} ms, past its 2 s wait`);
      }
    } finally {
      await elastic.open();
    }
    try {
      // A call cut short by its request's budget is not a sign of an outage.
      t.is((await slow.call(`/v1/books/search?q=${nextQuery()}`)).status, 200);
      t.deepEqual(
        slow.log.filter((line) => line.store === 'Elasticsearch').map((line) => line.msg),
        [],
      );
    } finally {
      await slow.server.stop();
    }
  },
);

test.serial(
  'Redis paused (SIGSTOP): every request answers within its bounded wait, lookups from PostgreSQL, /health a 503; the cache serves again on SIGCONT',
  async (t) => {
    const path = `/v1/isbn/${books[4]!.isbn_13}`;
    await api.call(path);
    t.true(await pointCached(world, path));
    t.is((await api.call(path)).headers.get('X-Cache'), 'HIT');
    const from = api.log.length;
    redis.pause();
    try {
      for (let i = 0; i < 10; i++) {
        const answer = await api.call(i % 2 === 0 ? path : `/v1/books/${books[5 + i]!.id}`);
        t.is(answer.status, 200);
        t.is(answer.headers.get('X-Cache'), 'MISS');
        t.true(answer.ms < world.config.storeWaitMs + LOAD_MARGIN_MS, `${Math.round(answer.ms)} ms`);
      }
      const searched = await api.call(`/v1/books/search?q=${nextQuery()}`);
      t.is(searched.status, 200, 'search without its short cache');
      t.true(searched.ms < world.config.storeWaitMs + LOAD_MARGIN_MS, `${searched.ms} ms`);
      // Its ping never answers: /health still says so within its bounded wait.
      const health = await api.call('/health');
      t.is(health.status, 503);
      t.is((health.body.checks as Record<string, { status: string }>).redis?.status, 'down');
      t.true(health.ms < world.config.storeWaitMs + LOAD_MARGIN_MS, `/health took ${health.ms} ms`);
    } finally {
      redis.resume();
    }
    t.true(await eventually(async () => (await api.call(path)).headers.get('X-Cache') === 'HIT', 5_000));
    t.deepEqual(
      outageLines(from, 'Redis').map((line) => line.msg),
      ['Redis unavailable', 'Redis available again'],
    );
  },
);

test.serial(
  'Redis down: the rate limit holds per instance in memory, for requests and whole batches, and returns to Redis with it',
  async (t) => {
    const limited = await startApi({ rateLimitMax: 5 });
    try {
      await redis.stop();
      const isbn = (i: number) => `/v1/isbn/${books[20 + i]!.isbn_13}`;
      for (let i = 0; i < 2; i++) {
        const answer = await limited.call(isbn(i));
        t.is(answer.status, 200);
        t.is(answer.headers.get('RateLimit-Remaining'), String(4 - i));
      }
      const batch = (isbns: string[]) =>
        limited.call('/v1/match/batch', { method: 'POST', body: JSON.stringify({ records: isbns.map((isbn) => ({ isbn })) }) });
      // Three left: a batch of four is refused whole, one of three is admitted whole.
      const refused = await batch([0, 1, 2, 3].map((i) => books[24 + i]!.isbn_13));
      t.is(refused.status, 429);
      t.is(refused.body.error?.code, 'rate_limited');
      const admitted = await batch([0, 1, 2].map((i) => books[24 + i]!.isbn_13));
      t.is(admitted.status, 200);
      t.is(admitted.headers.get('RateLimit-Remaining'), '0');
      const over = await limited.call(isbn(3));
      t.is(over.status, 429);
      t.true(Number(over.headers.get('Retry-After')) >= 1);
      t.true(over.ms < world.config.storeWaitMs + LOAD_MARGIN_MS, `${over.ms} ms`);

      await redis.start();
      // Redis has its own count, which did not see the calls counted in memory: a fresh budget.
      t.true(await eventually(async () => (await limited.call(isbn(4))).headers.get('RateLimit-Remaining') === '4', 5_000));
    } finally {
      await redis.start();
      await limited.server.stop();
    }
  },
);

test.serial(
  'PostgreSQL stopped: cached lookups and known keys keep working, the rest answers 503 naming it, usage waits; all recover without a restart',
  async (t) => {
    const cached = `/v1/isbn/${books[30]!.isbn_13}`;
    // Redis was restarted just before: the client may still be reconnecting.
    t.true(await eventually(async () => (await api.call(cached)).headers.get('X-Cache') === 'HIT', 5_000));
    const stranger = await newKey(world, 'never-seen');
    const usageBefore = await meteredCount(world.db, api.kid);
    const from = api.log.length;
    let calls = 0;
    const call = (path: string) => {
      calls += 1;
      return api.call(path);
    };

    await postgres.stop();
    try {
      t.is((await call(cached)).status, 200);
      assertUnavailable(t, await call(`/v1/books/${books[31]!.id}`), 'PostgreSQL', 'uncached lookup');
      assertUnavailable(t, await call('/v1/changes?since=0'), 'PostgreSQL', 'change feed');
      const unknownKey = await fetch(`${api.server.url}${cached}`, { headers: stranger.auth });
      t.is(unknownKey.status, 503, 'a key never seen cannot be checked');
      // Past the age after which a key's row must be read again: a known key still works.
      await new Promise((resolve) => setTimeout(resolve, 3_200));
      const later = await call(cached);
      t.is(later.status, 200);
      t.is(later.headers.get('X-Cache'), 'HIT');
      const health = await fetch(`${api.server.url}/health`);
      t.is(health.status, 503);
    } finally {
      await postgres.start();
    }
    t.true(await eventually(async () => (await call(`/v1/books/${books[31]!.id}`)).status === 200, 5_000));
    t.is((await fetch(`${api.server.url}${cached}`, { headers: stranger.auth })).status, 200);
    // Usage recorded while PostgreSQL was away is written once it is back.
    t.true(await eventually(async () => (await meteredCount(world.db, api.kid)) >= usageBefore + calls, 10_000));
    // The guard's two lines, and the meter's, once per retry of its write (not per call).
    const lines = outageLines(from, 'PostgreSQL').map((line) => line.msg);
    t.deepEqual(
      lines.filter((msg) => msg !== 'usage write failed; records kept for retry'),
      ['PostgreSQL unavailable', 'PostgreSQL available again'],
    );
    t.true(lines.length <= 2 + 6, lines.join('; '));
  },
);

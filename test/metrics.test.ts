import test from 'ava';
import { randomBytes } from 'node:crypto';
import type { RunningServer } from '../src/server.js';
import { loadSampleCatalogue } from './helpers/catalogue.js';
import { createWorld, newKey, startTestServer, type TestWorld } from './helpers/env.js';
import { TcpProxy } from './helpers/faults.js';
import { samples, scrape, seriesCount, value } from './helpers/scrape.js';

let world: TestWorld;
let server: RunningServer;

test.before(async () => {
  world = await createWorld();
  await loadSampleCatalogue(world);
  server = await startTestServer(world, { metricsPort: 0 });
});
test.after.always(async () => {
  await server?.stop();
  await world?.destroy();
});

const ISBN = '9780439023481';

test('metrics are served on a port of their own, on loopback, and never on the public port', async (t) => {
  const metricsUrl = new URL(server.metricsUrl!);
  t.is(metricsUrl.hostname, '127.0.0.1');
  t.not(metricsUrl.port, new URL(server.url).port);
  t.is(metricsUrl.pathname, '/metrics');
  const { auth } = await newKey(world, 'public-port');
  for (const headers of [auth, {}]) {
    const response = await fetch(`${server.url}/metrics`, { headers });
    t.true(response.status === 404 || response.status === 401);
    t.false((await response.text()).includes('bookmeta_'));
  }
  t.is((await fetch(new URL('/other', metricsUrl))).status, 404);
  t.is((await fetch(metricsUrl, { method: 'POST' })).status, 405);
});

test('a server without METRICS_PORT serves no metrics', async (t) => {
  const quiet = await startTestServer(world);
  try {
    t.is(quiet.metricsUrl, null);
    t.is(quiet.services.metrics, null);
  } finally {
    await quiet.stop();
  }
});

test("a scrape holds Node's process metrics, each store's state, the pool and the usage records waiting", async (t) => {
  const scraped = await scrape(server.metricsUrl!);
  for (const name of [
    'process_cpu_user_seconds_total',
    'process_resident_memory_bytes',
    'nodejs_eventloop_lag_seconds',
    'nodejs_heap_size_used_bytes',
  ])
    t.true(scraped.families.has(name), name);
  for (const store of ['PostgreSQL', 'Redis', 'Elasticsearch']) {
    t.is(value(scraped, 'bookmeta_store_up', { store }), 1, store);
    t.is(value(scraped, 'bookmeta_store_timeouts_total', { store }), 0, store);
  }
  t.is(value(scraped, 'bookmeta_pg_pool_max'), 20);
  t.true(
    value(scraped, 'bookmeta_pg_pool_connections', { state: 'total' })! >=
      value(scraped, 'bookmeta_pg_pool_connections', { state: 'idle' })!,
  );
  t.is(value(scraped, 'bookmeta_pg_pool_waiting'), 0);
  t.is(typeof value(scraped, 'bookmeta_usage_records_pending'), 'number');
  t.is(value(scraped, 'bookmeta_usage_records_dropped_total'), 0);
  t.true(scraped.histograms.has('bookmeta_http_request_duration_seconds'));
});

test.serial('requests are counted and timed by route template, method and status; point lookups by cache hit and miss', async (t) => {
  const { auth } = await newKey(world, 'counted');
  const before = await scrape(server.metricsUrl!);
  const route = { route: '/v1/isbn/:isbn', method: 'GET' };
  for (let i = 0; i < 3; i++) t.is((await fetch(`${server.url}/v1/isbn/${ISBN}`, { headers: auth })).status, 200);
  t.is((await fetch(`${server.url}/v1/isbn/9780000000002`, { headers: auth })).status, 404);
  t.is((await fetch(`${server.url}/v1/isbn/${ISBN}`)).status, 401);
  const after = await scrape(server.metricsUrl!);
  const grew = (name: string, labels: Record<string, string>) => (value(after, name, labels) ?? 0) - (value(before, name, labels) ?? 0);
  t.is(grew('bookmeta_http_requests_total', { ...route, status: '200' }), 3);
  t.is(grew('bookmeta_http_requests_total', { ...route, status: '404' }), 1);
  t.is(grew('bookmeta_http_requests_total', { ...route, status: '401' }), 1);
  t.is(grew('bookmeta_http_request_duration_seconds_count', route), 5);
  // The first lookup of the ISBN may have been cached by another test; the unknown ISBN always misses.
  t.is(grew('bookmeta_point_cache_lookups_total', { result: 'hit' }) + grew('bookmeta_point_cache_lookups_total', { result: 'miss' }), 4);
  t.true(grew('bookmeta_point_cache_lookups_total', { result: 'hit' }) >= 2);
  t.false(samples(after, 'bookmeta_http_requests_total').some((sample) => sample.labels?.route?.includes(ISBN)));
});

test.serial('a thousand distinct paths add no series: labels are route templates, the unknown paths one bucket', async (t) => {
  const { auth } = await newKey(world, 'scanner');
  const before = await scrape(server.metricsUrl!);
  const paths = Array.from({ length: 1_000 }, (_, index) => {
    const random = randomBytes(6).toString('hex');
    return [`/admin/${random}`, `/v1/isbn/${random}`, `/v1/books/${random}`, `/v1/${random}/${index}`][index % 4]!;
  });
  for (let start = 0; start < paths.length; start += 50) {
    await Promise.all(
      paths.slice(start, start + 50).map(async (path) => (await fetch(`${server.url}${path}`, { headers: auth })).body?.cancel()),
    );
  }
  const after = await scrape(server.metricsUrl!);
  const routes = new Set(samples(after, 'bookmeta_http_requests_total').map((sample) => sample.labels!.route!));
  t.true(routes.has('(unmatched)'));
  for (const route of routes)
    t.true(route === '(unmatched)' || route === '/health' || (route.startsWith('/v1/') && !/[0-9a-f]{12}/.test(route)), route);
  const added = (name: string) => seriesCount(after, name) - seriesCount(before, name);
  // Each (route, method, status) is one series: a handful of routes and statuses, whatever the paths.
  t.true(added('bookmeta_http_requests_total') <= 12, `${added('bookmeta_http_requests_total')} series added`);
  t.true(added('bookmeta_http_request_duration_seconds') <= 4 * 17, `${added('bookmeta_http_request_duration_seconds')} series added`);
  t.true(seriesCount(after, 'bookmeta_http_requests_total') < 30);
});

test.serial('each server has its own registry: requests refused by its rate limit are counted there and nowhere else', async (t) => {
  const limited = await startTestServer(world, { metricsPort: 0, rateLimitMax: 2 });
  try {
    const { auth } = await newKey(world, 'limited');
    const before = await scrape(server.metricsUrl!);
    const statuses = [];
    for (let i = 0; i < 5; i++) statuses.push((await fetch(`${limited.url}/v1/isbn/${ISBN}`, { headers: auth })).status);
    t.deepEqual(statuses, [200, 200, 429, 429, 429]);
    const scraped = await scrape(limited.metricsUrl!);
    t.is(value(scraped, 'bookmeta_rate_limited_requests_total'), 3);
    t.is(value(scraped, 'bookmeta_http_requests_total', { route: '/v1/isbn/:isbn', status: '429' }), 3);
    t.is(value(scraped, 'bookmeta_http_requests_total', { status: '200' }), 2);
    t.is(
      value(await scrape(server.metricsUrl!), 'bookmeta_rate_limited_requests_total'),
      value(before, 'bookmeta_rate_limited_requests_total'),
    );
  } finally {
    await limited.stop();
  }
});

test('a stalled Elasticsearch shows as away, with its timeouts counted', async (t) => {
  const proxy = await TcpProxy.start(world.config.elasticsearchUrl);
  const stalled = await startTestServer(world, { metricsPort: 0, elasticsearchUrl: proxy.url, storeWaitMs: 200 });
  try {
    const { auth } = await newKey(world, 'stalled');
    proxy.stall();
    // Three waits in a row that run out make it away; on a loaded machine a request may spend part of
    // its wait before it asks Elasticsearch, and a wait cut short does not count: ask until it is away.
    let requests = 0;
    let scraped = await scrape(stalled.metricsUrl!);
    while (value(scraped, 'bookmeta_store_up', { store: 'Elasticsearch' }) === 1 && requests < 20) {
      t.is((await fetch(`${stalled.url}/v1/books/search?q=hunger${requests++}`, { headers: auth })).status, 503);
      scraped = await scrape(stalled.metricsUrl!);
    }
    t.is(value(scraped, 'bookmeta_store_up', { store: 'Elasticsearch' }), 0);
    t.is(value(scraped, 'bookmeta_store_up', { store: 'PostgreSQL' }), 1);
    t.true(value(scraped, 'bookmeta_store_timeouts_total', { store: 'Elasticsearch' })! >= 3);
    t.true(value(scraped, 'bookmeta_store_refusals_total', { store: 'Elasticsearch' })! >= requests);
    t.is(value(scraped, 'bookmeta_http_requests_total', { route: '/v1/books/search', status: '503' }), requests);
  } finally {
    await stalled.stop();
    await proxy.close();
  }
});

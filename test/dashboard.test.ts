import test from 'ava';
import { readFile } from 'node:fs/promises';
import { serveSyncMetrics } from '../loader/index/syncMetrics.js';
import { createLogger } from '../src/log.js';
import { projectPath } from '../src/paths.js';
import type { RunningServer } from '../src/server.js';
import { createWorld, startTestServer, type TestWorld } from './helpers/env.js';
import { scrape, type Scrape } from './helpers/scrape.js';

const DASHBOARD = projectPath('scripts', 'ops', 'grafana-dashboard.json');

interface Panel {
  type: string;
  title: string;
  targets?: { expr: string }[];
}

// PromQL words that are not metric names: aggregation modifiers, set operators, keywords.
const NOT_METRICS = new Set([
  'by',
  'without',
  'on',
  'ignoring',
  'group_left',
  'group_right',
  'offset',
  'bool',
  'and',
  'or',
  'unless',
  'inf',
  'nan',
]);

/** The metric names a PromQL expression selects: identifiers outside label matchers, ranges, strings and groupings, not called as functions. */
function metricNames(expr: string): string[] {
  const bare = expr
    .replace(/"(?:[^"\\]|\\.)*"/g, '""')
    .replace(/\{[^}]*\}/g, '')
    .replace(/\[[^\]]*\]/g, '')
    .replace(/\b(by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)/g, '');
  return [...bare.matchAll(/(?<![\w$.:])([a-zA-Z_:][\w:]*)(?![\w:]|\s*\()/g)]
    .map((match) => match[1]!)
    .filter((name) => !NOT_METRICS.has(name.toLowerCase()));
}

let world: TestWorld;
let api: RunningServer;
let sync: Awaited<ReturnType<typeof serveSyncMetrics>>;

test.before(async () => {
  world = await createWorld();
  api = await startTestServer(world, { metricsPort: 0 });
  sync = await serveSyncMetrics(world.db, '127.0.0.1', 0, createLogger('silent'));
});
test.after.always(async () => {
  await sync?.close();
  await api?.stop();
  await world?.destroy();
});

const namesIn = (scraped: Scrape): string[] => [...scraped.families.keys()];

test('every metric the Grafana dashboard queries exists in a scrape of the API or of sync', async (t) => {
  const dashboard = JSON.parse(await readFile(DASHBOARD, 'utf8')) as { panels: Panel[]; title: string };
  // One request, so that the latency histogram has series.
  await (await fetch(`${api.url}/health`)).body?.cancel();
  const served = new Set([...namesIn(await scrape(api.metricsUrl!)), ...namesIn(await scrape(sync.url))]);
  const queried = new Set<string>();
  for (const panel of dashboard.panels.filter((panel) => panel.type !== 'row')) {
    t.true((panel.targets ?? []).length > 0, `panel "${panel.title}" has no query`);
    for (const target of panel.targets ?? []) for (const name of metricNames(target.expr)) queried.add(name);
  }
  for (const name of queried) t.true(served.has(name), `the dashboard queries ${name}, which no scrape holds`);
  t.true([...queried].some((name) => name.startsWith('bookmeta_http_')));
  t.true([...queried].some((name) => name.startsWith('bookmeta_sync_')));
});

test('the metric names are read out of PromQL, not its functions, labels or groupings', (t) => {
  t.deepEqual(
    metricNames(
      'histogram_quantile(0.95, sum by (route, le) (rate(bookmeta_http_request_duration_seconds_bucket{route=~"/v1.*"}[$__rate_interval])))',
    ),
    ['bookmeta_http_request_duration_seconds_bucket'],
  );
  t.deepEqual(metricNames('sum(a_total{x="y"}) / scalar(sum(b_total)) or on (job) c'), ['a_total', 'b_total', 'c']);
});

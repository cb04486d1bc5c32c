// A long soak: one API instance under the steady mixed traffic of scripts/lib/mixedTraffic.ts for
// --minutes, with `bookmeta sync --follow` beside it applying --writes title changes per second.
// Over the goodbooks-10k catalogue (database bookmeta_bench_soak, indices bench-soak-*, dropped at
// the end) and a redis-server of its own (--port + 1), so that its memory is the soak's alone.
// Every 10 s it samples the API's RSS (/proc), heap and event-loop delay (its Prometheus metrics),
// PostgreSQL connections to the database (pg_stat_activity), Redis memory (INFO) and sync's lag;
// every minute p50/p95/p99 per request kind. At the end sync must catch up and every write must be
// in the index. Prints the figures against the targets (after --warmup minutes, RSS grows < 10 %;
// the last --window minutes' p99 within 1.2x of the first --window minutes' after the warm-up; no
// error, no change lost) and writes a plot: an SVG drawn here, rendered to PNG by the headless
// Chromium the docs tests use (text needs a font renderer; this adds no dependency).
//
//   node --import tsx scripts/bench/soak.ts [--minutes 60] [--rate 100] [--connections 8] [--writes 20]
//     [--warmup 10] [--window 10] [--port 7520] [--png docs/soak.png] [--data /tmp/bookmeta-soak.json] [--replot]
//
// Ports: the API on --port, its redis-server on --port + 1, the API's metrics on + 2, sync's on + 3.
import { spawn } from 'node:child_process';
import { readFile, writeFile } from 'node:fs/promises';
import { parseArgs } from 'node:util';
import { setTimeout as sleep } from 'node:timers/promises';
import { createElastic, indexAliases } from '../../src/stores/elasticsearch/client.js';
import { recordChanges } from '../../src/stores/postgres/changes.js';
import { withTransaction } from '../../src/stores/postgres/pool.js';
import { connectRedis } from '../../src/stores/redis/client.js';
import { benchDatabase, benchKey, startApi, startProcess, type BenchServer } from '../lib/bench.js';
import { launchChromium } from '../lib/chromium.js';
import {
  failed,
  indexedSample,
  mixedTraffic,
  REQUEST_KINDS,
  trafficCatalogue,
  type Outcome,
  type RequestKind,
} from '../lib/mixedTraffic.js';
import { percentile } from '../lib/percentile.js';

const { values } = parseArgs({
  options: {
    minutes: { type: 'string', default: '60' },
    rate: { type: 'string', default: '100' },
    connections: { type: 'string', default: '8' },
    writes: { type: 'string', default: '20' },
    warmup: { type: 'string', default: '10' },
    window: { type: 'string', default: '10' },
    port: { type: 'string', default: '7520' },
    png: { type: 'string', default: 'docs/soak.png' },
    data: { type: 'string', default: '/tmp/bookmeta-soak.json' },
    // Only draws the plot again from the data of an earlier run.
    replot: { type: 'boolean', default: false },
  },
});
const minutes = Number(values.minutes);
const port = Number(values.port);
const say = (text: string) => process.stderr.write(`bench-soak: ${new Date().toISOString().slice(11, 19)} ${text}\n`);

/** One 10-second sample of the process and the stores. */
interface Sample {
  minute: number;
  rssMb: number;
  heapMb: number;
  loopDelayP99Ms: number;
  pgConnections: number;
  redisMb: number;
  syncLagChanges: number;
}

/** One minute's latencies of one request kind. */
interface MinuteLatency {
  minute: number;
  kind: RequestKind | 'all';
  count: number;
  errors: number;
  p50: number;
  p95: number;
  p99: number;
}

/** A value of a Prometheus text exposition, by metric name (no labels). */
async function metric(url: string, name: string): Promise<number> {
  const text = await (await fetch(url)).text();
  const line = text.split('\n').find((candidate) => candidate.startsWith(`${name} `));
  return line ? Number(line.split(' ')[1]) : NaN;
}

if (values.replot) {
  const { samples, latencies } = JSON.parse(await readFile(values.data, 'utf8')) as { samples: Sample[]; latencies: MinuteLatency[] };
  await plot(samples, latencies, values.png);
  process.exit(0);
}

const database = await benchDatabase('bookmeta_bench_soak');
const indexPrefix = 'bench-soak-';
const elastic = createElastic(process.env.ELASTICSEARCH_URL || 'http://127.0.0.1:9200');
const redisServer = spawn('redis-server', ['--port', String(port + 1), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], {
  stdio: 'ignore',
});
const processes: BenchServer[] = [];
try {
  say('importing goodbooks-10k and indexing it');
  const rows = await indexedSample(database.db, elastic, indexPrefix);
  const headers = await benchKey(database.db);
  const redis = await connectRedis(`redis://127.0.0.1:${port + 1}`);
  const env = {
    DATABASE_URL: database.url,
    REDIS_URL: `redis://127.0.0.1:${port + 1}`,
    INDEX_PREFIX: indexPrefix,
    // On a machine loaded by other work the production wait would answer 503 for the machine, not the service.
    STORE_WAIT_MS: '5000',
  };
  const api = await startApi({ ...env, PORT: String(port), RATE_LIMIT_MAX: '100000000', METRICS_PORT: String(port + 2) });
  processes.push(api);
  const sync = await startProcess(
    ['loader/cli.ts', 'sync', '--follow'],
    { ...process.env, ...env, LOG_LEVEL: 'info', SYNC_METRICS_PORT: String(port + 3) },
    'stderr',
    (line) => (line.includes('sync following the change sequence') ? 'following' : null),
  );
  processes.push(sync);

  const started = performance.now();
  const minuteOf = (at: number) => Math.floor((at - started) / 60_000);
  const stop = new AbortController();
  const samples: Sample[] = [];
  // By the minute each request was sent in (answers come back out of that order).
  const byMinute = new Map<number, Outcome[]>();
  let errors = 0;
  const firstErrors: Outcome[] = [];
  const minuteLatencies = (minute: number, outcomes: Outcome[]): MinuteLatency[] =>
    [...REQUEST_KINDS.map((kind) => [kind, outcomes.filter((outcome) => outcome.kind === kind)] as const), ['all', outcomes] as const].map(
      ([kind, of]) => {
        const ms = of.map((outcome) => outcome.ms);
        return {
          minute,
          kind,
          count: ms.length,
          errors: failed(of).length,
          p50: percentile(ms, 50),
          p95: percentile(ms, 95),
          p99: percentile(ms, 99),
        };
      },
    );
  const traffic = mixedTraffic({
    baseUrl: api.url,
    headers,
    catalogue: trafficCatalogue(rows),
    rate: Number(values.rate),
    connections: Number(values.connections),
    signal: stop.signal,
    onOutcome(outcome) {
      const minute = minuteOf(outcome.at);
      const bucket = byMinute.get(minute);
      if (bucket) bucket.push(outcome);
      else byMinute.set(minute, [outcome]);
      if (failed([outcome]).length > 0) {
        errors += 1;
        if (firstErrors.length < 10) firstErrors.push(outcome);
      }
    },
  });

  // The writer: a title change per write, in one transaction with its change, as every writer does.
  const latestTitle = new Map<string, string>();
  let writes = 0;
  const writing = (async () => {
    const interval = 1000 / Number(values.writes);
    let due = performance.now();
    while (!stop.signal.aborted) {
      const row = rows[(writes * 7919) % rows.length]!;
      const title = `${row.title} (soak ${writes})`;
      await withTransaction(database.db, async (client) => {
        await client.query('update books set title = $2, updated_at = now() where id = entity_key($1)', [row.id, title]);
        await recordChanges(client, [{ entity: 'book', id: row.id, operation: 'update' }]);
      });
      latestTitle.set(row.id, title);
      writes += 1;
      due += interval;
      const wait = due - performance.now();
      if (wait > 0) await sleep(wait);
      else due = performance.now();
    }
  })();

  const sampling = (async () => {
    while (!stop.signal.aborted) {
      const status = await readFile(`/proc/${api.pid}/status`, 'utf8');
      const metricsUrl = `http://127.0.0.1:${port + 2}/metrics`;
      const { rows: connections } = await database.db.query<{ n: number }>(
        'select count(*)::int as n from pg_stat_activity where datname = current_database() and pid <> pg_backend_pid()',
      );
      const memory = /used_memory:(\d+)/.exec(await redis.info('memory'));
      samples.push({
        minute: (performance.now() - started) / 60_000,
        rssMb: Number(/VmRSS:\s+(\d+) kB/.exec(status)?.[1]) / 1024,
        heapMb: (await metric(metricsUrl, 'nodejs_heap_size_used_bytes')) / 2 ** 20,
        loopDelayP99Ms: (await metric(metricsUrl, 'nodejs_eventloop_lag_p99_seconds')) * 1000,
        // The database's connections less the script's own pool (4) and this query's.
        pgConnections: connections[0]!.n,
        redisMb: Number(memory?.[1]) / 2 ** 20,
        syncLagChanges: await metric(`http://127.0.0.1:${port + 3}/metrics`, 'bookmeta_sync_lag_changes'),
      });
      const last = samples.at(-1)!;
      if (samples.length % 6 === 0) {
        const [all] = minuteLatencies(0, byMinute.get(Math.floor(last.minute) - 1) ?? []).slice(-1);
        say(
          `minute ${Math.floor(last.minute)}: RSS ${last.rssMb.toFixed(0)} MB, last minute ${all!.count} requests, p99 ${all!.p99.toFixed(0)} ms, errors ${errors}, writes ${writes}`,
        );
      }
      await sleep(10_000, undefined, { signal: stop.signal }).catch(() => undefined);
    }
  })();

  say(`${values.rate} requests/s and ${values.writes} writes/s for ${minutes} minutes`);
  await sleep(minutes * 60_000);
  stop.abort();
  await Promise.all([traffic, writing, sampling]);
  const latencies = [...byMinute.keys()]
    .filter((minute) => minute < minutes)
    .sort((a, b) => a - b)
    .flatMap((minute) => minuteLatencies(minute, byMinute.get(minute)!));

  // Nothing lost: sync catches up, and every book written is in the index with its last title.
  say(`waiting for sync to apply the ${writes} writes`);
  const caughtUp = performance.now();
  while ((await metric(`http://127.0.0.1:${port + 3}/metrics`, 'bookmeta_sync_lag_changes')) !== 0) {
    if (performance.now() - caughtUp > 120_000) throw new Error('sync did not catch up within 2 minutes');
    await sleep(500);
  }
  await elastic.indices.refresh({ index: indexAliases(indexPrefix).books });
  const titles = [...latestTitle.values()].map((title) => title.toLowerCase());
  let found = 0;
  for (let from = 0; from < titles.length; from += 1_000) {
    const chunk = titles.slice(from, from + 1_000);
    const response = await elastic.count({ index: indexAliases(indexPrefix).books, query: { terms: { 'title.keyword': chunk } } });
    found += response.count;
  }

  // Figures against the targets.
  const warmup = Number(values.warmup);
  const window = Number(values.window);
  const median = (list: number[]) => percentile(list, 50);
  const rssAt = (from: number, until: number) =>
    median(samples.filter((sample) => sample.minute >= from && sample.minute < until).map((sample) => sample.rssMb));
  const rssAfterWarmup = rssAt(warmup, warmup + 1);
  const rssEnd = rssAt(minutes - 1, minutes + 1);
  const p99Of = (from: number, until: number) => {
    const minutesIn = latencies.filter(
      (latency) => latency.kind === 'all' && latency.count > 0 && latency.minute >= from && latency.minute < until,
    );
    return median(minutesIn.map((latency) => latency.p99));
  };
  const firstP99 = p99Of(warmup, warmup + window);
  const lastP99 = p99Of(minutes - window, minutes);
  const total = latencies.filter((latency) => latency.kind === 'all').reduce((sum, latency) => sum + latency.count, 0);
  console.log(
    `soak: ${minutes} min, ${total} requests (${(total / minutes / 60).toFixed(0)}/s of ${values.rate} offered), ${writes} writes (${(writes / minutes / 60).toFixed(1)}/s of ${values.writes})`,
  );
  console.log(
    `RSS after the ${warmup}-minute warm-up ${rssAfterWarmup.toFixed(0)} MB, at the end ${rssEnd.toFixed(0)} MB: ${(((rssEnd - rssAfterWarmup) / rssAfterWarmup) * 100).toFixed(1)} % (target < 10 %)`,
  );
  console.log(
    `p99 (median of the minutes' p99) minutes ${warmup}-${warmup + window}: ${firstP99.toFixed(0)} ms; last ${window}: ${lastP99.toFixed(0)} ms; ratio ${(lastP99 / firstP99).toFixed(2)} (target <= 1.2)`,
  );
  const range = (pick: (sample: Sample) => number) => {
    const list = samples.map(pick);
    return `${Math.min(...list).toFixed(1)}-${Math.max(...list).toFixed(1)}`;
  };
  console.log(
    `heap ${range((s) => s.heapMb)} MB, event-loop delay p99 ${range((s) => s.loopDelayP99Ms)} ms, PostgreSQL connections ${range((s) => s.pgConnections)}, Redis ${range((s) => s.redisMb)} MB, sync lag ${range((s) => s.syncLagChanges)} changes`,
  );
  console.log(
    `errors: ${errors}; books written ${latestTitle.size}, found with their last title in the index: ${found} (lost: ${latestTitle.size - found})`,
  );
  for (const error of firstErrors) console.log(`  error: ${error.kind} status ${error.status} ${error.error ?? ''}`);
  for (const kind of REQUEST_KINDS) {
    const of = latencies.filter((latency) => latency.kind === kind && latency.count > 0 && latency.minute >= warmup);
    console.log(
      `  ${kind.padEnd(16)} p50 ${median(of.map((l) => l.p50))
        .toFixed(1)
        .padStart(6)} ms  p95 ${median(of.map((l) => l.p95))
        .toFixed(1)
        .padStart(6)} ms  p99 ${median(of.map((l) => l.p99))
        .toFixed(1)
        .padStart(6)} ms (medians of the minutes after the warm-up)`,
    );
  }
  await writeFile(values.data, JSON.stringify({ samples, latencies }, null, 1));
  await plot(samples, latencies, values.png);
  say(`plot: ${values.png}, data: ${values.data}`);
  await redis.quit();
} finally {
  for (const child of processes.reverse()) await child.stop();
  redisServer.kill('SIGTERM');
  await elastic.indices.delete({ index: `${indexPrefix}*`, ignore_unavailable: true, allow_no_indices: true }).catch(() => undefined);
  await elastic.close();
  await database.drop();
}

/** The plot: four panels over time (memory, event-loop delay, stores, p99 per kind), as SVG rendered to PNG. */
async function plot(samples: Sample[], latencies: MinuteLatency[], path: string): Promise<void> {
  const width = 1000;
  const panelHeight = 200;
  const left = 70;
  const right = 170;
  const end = Math.max(1, ...samples.map((sample) => sample.minute), ...latencies.map((latency) => latency.minute + 1));
  const colors = ['#1f77b4', '#d62728', '#2ca02c', '#ff7f0e', '#9467bd', '#8c564b', '#333333'];
  const panels: { title: string; unit: string; series: { name: string; points: [number, number][] }[] }[] = [
    {
      title: 'API memory',
      unit: 'MB',
      series: [
        { name: 'RSS', points: samples.map((s) => [s.minute, s.rssMb]) },
        { name: 'heap used', points: samples.map((s) => [s.minute, s.heapMb]) },
      ],
    },
    {
      title: 'event-loop delay p99',
      unit: 'ms',
      series: [{ name: 'delay p99', points: samples.map((s) => [s.minute, s.loopDelayP99Ms]) }],
    },
    {
      title: 'stores',
      unit: 'count / MB',
      series: [
        { name: 'PG connections', points: samples.map((s) => [s.minute, s.pgConnections]) },
        { name: 'Redis MB', points: samples.map((s) => [s.minute, s.redisMb]) },
        { name: 'sync lag (changes)', points: samples.map((s) => [s.minute, s.syncLagChanges]) },
      ],
    },
    {
      title: 'p99 per minute',
      unit: 'ms',
      series: [...REQUEST_KINDS, 'all' as const].map((kind) => ({
        name: kind,
        points: latencies
          .filter((latency) => latency.kind === kind && latency.count > 0)
          .map((latency): [number, number] => [latency.minute + 0.5, latency.p99]),
      })),
    },
  ];
  const height = panels.length * (panelHeight + 50) + 20;
  const parts: string[] = [];
  panels.forEach((panel, index) => {
    const top = 30 + index * (panelHeight + 50);
    const max = Math.max(1, ...panel.series.flatMap((series) => series.points.map(([, y]) => y))) * 1.1;
    const x = (minute: number) => left + (minute / end) * (width - left - right);
    const y = (value: number) => top + panelHeight - (value / max) * panelHeight;
    parts.push(`<text x="${left}" y="${top - 8}" font-size="14" font-weight="bold">${panel.title} (${panel.unit})</text>`);
    parts.push(`<rect x="${left}" y="${top}" width="${width - left - right}" height="${panelHeight}" fill="none" stroke="#999"/>`);
    for (let tick = 0; tick <= 4; tick++) {
      const value = (max * tick) / 4;
      parts.push(`<line x1="${left}" x2="${width - right}" y1="${y(value)}" y2="${y(value)}" stroke="#eee"/>`);
      parts.push(
        `<text x="${left - 6}" y="${y(value) + 4}" font-size="11" text-anchor="end">${value < 10 ? value.toFixed(1) : value.toFixed(0)}</text>`,
      );
    }
    for (let minute = 0; minute <= end; minute += Math.max(1, Math.round(end / 10))) {
      parts.push(`<text x="${x(minute)}" y="${top + panelHeight + 14}" font-size="11" text-anchor="middle">${minute}</text>`);
    }
    panel.series.forEach((series, seriesIndex) => {
      const color = colors[seriesIndex % colors.length]!;
      const points = series.points.map(([minute, value]) => `${x(minute).toFixed(1)},${y(value).toFixed(1)}`).join(' ');
      parts.push(`<polyline points="${points}" fill="none" stroke="${color}" stroke-width="1.5"/>`);
      parts.push(`<text x="${width - right + 10}" y="${top + 14 + seriesIndex * 16}" font-size="12" fill="${color}">${series.name}</text>`);
    });
  });
  parts.push(`<text x="${width / 2}" y="${height - 4}" font-size="12" text-anchor="middle">minutes since the start</text>`);
  const svg = `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" font-family="sans-serif"><rect width="100%" height="100%" fill="white"/>${parts.join('')}</svg>`;
  const browser = await launchChromium();
  try {
    const page = await browser.newPage();
    await page.setViewport({ width, height });
    await page.setContent(`<html><body style="margin:0">${svg}</body></html>`);
    await page.screenshot({ path: path, clip: { x: 0, y: 0, width, height } });
  } finally {
    await browser.close();
  }
}

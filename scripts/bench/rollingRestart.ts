// Rolling restarts behind HAProxy under steady mixed traffic: does a deploy fail any request, and
// what does it do to latency? HAProxy (Debian's package, scripts/ops/haproxy.cfg) runs in front of
// two `bookmeta serve` processes over the goodbooks-10k catalogue (database bookmeta_bench_rolling,
// indices bench-rolling-*, both dropped at the end). One client sends the mix of
// scripts/lib/mixedTraffic.ts (cached and uncached lookups, search, match, bulk lookups, MCP calls)
// at --rate requests per second over --connections connections: --before seconds of it alone (the
// baseline), then --restarts rolling restarts done as docs/operations.md says (SIGTERM, wait for
// the exit, start, wait until HAProxy has the instance back), then --after seconds more. Prints the
// failures (resets, the balancer's 502/503, any 5xx), HAProxy's retries, and p50/p99 before and
// during the restarts (target: no failure, p99 during within 2x of before). The instances wait 5 s
// for a store (STORE_WAIT_MS) so that a machine slowed by other work does not answer 503 for it.
//
//   node --import tsx scripts/bench/rollingRestart.ts [--rate 300] [--connections 16] [--before 30] [--restarts 3] [--after 10] [--port 7500]
//
// Ports: HAProxy on --port, its statistics on --port + 1, the instances on --port + 2 and + 3.
import { parseArgs } from 'node:util';
import { setTimeout as sleep } from 'node:timers/promises';
import { createElastic } from '../../src/stores/elasticsearch/client.js';
import { rollingRestart, startBalancer, untilServer, type Instance } from '../lib/balancer.js';
import { benchDatabase, benchKey, benchRedisPrefix, startApi, type BenchServer } from '../lib/bench.js';
import { failed, indexedSample, mixedTraffic, REQUEST_KINDS, trafficCatalogue, type Outcome } from '../lib/mixedTraffic.js';
import { percentile } from '../lib/percentile.js';

const { values } = parseArgs({
  options: {
    rate: { type: 'string', default: '300' },
    connections: { type: 'string', default: '16' },
    before: { type: 'string', default: '30' },
    restarts: { type: 'string', default: '3' },
    after: { type: 'string', default: '10' },
    port: { type: 'string', default: '7500' },
  },
});
const say = (text: string) => process.stderr.write(`bench-rolling: ${new Date().toISOString().slice(11, 19)} ${text}\n`);
const port = Number(values.port);

const database = await benchDatabase('bookmeta_bench_rolling');
const redis = benchRedisPrefix('bench-rolling');
const indexPrefix = 'bench-rolling-';
const elastic = createElastic(process.env.ELASTICSEARCH_URL || 'http://127.0.0.1:9200');
const running = new Map<string, BenchServer>();
let balancer: Awaited<ReturnType<typeof startBalancer>> | undefined;
try {
  say('importing goodbooks-10k and indexing it');
  const rows = await indexedSample(database.db, elastic, indexPrefix);
  const headers = await benchKey(database.db);

  // Each instance as an operator runs it behind this balancer (the comment of scripts/ops/haproxy.cfg).
  const instance = (name: string, instancePort: number): Instance => ({
    name,
    async start() {
      running.set(
        name,
        await startApi({
          PORT: String(instancePort),
          DATABASE_URL: database.url,
          REDIS_PREFIX: redis.prefix,
          INDEX_PREFIX: indexPrefix,
          RATE_LIMIT_MAX: '100000000',
          DRAIN_DELAY_MS: '5000',
          TRUSTED_PROXIES: '127.0.0.1',
          // The store wait answers 503 when a store is slow: on a machine loaded by other work that
          // would be its measure, not the restarts'. The fault tests hold the production wait.
          STORE_WAIT_MS: '5000',
        }),
      );
    },
    async stop() {
      await running.get(name)!.stop();
      running.delete(name);
    },
  });
  const instances = [instance('api1', port + 2), instance('api2', port + 3)];
  await Promise.all(instances.map((each) => each.start()));
  balancer = await startBalancer({ port, statsPort: port + 1, servers: [`127.0.0.1:${port + 2}`, `127.0.0.1:${port + 3}`] });
  await untilServer(balancer, 'api1', 'UP');
  await untilServer(balancer, 'api2', 'UP');

  const outcomes: Outcome[] = [];
  const traffic = new AbortController();
  const rate = Number(values.rate);
  const sending = mixedTraffic({
    baseUrl: balancer.url,
    headers,
    catalogue: trafficCatalogue(rows),
    rate,
    connections: Number(values.connections),
    signal: traffic.signal,
    onOutcome: (outcome) => outcomes.push(outcome),
  });
  say(`${rate} requests/s for ${values.before} s before any restart`);
  const started = performance.now();
  await sleep(Number(values.before) * 1000);
  const restartsFrom = performance.now();
  for (let round = 1; round <= Number(values.restarts); round++) {
    say(`rolling restart ${round}`);
    await rollingRestart(balancer, instances, say);
  }
  const restartsUntil = performance.now();
  await sleep(Number(values.after) * 1000);
  traffic.abort();
  await sending;

  // The first seconds warm both instances up: the baseline is the rest of the time before the restarts.
  const baseline = outcomes.filter((outcome) => outcome.at >= started + 5_000 && outcome.at < restartsFrom);
  const during = outcomes.filter((outcome) => outcome.at >= restartsFrom && outcome.at < restartsUntil);
  const seconds = (from: number, until: number) => (until - from) / 1000;
  const line = (label: string, set: Outcome[], span: number) => {
    const ms = set.map((outcome) => outcome.ms);
    return `${label.padEnd(22)} ${String(set.length).padStart(7)} requests ${(set.length / span).toFixed(0).padStart(5)}/s   p50 ${percentile(ms, 50).toFixed(1).padStart(6)} ms   p99 ${percentile(ms, 99).toFixed(1).padStart(6)} ms   failed ${failed(set).length}`;
  };
  const failures = failed(outcomes);
  const servers = await balancer.servers();
  const frontend = await balancer.frontend();
  console.log(
    `${values.restarts} rolling restarts of 2 instances behind HAProxy, ${rate} requests/s offered over ${values.connections} connections`,
  );
  console.log(line('before (baseline)', baseline, seconds(started + 5_000, restartsFrom)));
  console.log(line('during the restarts', during, seconds(restartsFrom, restartsUntil)));
  for (const kind of REQUEST_KINDS) {
    const of = (set: Outcome[]) => set.filter((outcome) => outcome.kind === kind).map((outcome) => outcome.ms);
    console.log(
      `  ${kind.padEnd(16)} p99 before ${percentile(of(baseline), 99).toFixed(1).padStart(6)} ms   during ${percentile(of(during), 99).toFixed(1).padStart(6)} ms`,
    );
  }
  const p99 = (set: Outcome[]) =>
    percentile(
      set.map((outcome) => outcome.ms),
      99,
    );
  console.log(`p99 during / before: ${(p99(during) / p99(baseline)).toFixed(2)} (target <= 2)`);
  console.log(
    `restarts took ${seconds(restartsFrom, restartsUntil).toFixed(0)} s; all requests: ${outcomes.length}, failed: ${failures.length}`,
  );
  for (const failure of failures.slice(0, 10)) console.log(`  failed: ${failure.kind} status ${failure.status} ${failure.error ?? ''}`);
  console.log(
    `HAProxy: 5xx answered ${frontend.responses5xx}; ` +
      servers
        .map(
          (server) =>
            `${server.name} retries ${server.retries}, redispatches ${server.redispatches}, errors ${server.connectionErrors + server.responseErrors}, taken out by its check ${server.checkDowns}x`,
        )
        .join('; '),
  );
} finally {
  await balancer?.stop();
  await Promise.all([...running.values()].map((server) => server.stop()));
  await elastic.indices.delete({ index: `${indexPrefix}*`, ignore_unavailable: true, allow_no_indices: true }).catch(() => undefined);
  await elastic.close();
  await database.drop();
  await redis.drop();
}

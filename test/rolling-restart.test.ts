import test from 'ava';
import { setTimeout as sleep } from 'node:timers/promises';
import { reindex } from '../loader/index/reindex.js';
import { rollingRestart, startBalancer, untilServer, type Balancer, type Instance } from '../scripts/lib/balancer.js';
import { failed, mixedTraffic, trafficCatalogue, type Outcome } from '../scripts/lib/mixedTraffic.js';
import { liveBooks, loadSampleCatalogue } from './helpers/catalogue.js';
import { createWorld, GENEROUS_STORE_WAIT, newKey, startTestServer, type TestWorld } from './helpers/env.js';
import { freePort } from './helpers/faults.js';
import { loaderDeps, type TestLoaderDeps } from './helpers/indexing.js';
import { spawnServer, type ServerProcess } from './helpers/processes.js';
import { meteredCount } from './helpers/usage.js';

/**
 * A deploy as operators do it: HAProxy with the repository's configuration in front of two
 * `bookmeta serve` processes, steady mixed traffic through it, and each instance in turn sent
 * SIGTERM, waited for and started again (docs/operations.md, "Deploying"). Not one request may fail.
 */

let world: TestWorld;
let deps: TestLoaderDeps;
let balancer: Balancer | undefined;
const running = new Map<string, ServerProcess>();

/** Long enough for the balancer's check (two failures, 0.5 to 1 s apart) on a loaded machine. */
const DRAIN_DELAY_MS = 3_000;

test.before(async () => {
  // Its client must not retry a 503 (that would hide the failure this file looks for), and the
  // restarts load the machine: the generous wait keeps a slow search from being one.
  world = await createWorld(GENEROUS_STORE_WAIT);
  deps = loaderDeps(world);
  await loadSampleCatalogue(world);
  await reindex(deps, 'all', { progress: false });
});

test.after.always(async () => {
  await balancer?.stop();
  for (const server of running.values()) {
    server.child.kill('SIGKILL');
    await server.exited;
  }
  await deps?.close();
  await world?.destroy();
});

/** An instance on a port of its own, run the way the configuration's comment says. */
async function instance(name: string): Promise<Instance & { address: string }> {
  const port = await freePort();
  const env = {
    ...world.env,
    PORT: String(port),
    DRAIN_DELAY_MS: String(DRAIN_DELAY_MS),
    TRUSTED_PROXIES: '127.0.0.1',
    RATE_LIMIT_MAX: '1000000',
  };
  const start = async () => {
    running.set(name, await spawnServer(env));
  };
  await start();
  return {
    name,
    address: `127.0.0.1:${port}`,
    start,
    async stop() {
      const server = running.get(name)!;
      server.child.kill('SIGTERM');
      const code = await server.exited;
      running.delete(name);
      if (code !== 0) throw new Error(`${name} exited with ${code} on SIGTERM`);
    },
  };
}

test('a rolling restart behind HAProxy fails no request: no reset, no 502/503 from the balancer, no 5xx, and every call is metered', async (t) => {
  const instances = await Promise.all([instance('api1'), instance('api2')]);
  balancer = await startBalancer({
    port: await freePort(),
    statsPort: await freePort(),
    servers: [instances[0].address, instances[1].address],
  });
  await untilServer(balancer, 'api1', 'UP');
  await untilServer(balancer, 'api2', 'UP');

  const books = await liveBooks(world.db, 200, { withIsbn: true });
  const { kid, auth } = await newKey(world);
  const outcomes: Outcome[] = [];
  const traffic = new AbortController();
  const sending = mixedTraffic({
    baseUrl: balancer.url,
    headers: auth,
    catalogue: trafficCatalogue(books),
    rate: 100,
    connections: 8,
    signal: traffic.signal,
    onOutcome: (outcome) => outcomes.push(outcome),
  });
  await sleep(2_000);
  const before = outcomes.length;
  await rollingRestart(balancer, instances, (text) => t.log(text));
  await sleep(2_000);
  traffic.abort();
  await sending;

  const failures = failed(outcomes);
  t.deepEqual(
    failures.slice(0, 10).map(({ kind, status, error }) => ({ kind, status, error })),
    [],
    `${failures.length} of ${outcomes.length} requests failed`,
  );
  t.true(outcomes.length - before > 200, `only ${outcomes.length - before} requests during the restart`);
  const servers = await balancer.servers();
  for (const server of servers) {
    t.is(server.checkDowns, 1, `${server.name} taken out of rotation once, by its check`);
    t.is(server.retries + server.redispatches, 0, `${server.name}: no request needed sending again`);
    t.is(server.connectionErrors + server.responseErrors, 0, `${server.name}: no connection or response error`);
  }
  t.is((await balancer.frontend()).responses5xx, 0);

  // Both stopped gracefully: every answered call is in the usage table.
  for (const server of instances) await server.stop();
  t.is(await meteredCount(world.db, kid), outcomes.length);
});

test('told to stop, a server answers /ready with 503 and keeps serving for the drain delay, each answer closing its connection; then it stops accepting', async (t) => {
  const server = await startTestServer(world, { drain: { delayMs: 1_500, timeoutMs: 10_000 } });
  const { auth } = await newKey(world);
  const [book] = await liveBooks(world.db, 1, { withIsbn: true });
  const ready = await fetch(`${server.url}/ready`);
  t.is(ready.status, 200);
  t.deepEqual(await ready.json(), { status: 'ready' });
  t.is(ready.headers.get('Connection'), 'keep-alive');

  const started = performance.now();
  const stopped = server.stop();
  const draining = await fetch(`${server.url}/ready`);
  t.is(draining.status, 503);
  t.deepEqual(await draining.json(), { status: 'draining' });
  const lookup = await fetch(`${server.url}/v1/isbn/${book!.isbn_13}`, { headers: auth });
  t.is(lookup.status, 200, 'still serving while the balancer notices');
  t.is(lookup.headers.get('Connection'), 'close', 'a client does not keep a connection the server will close');

  await stopped;
  t.true(performance.now() - started >= 1_500, 'served on for the whole delay');
  await t.throwsAsync(fetch(`${server.url}/ready`), undefined, 'no longer accepting');
});

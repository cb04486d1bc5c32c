// Normal requests' latency while slow clients (slow loris) hold connections, against the same
// requests without them, on one server in one run: quiet and attacked rounds alternate, so a change
// in the machine's load weighs on both alike. The attacker connects from another loopback address
// (127.0.0.2), as another client would: half its connections send headers one byte at a time and
// never finish them, half declare a 100000-byte body and send two bytes; each reconnects as soon
// as the server closes it. The attacker is a process of its own (this script with --attack), so
// that its timers do not slow the normal client's. The normal client asks for a cached ISBN
// lookup, one request at a time per connection.
// Run: node --import tsx scripts/bench/slowLoris.ts [--slow 200] [--seconds 30] [--rounds 3] [--connections 8]
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { createConnection, type Socket } from 'node:net';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { benchDatabase, benchKey, benchRedisPrefix, importSampleBooks, startApi } from '../lib/bench.js';
import { percentile } from '../lib/percentile.js';

const { values } = parseArgs({
  options: {
    slow: { type: 'string', default: '200' },
    seconds: { type: 'string', default: '30' },
    rounds: { type: 'string', default: '3' },
    connections: { type: 'string', default: '8' },
    // The attacker's own process: the server's URL and the key's header.
    attack: { type: 'string' },
    authorization: { type: 'string' },
  },
});
const slowCount = Number(values.slow);
const rounds = Number(values.rounds);
const roundMs = (Number(values.seconds) / rounds) * 1000;
const connections = Number(values.connections);

/** The slow clients: `count` connections kept open (each reopened when the server closes it) until stopped. */
function slowClients(url: string, authorization: string, count: number): { stop(): void; stats: { opened: number; answered: number } } {
  const { hostname, port } = new URL(url);
  const stats = { opened: 0, answered: 0 };
  const sockets = new Set<Socket>();
  let stopped = false;
  const open = (index: number): void => {
    if (stopped) return;
    stats.opened += 1;
    const socket = createConnection({ host: hostname, port: Number(port), localAddress: '127.0.0.2' });
    sockets.add(socket);
    let trickle: NodeJS.Timeout | undefined;
    socket.on('connect', () => {
      if (index % 2 === 0) {
        socket.write('GET /health HTTP/1.1\r\nHost: bench\r\nX-Slow: ');
        trickle = setInterval(() => socket.write('a'), 1_000);
      } else {
        socket.write(
          `POST /v1/match HTTP/1.1\r\nHost: bench\r\nAuthorization: ${authorization}\r\nContent-Type: application/json\r\nContent-Length: 100000\r\n\r\n{"`,
        );
      }
    });
    socket.once('data', () => (stats.answered += 1));
    socket.on('error', () => undefined);
    socket.on('close', () => {
      clearInterval(trickle);
      sockets.delete(socket);
      setTimeout(() => open(index), 10);
    });
  };
  for (let index = 0; index < count; index++) open(index);
  return {
    stats,
    stop() {
      stopped = true;
      for (const socket of sockets) socket.destroy();
    },
  };
}

if (values.attack !== undefined) {
  // The attacker: slow connections until SIGTERM, then what they met, as JSON on stdout.
  const slow = slowClients(values.attack, values.authorization ?? '', slowCount);
  const stopped = once(process, 'SIGTERM');
  console.log('attacking');
  await stopped;
  slow.stop();
  console.log(JSON.stringify(slow.stats));
  process.exit(0);
}

/** Starts the attacker's process, once its connections are opening; stopping it gives what they met. */
async function startAttack(): Promise<{ stop(): Promise<{ opened: number; answered: number }> }> {
  const child = spawn(
    process.execPath,
    [
      '--import',
      'tsx',
      fileURLToPath(import.meta.url),
      '--attack',
      api.url,
      '--authorization',
      headers.Authorization!,
      '--slow',
      String(slowCount),
    ],
    { stdio: ['ignore', 'pipe', 'inherit'] },
  );
  let output = '';
  child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
  while (!output.includes('attacking\n')) {
    if (child.exitCode !== null) throw new Error(`the attacker exited (${child.exitCode})`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return {
    async stop() {
      const exited = once(child, 'exit');
      child.kill('SIGTERM');
      await exited;
      return JSON.parse(output.trim().split('\n').at(-1)!) as { opened: number; answered: number };
    },
  };
}

const database = await benchDatabase('bookmeta_bench_slow_loris');
await importSampleBooks(database.db);
const headers = await benchKey(database.db);
const { rows } = await database.db.query<{ isbn_13: string }>(
  'select isbn_13 from books where isbn_13 is not null order by popularity desc limit 1',
);
const redis = benchRedisPrefix('bench-slow-loris');
const api = await startApi({ DATABASE_URL: database.url, RATE_LIMIT_MAX: '1000000000', REDIS_PREFIX: redis.prefix });
const target = `${api.url}/v1/isbn/${rows[0]!.isbn_13}`;

/** Latencies (ms) of `connections` clients asking for the lookup one after another, for `ms`. */
async function normalRequests(ms: number): Promise<{ latencies: number[]; failures: number }> {
  const latencies: number[] = [];
  let failures = 0;
  const until = performance.now() + ms;
  await Promise.all(
    Array.from({ length: connections }, async () => {
      while (performance.now() < until) {
        const started = performance.now();
        try {
          const response = await fetch(target, { headers });
          await response.arrayBuffer();
          if (response.status === 200) latencies.push(performance.now() - started);
          else failures += 1;
        } catch {
          failures += 1;
        }
      }
    }),
  );
  return { latencies, failures };
}

try {
  await normalRequests(2_000); // warm-up: the key checked, the lookup cached
  const quiet: number[] = [];
  const attacked: number[] = [];
  let failures = { quiet: 0, attacked: 0 };
  const attack = { opened: 0, answered: 0 };
  for (let round = 0; round < rounds; round++) {
    // Every other round runs the attacked half first.
    for (const underAttack of round % 2 === 0 ? [false, true] : [true, false]) {
      const slow = underAttack ? await startAttack() : null;
      // Its connections open before the round starts.
      if (slow) await new Promise((resolve) => setTimeout(resolve, 1_000));
      const { latencies, failures: failed } = await normalRequests(roundMs);
      const met = await slow?.stop();
      (underAttack ? attacked : quiet).push(...latencies);
      if (underAttack) failures = { ...failures, attacked: failures.attacked + failed };
      else failures = { ...failures, quiet: failures.quiet + failed };
      if (met) {
        attack.opened += met.opened;
        attack.answered += met.answered;
      }
      // The server closes what is left of the slow connections before the next round.
      await new Promise((resolve) => setTimeout(resolve, 500));
    }
  }
  const line = (label: string, latencies: number[], failed: number) =>
    `${label.padEnd(26)} ${String(latencies.length).padStart(7)} requests   p50 ${percentile(latencies, 50).toFixed(1).padStart(6)} ms   p95 ${percentile(latencies, 95).toFixed(1).padStart(6)} ms   failed ${failed}`;
  console.log(
    `${rounds} alternating rounds of ${roundMs / 1000} s each way, ${connections} normal connections, ${slowCount} slow connections while attacked`,
  );
  console.log(line('quiet (baseline)', quiet, failures.quiet));
  console.log(line(`${slowCount} slow connections`, attacked, failures.attacked));
  console.log(`slow connections opened ${attack.opened}, answered (408/401/429) before closing ${attack.answered}`);
  console.log(
    `p95 attacked / quiet: ${(percentile(attacked, 95) / percentile(quiet, 95)).toFixed(2)}  (target <= 1.1, within the machine's noise)`,
  );
} finally {
  await api.stop();
  await redis.drop();
  await database.drop();
}

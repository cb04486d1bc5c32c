// CPU per metered call, in isolation: a loop that makes a request's worth of short-lived garbage
// and records a usage call, against the same loop without the meter, in alternating rounds. The
// meter writes to a scratch database; PostgreSQL's CPU is read from /proc.
// With --flush-every N, the meter writes every N calls, as a quiet server's timer makes it write
// a few calls at a time: the figure times N is then the cost of one such write.
// Run: node --import tsx scripts/bench/meter.ts [--calls 400000] [--rounds 3] [--flush-every N]
import { readFileSync, readdirSync } from 'node:fs';
import { setImmediate as nextTurn } from 'node:timers/promises';
import { parseArgs } from 'node:util';
import { createLogger } from '../../src/log.js';
import { Meter } from '../../src/services/meter.js';
import { benchDatabase } from '../lib/bench.js';
import { percentile } from '../lib/percentile.js';

const { values } = parseArgs({
  options: {
    calls: { type: 'string', default: '400000' },
    rounds: { type: 'string', default: '3' },
    'flush-every': { type: 'string', default: '0' },
  },
});
const calls = Number(values.calls);
const flushEvery = Number(values['flush-every']);
const CLOCK_TICK_US = 10_000; // /proc counts CPU time in 1/100 s

/** CPU ticks used so far by every PostgreSQL process. */
function postgresTicks(): number {
  let ticks = 0;
  for (const pid of readdirSync('/proc').filter((name) => /^\d+$/.test(name))) {
    try {
      if (!readFileSync(`/proc/${pid}/comm`, 'utf8').startsWith('postgres')) continue;
      const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
      ticks += Number(fields[11]) + Number(fields[12]);
    } catch {
      // The process ended meanwhile.
    }
  }
  return ticks;
}

const database = await benchDatabase('bookmeta_bench_meter');
const meter = new Meter(database.db, createLogger('silent'), 100_000);

/** One round of `calls` calls; returns CPU µs per call of this process and of PostgreSQL. */
async function round(metered: boolean): Promise<{ node: number; postgres: number }> {
  let garbage: unknown[] = [];
  const cpu = process.cpuUsage();
  const postgres = postgresTicks();
  for (let i = 0; i < calls; i++) {
    const started = performance.now();
    // What a request leaves behind, so that records kept for the write age as they would in a server.
    garbage.push({ path: `/v1/isbn/${i}`, headers: [i, i + 1], state: { i } });
    if (garbage.length > 200) garbage = [];
    if (metered)
      meter.record({
        kid: 'k3j4h5g6f7d8',
        method: 'GET',
        route: '/v1/isbn/:isbn',
        status: 200,
        at: performance.timeOrigin + started,
        latencyMs: performance.now() - started,
      });
    if (metered && flushEvery > 0 && i % flushEvery === flushEvery - 1) await meter.flush();
    if (i % 16 === 0) await nextTurn(); // lets the meter's writes go on, as between requests
  }
  await meter.flush();
  const used = process.cpuUsage(cpu);
  return { node: (used.user + used.system) / calls, postgres: ((postgresTicks() - postgres) * CLOCK_TICK_US) / calls };
}

const bare: number[] = [];
const node: number[] = [];
const postgres: number[] = [];
try {
  for (let index = 0; index < Number(values.rounds); index++) {
    bare.push((await round(false)).node);
    const metered = await round(true);
    node.push(metered.node);
    postgres.push(metered.postgres);
  }
} finally {
  await meter.close();
  await database.drop();
}
const median = (values: number[]) => percentile(values, 50).toFixed(2);
console.log(`loop without the meter:  ${median(bare)} µs a call`);
console.log(`loop with the meter:     ${median(node)} µs a call, PostgreSQL ${median(postgres)} µs a call`);
const apiCost = percentile(node, 50) - percentile(bare, 50);
console.log(`metering: the API ${apiCost.toFixed(2)} µs a call, PostgreSQL ${median(postgres)} µs a call`);
if (flushEvery > 0)
  console.log(
    `a write of ${flushEvery} calls: ${((apiCost + percentile(postgres, 50)) * flushEvery).toFixed(0)} µs of CPU, the API and PostgreSQL together`,
  );

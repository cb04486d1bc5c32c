// CPU per request line of the API server's log, alone: the server's buffered logger against the same
// logger writing each line as it is logged (as the CLI's commands do). Both write to stderr, so send
// it to /dev/null. The kinds alternate in rounds (A B, B A); the figure is each one's best round.
// Run: node --import tsx scripts/bench/log.ts [--lines 300000] [--rounds 6] 2>/dev/null
import { parseArgs } from 'node:util';
import { createLogger } from '../../src/log.js';

const { values } = parseArgs({ options: { lines: { type: 'string', default: '300000' }, rounds: { type: 'string', default: '6' } } });
const lines = Number(values.lines);
const rounds = Number(values.rounds);

// The fields requestRecords logs for every request.
const entry = {
  requestId: 'a1b2c3d4-e5f6-4890-abcd-ef1234567890',
  method: 'GET',
  path: '/v1/isbn/9780439023480',
  status: 200,
  ms: 0.4,
  kid: 'k7f3a9b2c1d0',
};
const kinds = [
  { label: 'a write per line', log: createLogger('info') },
  { label: 'buffered (the server)', log: createLogger('info', { buffered: true }) },
];

const best = kinds.map(() => Infinity);
for (let round = 0; round < rounds; round++) {
  const order = round % 2 === 0 ? [0, 1] : [1, 0];
  for (const index of order) {
    const { log } = kinds[index]!;
    const started = performance.now();
    for (let i = 0; i < lines; i++) log.info({ ...entry }, 'request');
    best[index] = Math.min(best[index]!, ((performance.now() - started) * 1000) / lines);
    // Let the writes of this round finish before the next kind is timed.
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}
for (const [index, { label }] of kinds.entries()) {
  console.log(`${label.padEnd(24)} ${best[index]!.toFixed(2)} µs/line   ${(best[index]! / best[0]!).toFixed(2)} of a write per line`);
}

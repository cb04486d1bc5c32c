// CPU per request line of the API server's log, alone: pino's own async destination (the baseline),
// this project's chunked destination under pino's serializer, and the request line written by
// `requestLogger`, all to /dev/null. The kinds alternate in rounds; the figure is each one's best round.
// Run: node --import tsx scripts/bench/log.ts [--lines 300000] [--rounds 5]
import { openSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { pino } from 'pino';
import { requestLogger, type RequestLogEntry } from '../../src/log.js';
import { ChunkedDestination } from '../../src/logDestination.js';

const { values } = parseArgs({ options: { lines: { type: 'string', default: '300000' }, rounds: { type: 'string', default: '5' } } });
const lines = Number(values.lines);
const rounds = Number(values.rounds);

const devNull = openSync('/dev/null', 'w');
const entry: RequestLogEntry = { requestId: 'a1b2c3d4-e5f6-4890-abcd-ef1234567890', method: 'GET', path: '/v1/isbn/9780439023480', status: 200, ms: 0.4, kid: 'k7f3a9b2c1d0' };
const logger = (destination: pino.DestinationStream) => pino({ name: 'bookmeta', level: 'info' }, destination);

const pinoAsync = logger(pino.destination({ dest: devNull, sync: false, minLength: 4096 }));
const pinoChunked = logger(new ChunkedDestination(devNull));
const requestLine = requestLogger(logger(new ChunkedDestination(devNull)));

const kinds: [string, () => void][] = [
  ['pino.info, pino async destination', () => pinoAsync.info({ ...entry }, 'request')],
  ['pino.info, chunked destination', () => pinoChunked.info({ ...entry }, 'request')],
  ['requestLogger, chunked destination', () => requestLine(entry)],
];

const best = kinds.map(() => Infinity);
for (let round = 0; round < rounds; round++) {
  for (const [index, [, log]] of kinds.entries()) {
    const started = performance.now();
    for (let i = 0; i < lines; i++) log();
    best[index] = Math.min(best[index]!, ((performance.now() - started) * 1000) / lines);
    // Let the writes of this round finish before the next kind is timed.
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}
for (const [index, [label]] of kinds.entries()) {
  console.log(`${label.padEnd(36)} ${best[index]!.toFixed(2)} µs/line   ${(best[index]! / best[0]!).toFixed(2)} of the baseline`);
}

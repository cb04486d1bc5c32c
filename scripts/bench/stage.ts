// What staging a dump line costs a first load (loader/import/openlibrary/stage.ts stageLines: parse,
// map, ids, digest, COPY text) against JSON.parse of the same lines' JSON column, in CPU time of this
// process, on one thread, in chunks of 2,000 lines as the stage workers get them.
//
//   node --import tsx scripts/bench/stage.ts [--editions 50000] [--seed 7] [--rounds 3] [--work-dir /var/tmp/bookmeta-bench]
//
// 50,000 generated editions make about 100,000 lines of authors, works and editions. For where the
// time goes, run it under `node --cpu-prof --import tsx` and open the profile it writes.

import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { parseArgs } from 'node:util';

import { stageLines } from '../../loader/import/openlibrary/stage.js';
import { generateOpenLibrary } from '../dev/generate-openlibrary.js';

const { values } = parseArgs({
  options: {
    editions: { type: 'string', default: '50000' },
    seed: { type: 'string', default: '7' },
    rounds: { type: 'string', default: '3' },
    'work-dir': { type: 'string', default: '/var/tmp/bookmeta-bench' },
  },
});
const CHUNK = 2_000;
const dumpDir = join(values['work-dir'], `openlibrary-${values.editions}-${values.seed}`);
if (!existsSync(join(dumpDir, 'ol_dump_editions.txt')))
  await generateOpenLibrary({ editions: Number(values.editions), seed: Number(values.seed) }, dumpDir);
const lines = (
  await Promise.all(['authors', 'works', 'editions'].map((kind) => readFile(join(dumpDir, `ol_dump_${kind}.txt`), 'utf8')))
).flatMap((text) => text.split('\n').filter((line) => line.length > 0));
const chunks = Array.from({ length: Math.ceil(lines.length / CHUNK) }, (_, at) => ({
  file: 0,
  lines: lines.slice(at * CHUNK, (at + 1) * CHUNK),
  numbers: Array.from({ length: Math.min(CHUNK, lines.length - at * CHUNK) }, (_, index) => at * CHUNK + index + 1),
}));

/** Microseconds of this process's CPU per line. */
function cpuPerLine(work: () => void): number {
  const start = process.cpuUsage();
  work();
  const used = process.cpuUsage(start);
  return (used.user + used.system) / lines.length;
}

const parse = () => {
  for (const line of lines)
    try {
      JSON.parse(line.slice(line.lastIndexOf('\t') + 1));
    } catch {
      // A broken line costs its parse as well.
    }
};
const stage = () => {
  for (const chunk of chunks) stageLines(chunk);
};
// Warmed up once each; then alternating, so that both see the same load.
parse();
stage();
const parsed: number[] = [];
const staged: number[] = [];
for (let round = 0; round < Number(values.rounds); round++) {
  parsed.push(cpuPerLine(parse));
  staged.push(cpuPerLine(stage));
}
const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;
console.log(`${lines.length} lines (${values.editions} editions, seed ${values.seed}), CPU per line, median of ${values.rounds} rounds:`);
console.log(`  stageLines  ${median(staged).toFixed(1)} µs (${staged.map((value) => value.toFixed(1)).join(', ')})`);
console.log(`  JSON.parse  ${median(parsed).toFixed(1)} µs (${parsed.map((value) => value.toFixed(1)).join(', ')})`);
console.log(`  ratio       ${(median(staged) / median(parsed)).toFixed(1)}`);

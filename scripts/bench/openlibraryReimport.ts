// Open Library re-import at scale, in one run: a set-based first load of generated dumps, then a
// re-import of the same dumps set-based and record by record (the baseline; neither writes anything,
// so both run on the loaded catalogue), then of next month's dumps (scripts/dev/generate-openlibrary.ts
// --changed: that fraction of the records revised, redirected or deleted, a few new) set-based, and
// record by record into a copy of the same loaded catalogue. Each `bookmeta import openlibrary` runs
// in its own process, as an operator runs it: seconds, the importer's peak RSS, the PostgreSQL
// backends' peak private memory, the load average, and the import's report.
//
//   node --import tsx scripts/bench/openlibraryReimport.ts [--editions 1000000] [--seed 42] [--changed 0.02]
//     [--work-dir /var/tmp/bookmeta-bench] [--batch-size 2000] [--set-based-only] [--keep]
//
// With --set-based-only, next month's dumps are not imported record by record. The databases are
// dropped and the dumps deleted at the end, unless --keep. Honours DATABASE_URL (its server; the
// database name is replaced).

import { existsSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { parseArgs } from 'node:util';

import { generateOpenLibrary } from '../dev/generate-openlibrary.js';
import { copyDatabase, dropDatabase, freshDatabase, importRun, type ImportRun } from '../lib/openlibraryImport.js';

const { values } = parseArgs({
  options: {
    editions: { type: 'string', default: '1000000' },
    seed: { type: 'string', default: '42' },
    changed: { type: 'string', default: '0.02' },
    'work-dir': { type: 'string', default: '/var/tmp/bookmeta-bench' },
    'batch-size': { type: 'string', default: '2000' },
    'set-based-only': { type: 'boolean', default: false },
    keep: { type: 'boolean', default: false },
  },
});
const editions = Number(values.editions);
const seed = Number(values.seed);
const changed = Number(values.changed);
const say = (text: string) => process.stderr.write(`bench-openlibrary-reimport: ${text}\n`);

const dumpsOf = async (dir: string, monthChanged?: number): Promise<string[]> => {
  const files = ['authors', 'works', 'editions'].map((kind) => join(dir, `ol_dump_${kind}.txt`));
  if (!existsSync(files[2]!)) await generateOpenLibrary({ editions, seed, changed: monthChanged }, dir);
  return files;
};
const dirs = {
  thisMonth: join(values['work-dir'], `openlibrary-${editions}-${seed}`),
  nextMonth: join(values['work-dir'], `openlibrary-${editions}-${seed}-next-${changed}`),
};
const names = { set: `bookmeta_bench_olre_${editions}_${seed}_set`, record: `bookmeta_bench_olre_${editions}_${seed}_record` };
const batchSize = values['batch-size'];

const line = (label: string, result: ImportRun, against?: { label: string; run: ImportRun }) =>
  `${label.padEnd(44)} ${result.seconds.toFixed(1).padStart(7)} s` +
  (against ? ` = ${(result.seconds / against.run.seconds).toFixed(3)} of ${against.label}` : '') +
  `; importer peak RSS ${result.peakRssMb.toFixed(0)} MB, PostgreSQL backend peak private ${result.backendMb.toFixed(0)} MB; load ${result.loadBefore} -> ${result.loadAfter}\n` +
  result.report.map((report) => `    ${report}\n`).join('');

try {
  say(
    `generating ${editions} editions (seed ${seed}) into ${dirs.thisMonth}, and next month's (${changed} changed) into ${dirs.nextMonth}`,
  );
  const thisMonth = await dumpsOf(dirs.thisMonth);
  const nextMonth = await dumpsOf(dirs.nextMonth, changed);

  await freshDatabase(names.set);
  const first = await importRun(names.set, 'set-based', thisMonth, batchSize, say);
  // Nothing changes: both read the same catalogue, one after the other.
  const sameSet = await importRun(names.set, 'set-based', thisMonth, batchSize, say);
  const sameRecord = await importRun(names.set, 'record-by-record', thisMonth, batchSize, say);
  let nextRecord: ImportRun | null = null;
  if (!values['set-based-only']) {
    await copyDatabase(names.set, names.record);
    nextRecord = await importRun(names.record, 'record-by-record', nextMonth, batchSize, say);
  }
  const nextSet = await importRun(names.set, 'set-based', nextMonth, batchSize, say);

  console.log(`open library dumps: ${editions} editions (seed ${seed}); next month's with ${changed * 100} % of the records changed`);
  console.log(line('first load, set-based', first));
  console.log(line('same dumps again, set-based', sameSet, { label: 'the first load', run: first }));
  console.log(line('same dumps again, record by record', sameRecord, { label: 'the first load', run: first }));
  console.log(`  set-based against record by record, same dumps: ${(sameRecord.seconds / sameSet.seconds).toFixed(2)}x faster\n`);
  console.log(line(`next month's dumps, set-based`, nextSet, { label: 'the first load', run: first }));
  if (nextRecord) {
    console.log(line(`next month's dumps, record by record`, nextRecord, { label: 'the first load', run: first }));
    console.log(`  set-based against record by record, next month's dumps: ${(nextRecord.seconds / nextSet.seconds).toFixed(2)}x faster`);
  }
} finally {
  if (values.keep) console.log(`kept: databases ${names.set} and ${names.record}, dumps in ${dirs.thisMonth} and ${dirs.nextMonth}`);
  else {
    await dropDatabase(names.set);
    await dropDatabase(names.record);
    await rm(dirs.thisMonth, { recursive: true, force: true });
    await rm(dirs.nextMonth, { recursive: true, force: true });
  }
}

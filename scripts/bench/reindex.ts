// Indexing throughput: a full reindex of N generated books against the ceiling of the same node.
//
//   node --import tsx scripts/bench/reindex.ts [--count 1000000] [--seed 42] [--work-dir /var/tmp/bookmeta-bench]
//
// 1. Generates N books with scripts/dev/generate-catalogue.ts and imports them with the goodbooks
//    importer into a dedicated database (bookmeta_bench_<N>_<seed>; both are kept for the next run).
// 2. Baseline: the documents, built beforehand and written as bulk NDJSON to a file, are bulk-indexed
//    into a fresh index on the same node with the same bulk writer, chunk size, concurrency and
//    refresh settings: the rate Elasticsearch can take when nothing has to be built.
// 3. `bookmeta reindex books` in its own process, as an operator runs it; its peak RSS is read from
//    /proc/<pid>/status (VmHWM).
// Prints docs/s of both, the ratio (target >= 0.7) and the loader's peak RSS (target < 300 MB).
// Honours DATABASE_URL (its server; the database name is replaced) and ELASTICSEARCH_URL.

import { createReadStream, createWriteStream, existsSync } from 'node:fs';
import { readFile, rename, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { finished } from 'node:stream/promises';
import { parseArgs } from 'node:util';
import { projectPath } from '../../src/paths.js';
import { BulkWriter } from '../../loader/stores/elasticsearch/bulk.js';
import { createElastic, indexAliases } from '../../src/stores/elasticsearch/client.js';
import { streamDocuments } from '../../loader/stores/elasticsearch/documents.js';
import { createPhysicalIndex, dropIndex, finishBulkLoad } from '../../loader/stores/elasticsearch/indices.js';
import { lastSeq } from '../../src/stores/postgres/changes.js';
import { createPool } from '../../src/stores/postgres/pool.js';
import { generatedCatalogueDatabase, runMeasured } from '../lib/bench.js';

const { values } = parseArgs({
  options: {
    count: { type: 'string', default: '1000000' },
    seed: { type: 'string', default: '42' },
    'work-dir': { type: 'string', default: '/var/tmp/bookmeta-bench' },
    concurrency: { type: 'string', default: '2' },
    // An existing catalogue instead of a generated one (an Open Library import: scripts/bench/openlibrary.ts).
    database: { type: 'string' },
  },
});
const count = Number(values.count);
const seed = Number(values.seed);
const concurrency = Number(values.concurrency);
const workDir = values['work-dir'];
const say = (text: string) => process.stderr.write(`bench-index: ${text}\n`);

const serverUrl = new URL(process.env.DATABASE_URL || 'postgres://postgres@127.0.0.1:5432/bookmeta');
const databaseUrl = new URL(serverUrl);
databaseUrl.pathname = `/${values.database ?? `bookmeta_bench_${count}_${seed}`}`;
const esUrl = process.env.ELASTICSEARCH_URL || 'http://127.0.0.1:9200';
const prefix = values.database ? `bench-${values.database}-` : `bench-${count}-`;
const alias = indexAliases(prefix).books;

async function prepareDatabase(): Promise<void> {
  if (values.database) return;
  return generatedCatalogueDatabase({ databaseUrl: databaseUrl.toString(), count, seed, workDir, say });
}

/** The bulk NDJSON of every book document, built once (not timed). */
async function buildNdjson(): Promise<{ path: string; documents: number }> {
  const path = join(workDir, `documents-${values.database ?? `${count}-${seed}`}.ndjson`);
  const db = createPool(databaseUrl.toString(), 2);
  const client = await db.connect();
  try {
    const seq = await lastSeq(client);
    const meta = `${path}.meta`;
    if (existsSync(path) && existsSync(meta)) {
      const saved = JSON.parse(await readFile(meta, 'utf8')) as { seq: number; documents: number };
      if (saved.seq === seq) return { path, documents: saved.documents };
    }
    say('building the documents once for the baseline');
    await client.query('begin isolation level repeatable read read only');
    const out = createWriteStream(`${path}.part`);
    let documents = 0;
    for await (const batch of streamDocuments(client, 'books', seq, 2_000)) {
      let text = '';
      for (const doc of batch) {
        text += `{"index":{"_index":"__INDEX__","_id":${JSON.stringify(doc.id)},"version":${seq},"version_type":"external"}}\n${doc.json}\n`;
      }
      documents += batch.length;
      if (!out.write(text)) await new Promise<void>((resolve) => out.once('drain', () => resolve()));
    }
    await client.query('commit');
    out.end();
    await finished(out);
    await rename(`${path}.part`, path);
    const { writeFile } = await import('node:fs/promises');
    await writeFile(meta, JSON.stringify({ seq, documents }));
    return { path, documents };
  } finally {
    client.release();
    await db.end();
  }
}

/** Baseline: bulk-indexes the pre-built NDJSON into a fresh index, same writer settings as reindex. */
async function baseline(ndjson: { path: string; documents: number }): Promise<{ docsPerSecond: number; seconds: number }> {
  const es = createElastic(esUrl);
  const index = await createPhysicalIndex(es, `${prefix}baseline`, 'books', { bulkLoad: true });
  try {
    const writer = new BulkWriter(es, { concurrency });
    const lines = createInterface({ input: createReadStream(ndjson.path, { highWaterMark: 1 << 20 }), crlfDelay: Infinity });
    const started = performance.now();
    let action: string | null = null;
    let documents = 0;
    for await (const line of lines) {
      if (action === null) {
        action = line.replace('__INDEX__', index);
        continue;
      }
      await writer.raw('index', `${action}\n${line}\n`);
      action = null;
      documents += 1;
    }
    await writer.flush();
    const seconds = (performance.now() - started) / 1000;
    await finishBulkLoad(es, index, 'books');
    const { count: indexed } = await es.count({ index });
    if (indexed !== documents) throw new Error(`baseline indexed ${indexed} of ${documents}`);
    return { docsPerSecond: documents / seconds, seconds };
  } finally {
    await dropIndex(es, index);
    await es.close();
  }
}

/** `bookmeta reindex books` as its own process; samples VmHWM (peak RSS) while it runs. */
async function reindexProcess(): Promise<{
  docsPerSecond: number;
  wallDocsPerSecond: number;
  seconds: number;
  peakRssMb: number;
  documents: number;
}> {
  const compiled = projectPath('dist', 'loader', 'cli.js');
  const useDist =
    existsSync(compiled) && (await stat(compiled)).mtimeMs > (await stat(projectPath('loader', 'index', 'reindex.ts'))).mtimeMs;
  const args = useDist ? [compiled] : ['--import', 'tsx', projectPath('loader', 'cli.ts')];
  const { code, stdout, seconds, peakRssMb } = await runMeasured(
    process.execPath,
    [...args, 'reindex', 'books', '--no-progress', '--concurrency', String(concurrency)],
    {
      ...process.env,
      DATABASE_URL: databaseUrl.toString(),
      ELASTICSEARCH_URL: esUrl,
      INDEX_PREFIX: prefix,
      LOG_LEVEL: 'warn',
    },
  );
  if (code !== 0) throw new Error(`reindex exited with ${code}: ${stdout}`);
  // alias  index  documents  docs/s  complete up to seq  seconds  dropped
  const row = stdout.split('\n').find((line) => line.startsWith(alias + ' '))!;
  const cells = row.trim().split(/\s+/);
  const documents = Number(cells[2]);
  return { docsPerSecond: Number(cells[3]), wallDocsPerSecond: documents / seconds, seconds, peakRssMb, documents };
}

await prepareDatabase();
const ndjson = await buildNdjson();
say(`${ndjson.documents} documents; baseline bulk indexing of the pre-built NDJSON`);
const base = await baseline(ndjson);
say(`baseline: ${Math.round(base.docsPerSecond)} docs/s (${base.seconds.toFixed(1)} s); now bookmeta reindex books`);
const re = await reindexProcess();
const ratio = re.docsPerSecond / base.docsPerSecond;
console.log(`books:                      ${re.documents}`);
console.log(`baseline bulk (pre-built):  ${Math.round(base.docsPerSecond)} docs/s`);
console.log(
  `reindex (stream + bulk):    ${Math.round(re.docsPerSecond)} docs/s  ratio ${ratio.toFixed(2)} (target >= 0.70) ${ratio >= 0.7 ? 'OK' : 'MISSED'}`,
);
console.log(
  `reindex whole command:      ${Math.round(re.wallDocsPerSecond)} docs/s over ${re.seconds.toFixed(1)} s (start-up, count check, swap included)`,
);
console.log(`loader peak RSS:            ${re.peakRssMb.toFixed(0)} MB (target < 300) ${re.peakRssMb < 300 ? 'OK' : 'MISSED'}`);
const es = createElastic(esUrl);
const stats = await es.indices.stats({ index: alias, metric: 'store' });
const bytes = stats._all.primaries?.store?.size_in_bytes ?? 0;
console.log(
  `books index on disk:        ${(bytes / 2 ** 20).toFixed(0)} MB, ${Math.round(bytes / re.documents)} bytes per book (primaries, after the load's merges)`,
);
await es.indices.delete({ index: `${prefix}*`, ignore_unavailable: true, allow_no_indices: true }).catch(() => undefined);
await es.close();

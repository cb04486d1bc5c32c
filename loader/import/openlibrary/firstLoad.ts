import { stat } from 'node:fs/promises';
import { newId } from '../../../src/domain/ids.js';
import type { OlRecord } from '../../../src/domain/openlibrary.js';
import type { PoolClient } from '../../../src/stores/postgres/pool.js';
import { createProgress } from '../../index/progress.js';
import {
  analyzeCatalogue,
  beginFirstLoad,
  claimFirstLoad,
  keepNewest,
  recordInserts,
  resolveReferences,
  routeIsbnsTaken,
  stageRecords,
  writeCatalogue,
  type StagedRecord,
} from '../../stores/postgres/openlibraryFirstLoad.js';
import { analyzeOlTables } from '../../stores/postgres/openlibrary.js';
import type { ImportReport } from '../importer.js';
import { applyOlRecordsIn, bookSourceKey, digestOf, olNameKey, olWorkKey, ownWorkKey } from './apply.js';
import { dumpRecords, emptyReport, recordsAtLines } from './dump.js';
import type { OlImportOptions } from './import.js';
import { forgetCached, type OlStores } from './stores.js';

/**
 * A first load: Open Library dumps into a catalogue that holds no Open Library record yet, set-based
 * and in one transaction. Records are read and mapped by domain/openlibrary.ts as the record path
 * reads them (so the mapping lives once), copied into a staging table, and written with one
 * statement per table (see stores/postgres/openlibraryFirstLoad.ts). What that cannot decide alone,
 * editions whose ISBN another edition or an existing book has, goes through the record path (apply.ts)
 * afterwards, in the same transaction, in file order.
 *
 * The result is the catalogue the record path makes from the same files given authors first, then
 * works, then editions (its results depend on that order; a first load reads the files as one
 * dump). Until the commit nothing is visible: the API keeps answering from the catalogue as it was,
 * and a load killed at any moment leaves it so. Answers null when the catalogue holds Open Library
 * records (checked under a lock), without having written anything.
 */

// Records per COPY: PostgreSQL takes one chunk while the next is read and mapped.
const STAGE_CHUNK = 5_000;
const LABEL = 'openlibrary first load';

export async function firstLoad(paths: readonly string[], stores: OlStores, options: OlImportOptions): Promise<ImportReport[] | null> {
  const client = await stores.db.connect();
  const say = (text: string) => {
    if (options.progress !== false) process.stderr.write(`${LABEL}: ${text}\n`);
  };
  let ended = false;
  try {
    await beginFirstLoad(client);
    if (!(await claimFirstLoad(client))) return null;
    const started = performance.now();
    const reports: ImportReport[] = [];
    let ord = 0;
    for (const [file, path] of paths.entries()) {
      const report = await stageFile(client, path, file, () => ++ord, options);
      reports.push(report);
    }
    const timed = async <T>(phase: string, work: () => Promise<T>, describe: (result: T) => string): Promise<T> => {
      const start = performance.now();
      const result = await work();
      say(`${phase}: ${describe(result)} in ${((performance.now() - start) / 1000).toFixed(1)} s`);
      return result;
    };
    await timed('newest revision of each key', () => keepNewest(client), (dropped) => `${dropped} older records of repeated keys left out`);
    const routed = await timed('repeated ISBNs', () => routeIsbnsTaken(client), (lines) => `${lines.length} editions left to the record path`);
    await timed('redirects and placeholders', () => resolveReferences(client), (made) => `${made} placeholders`);
    await timed('catalogue tables', () => writeCatalogue(client, { work: olWorkKey(''), author: olNameKey('') }), () => 'written');
    await timed('change feed', () => recordInserts(client), (count) => `${count} inserts`);
    await timed('statistics', () => analyzeCatalogue(client), () => 'analyzed');
    await countStaged(client, reports);
    const touched = await timed('record path', () => applyRouted(client, paths, routed, reports, options.batchSize ?? 2_000), (ids) => `${ids.size} entities touched`);
    await timed('commit', () => client.query('commit'), () => 'committed');
    ended = true;
    await analyzeOlTables(stores.db);
    await forgetCached(stores, touched);
    say(`done in ${((performance.now() - started) / 1000).toFixed(1)} s`);
    return reports;
  } finally {
    if (!ended) await client.query('rollback').catch(() => undefined);
    // The session's temp_buffers cannot be set back once temporary tables were used: not for reuse.
    client.release(true);
  }
}

async function stageFile(client: PoolClient, path: string, file: number, nextOrd: () => number, options: OlImportOptions): Promise<ImportReport> {
  const report = emptyReport(path);
  const size = (await stat(path)).size;
  const { records, bytesRead } = dumpRecords(path, report);
  const progress = options.progress === false ? null : createProgress({ label: `${LABEL}: staging ${report.source}`, total: 0, unit: 'records' });
  let chunk: StagedRecord[] = [];
  let copying: Promise<void> = Promise.resolve();
  const flush = async () => {
    const rows = chunk;
    chunk = [];
    await copying;
    copying = stageRecords(client, rows).then(() => {
      const read = bytesRead();
      if (read > 0) progress?.setTotal(Math.round((report.read * size) / read));
      progress?.add(rows.length);
    });
    // Awaited by the next flush; a failure surfaces there.
    copying.catch(() => undefined);
  };
  for await (const { line, record } of records) {
    report.imported += 1;
    chunk.push(staged(record, { ord: nextOrd(), file, line }));
    if (chunk.length >= STAGE_CHUNK) await flush();
  }
  await flush();
  await copying;
  progress?.finish();
  return report;
}

/** A record as one row of the staging table, with the ids of the entities it would make. */
function staged(record: OlRecord, at: { ord: number; file: number; line: number }): StagedRecord {
  const header = { ...at, type: record.type, key: record.key, revision: record.revision };
  switch (record.type) {
    case 'author': {
      const { author } = record;
      return {
        ...header,
        id: newId('author'),
        entity_key: olNameKey(record.key),
        digest: digestOf(author),
        name: author.name,
        bio: author.bio,
        birth_date: author.birthDate,
        death_date: author.deathDate,
        alternate_names: author.alternateNames,
        ...identifiers(author.identifiers),
      };
    }
    case 'work': {
      const { work } = record;
      return {
        ...header,
        id: newId('work'),
        entity_key: olWorkKey(record.key),
        digest: digestOf(work),
        title: work.title,
        subtitle: work.subtitle,
        subjects: work.subjects,
        description: work.description,
        year: work.firstPublishYear,
        cover_url: work.coverUrl,
      };
    }
    case 'edition': {
      const { edition } = record;
      return {
        ...header,
        id: newId('book'),
        entity_key: bookSourceKey(record.key),
        own_work_id: edition.workKey ? null : newId('work'),
        own_work_key: edition.workKey ? null : ownWorkKey(record.key),
        digest: digestOf(edition),
        title: edition.title,
        subtitle: edition.subtitle,
        series: edition.series,
        publisher: edition.publisher,
        year: edition.year,
        language: edition.language,
        pages: edition.pages,
        cover_url: edition.coverUrl,
        subjects: edition.subjects.length > 0 ? edition.subjects : null,
        description: edition.description,
        physical_format: edition.physicalFormat,
        work_key: edition.workKey,
        author_keys: edition.authorKeys,
        isbn_13: edition.isbn?.isbn13 ?? null,
        isbn_10: edition.isbn?.isbn10 ?? null,
        ...identifiers(edition.identifiers),
      };
    }
    case 'redirect':
      return { ...header, redirect_to: record.location };
    case 'delete':
      return header;
  }
}

/** Identifiers in other catalogues (the Open Library key itself lives in openlibrary_records). */
function identifiers(ids: readonly { scheme: string; value: string }[]): Pick<StagedRecord, 'id_schemes' | 'id_values'> {
  const others = ids.filter((id) => id.scheme !== 'openlibrary');
  return { id_schemes: others.map((id) => id.scheme), id_values: others.map((id) => id.value) };
}

async function countStaged(client: PoolClient, reports: ImportReport[]): Promise<void> {
  const { rows } = await client.query<{ file: number; inserted: number; updated: number }>(
    `select file, count(*) filter (where type in ('author', 'work', 'edition') and not routed)::int as inserted,
            count(*) filter (where type in ('redirect', 'delete'))::int as updated
       from ol_stage group by file`,
  );
  for (const row of rows) {
    const report = reports[row.file]!;
    report.inserted += row.inserted;
    report.updated += row.updated;
  }
}

/** The routed editions through the record path, file by file in line order; answers what they touched. */
async function applyRouted(client: PoolClient, paths: readonly string[], routed: readonly { file: number; line: number }[], reports: ImportReport[], batchSize: number): Promise<Set<string>> {
  const touched = new Set<string>();
  for (const [file, path] of paths.entries()) {
    const lines = routed.filter((row) => row.file === file).map((row) => row.line);
    if (lines.length === 0) continue;
    const report = reports[file]!;
    let batch: OlRecord[] = [];
    const apply = async () => {
      const outcome = await applyOlRecordsIn(client, batch);
      batch = [];
      report.inserted += outcome.inserted;
      report.updated += outcome.updated;
      for (const id of outcome.touched) touched.add(id);
    };
    for await (const { record } of recordsAtLines(path, lines)) {
      batch.push(record);
      if (batch.length >= batchSize) await apply();
    }
    if (batch.length > 0) await apply();
  }
  for (const report of reports) report.unchanged = report.imported - report.inserted - report.updated;
  return touched;
}

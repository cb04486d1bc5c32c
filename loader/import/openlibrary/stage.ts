import { Worker } from 'node:worker_threads';
import { newId } from '../../../src/domain/ids.js';
import { parseOlLine, type OlRecord } from '../../../src/domain/openlibrary.js';
import { copyLines } from '../../stores/postgres/copy.js';
import { withStoredCover } from '../../stores/postgres/covers.js';
import { STAGE_COLUMNS, type StagedRecord } from '../../stores/postgres/openlibraryFirstLoad.js';
import type { ImportReport } from '../importer.js';
import { editionFields } from './fieldOwnership.js';
import { bookSourceKey, digestOf, olNameKey, olWorkKey, olWorkKind, ownWorkKey } from './keys.js';
import { emptyReport, tally } from './dump.js';

/**
 * Dump lines as rows of a first load's staging table, in COPY's text format: read and mapped by
 * domain/openlibrary.ts exactly as the record path reads them, with the ids of the entities each
 * record would make. Reading and mapping is most of a first load's work, so it runs on worker
 * threads, a chunk of lines at a time (see StagePool).
 */

export interface StageJob {
  file: number;
  lines: string[];
  /** The number of each line in its file. */
  numbers: number[];
}

export interface StagedChunk {
  copy: string;
  /** What the chunk's lines count for the file's report. */
  tally: ImportReport;
}

// A line's place among all lines of a load: file, then line.
const LINES_PER_FILE = 2 ** 32;

export function stageLines(job: StageJob): StagedChunk {
  const report = emptyReport('');
  const rows: StagedRecord[] = [];
  for (const [index, text] of job.lines.entries()) {
    const line = job.numbers[index]!;
    const record = tally(report, line, parseOlLine(text));
    if (!record) continue;
    report.imported += 1;
    rows.push(withStoredCover(staged(record, { ord: job.file * LINES_PER_FILE + line, file: job.file, line })));
  }
  return { copy: copyLines(STAGE_COLUMNS, rows), tally: report };
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
        identity_key: olNameKey(record.key),
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
        identity_key: olWorkKey(record.key),
        digest: digestOf(work),
        title: work.title,
        subtitle: work.subtitle,
        work_kind: olWorkKind(work),
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
        identity_key: bookSourceKey(record.key),
        own_work_id: edition.workKey ? null : newId('work'),
        own_work_key: edition.workKey ? null : ownWorkKey(record.key),
        digest: digestOf(edition),
        ...editionFields(edition),
        work_kind: olWorkKind(edition),
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

/**
 * A worker running stageWorker, this module's sibling: built (.js) as it is; from source (.ts) through
 * tsx, whose loader a worker thread does not inherit.
 */
const WORKER_LIMITS = { maxOldGenerationSizeMb: 64, maxYoungGenerationSizeMb: 16 };
function newStageWorker(): Worker {
  if (!import.meta.url.endsWith('.ts')) return new Worker(new URL('./stageWorker.js', import.meta.url), { resourceLimits: WORKER_LIMITS });
  const source = new URL('./stageWorker.ts', import.meta.url).href;
  return new Worker(`import('tsx/esm/api').then(({ register }) => { register(); return import(${JSON.stringify(source)}); });`, {
    eval: true,
    resourceLimits: WORKER_LIMITS,
  });
}

/**
 * Worker threads that stage chunks of lines; `run` answers in the order jobs were given to each
 * worker, and the caller keeps the order of the whole by awaiting answers in the order it asked.
 * With no workers, chunks are staged on the calling thread.
 */
export class StagePool {
  private readonly workers: { worker: Worker; waiting: ((chunk: StagedChunk) => void)[]; failed: (error: Error) => void }[];
  private next = 0;

  constructor(size: number) {
    this.workers = Array.from({ length: size }, () => {
      const worker = newStageWorker();
      const entry = { worker, waiting: [] as ((chunk: StagedChunk) => void)[], failed: (error: Error) => void error };
      worker.on('message', (chunk: StagedChunk) => entry.waiting.shift()!(chunk));
      worker.on('error', (error: Error) => entry.failed(error));
      return entry;
    });
  }

  run(job: StageJob): Promise<StagedChunk> {
    if (this.workers.length === 0) return Promise.resolve(stageLines(job));
    const entry = this.workers[this.next++ % this.workers.length]!;
    return new Promise((resolve, reject) => {
      entry.waiting.push(resolve);
      entry.failed = reject;
      entry.worker.postMessage(job);
    });
  }

  async close(): Promise<void> {
    await Promise.all(this.workers.map(({ worker }) => worker.terminate()));
  }
}

import { setTimeout as sleep } from 'node:timers/promises';
import type { Elastic } from '../../../src/stores/elasticsearch/client.js';

/**
 * Bulk writes with back-pressure: operations are gathered into chunks of at most `maxBytes` or
 * `maxOperations`, and at most `concurrency` chunks are in flight; `index()` and `delete()` wait
 * while that many are, so a fast producer (a PostgreSQL cursor) never outruns Elasticsearch and
 * memory stays bounded.
 *
 * Every write carries an external version (`version_type: external`, the change-sequence number the
 * document was built at). Elasticsearch keeps the highest version, so:
 *   - 409 version_conflict on an index or delete means a newer write is already there: success;
 *   - 404 on a delete means there was nothing to delete: success;
 *   - 429 (queue full) items are sent again after a pause;
 *   - anything else fails the writer: `flush()` rejects, and the caller must not move its checkpoint.
 */

export interface BulkOptions {
  /** Chunk size in bytes of NDJSON (default 5 MiB). */
  maxBytes?: number;
  /** Chunk size in operations (default 5,000). */
  maxOperations?: number;
  /** Chunks in flight at once (default 2). */
  concurrency?: number;
  /** Fail instead of auto-creating an index when a target is not an alias (for writes through aliases). */
  requireAlias?: boolean;
  /** Make the written documents searchable as soon as each request is acknowledged (refresh=true). */
  refresh?: boolean;
  /** Called after each acknowledged chunk with the number of operations it held. */
  onAcknowledged?: (operations: number) => void;
}

export interface BulkStats {
  indexed: number;
  deleted: number;
  /** Writes refused because a newer version was already there. */
  stale: number;
  /** Deletes of documents that were not there. */
  absent: number;
  retried: number;
  requests: number;
}

/** One operation inside a chunk buffer: its kind and byte range. */
interface Operation {
  kind: 'index' | 'delete';
  start: number;
  end: number;
}

interface Chunk {
  buffer: Buffer;
  used: number;
  operations: Operation[];
}

interface BulkItemResult {
  status: number;
  _id?: string;
  error?: { type?: string; reason?: string };
}

interface BulkResponse {
  errors: boolean;
  items?: Record<string, BulkItemResult>[];
}

const RETRY_LIMIT = 8;

export class BulkError extends Error {
  constructor(
    message: string,
    readonly failures: { id?: string; status: number; type?: string; reason?: string }[],
  ) {
    super(message);
  }
}

export class BulkWriter {
  readonly stats: BulkStats = { indexed: 0, deleted: 0, stale: 0, absent: 0, retried: 0, requests: 0 };
  private readonly maxBytes: number;
  private readonly maxOperations: number;
  private readonly concurrency: number;
  private chunk: Chunk | null = null;
  /** Chunk buffers not in use, reused so that a long load makes no garbage per chunk. */
  private readonly spare: Buffer[] = [];
  private readonly inFlight = new Set<Promise<void>>();
  private failure: Error | null = null;

  constructor(
    private readonly es: Elastic,
    private readonly options: BulkOptions = {},
  ) {
    this.maxBytes = options.maxBytes ?? 5 * 1024 * 1024;
    this.maxOperations = options.maxOperations ?? 5_000;
    this.concurrency = Math.max(1, options.concurrency ?? 2);
  }

  /** Indexes a document given as JSON text, at `version` unless a newer version is already there. */
  index(index: string, id: string, version: number, json: string): Promise<void> {
    const action = `{"index":{"_index":${JSON.stringify(index)},"_id":${JSON.stringify(id)},"version":${version},"version_type":"external"}}`;
    return this.add('index', `${action}\n${json}\n`);
  }

  /** Deletes a document, leaving a tombstone at `version` so that an older write cannot bring it back. */
  delete(index: string, id: string, version: number): Promise<void> {
    return this.add(
      'delete',
      `{"delete":{"_index":${JSON.stringify(index)},"_id":${JSON.stringify(id)},"version":${version},"version_type":"external"}}\n`,
    );
  }

  /** Adds a pre-built operation (action line and, for index, source line, each ending in \n). */
  raw(kind: 'index' | 'delete', text: string): Promise<void> {
    return this.add(kind, text);
  }

  /**
   * Operations are encoded straight into a reused chunk buffer, so each document's text dies young:
   * holding thousands of strings per chunk would promote them all to the old generation and let the
   * heap grow to hundreds of MB before a full collection.
   */
  private async add(kind: 'index' | 'delete', text: string): Promise<void> {
    if (this.failure) throw this.failure;
    const bytes = Buffer.byteLength(text);
    if (this.chunk && this.chunk.used + bytes > this.chunk.buffer.length) await this.dispatch();
    if (!this.chunk) this.chunk = { buffer: this.takeBuffer(Math.max(this.maxBytes, bytes)), used: 0, operations: [] };
    const chunk = this.chunk;
    chunk.buffer.write(text, chunk.used);
    chunk.operations.push({ kind, start: chunk.used, end: chunk.used + bytes });
    chunk.used += bytes;
    if (chunk.used >= this.maxBytes || chunk.operations.length >= this.maxOperations) await this.dispatch();
  }

  private takeBuffer(size: number): Buffer {
    const index = this.spare.findIndex((buffer) => buffer.length >= size);
    if (index >= 0) return this.spare.splice(index, 1)[0]!;
    // Room for one more operation past maxBytes, so a chunk is rarely cut short.
    return Buffer.allocUnsafe(Math.max(size, this.maxBytes + 64 * 1024));
  }

  /** Sends the current chunk, waiting first while `concurrency` chunks are in flight. */
  private async dispatch(): Promise<void> {
    while (this.inFlight.size >= this.concurrency) await Promise.race(this.inFlight);
    if (this.failure) throw this.failure;
    const chunk = this.chunk;
    if (!chunk || chunk.operations.length === 0) return;
    this.chunk = null;
    const request: Promise<void> = this.send(chunk).then(
      () => {
        this.inFlight.delete(request);
        if (this.spare.length <= this.concurrency) this.spare.push(chunk.buffer);
      },
      (error: unknown) => {
        this.inFlight.delete(request);
        this.failure ??= error instanceof Error ? error : new Error(String(error));
      },
    );
    this.inFlight.add(request);
  }

  /** Sends what is gathered and waits until every request is acknowledged; throws the first failure. */
  async flush(): Promise<void> {
    await this.dispatch();
    while (this.inFlight.size > 0) await Promise.race(this.inFlight);
    if (this.failure) throw this.failure;
  }

  private async send(chunk: Chunk): Promise<void> {
    let pending = chunk.operations;
    let body = chunk.buffer.subarray(0, chunk.used);
    for (let attempt = 0; pending.length > 0; attempt += 1) {
      if (attempt > 0) {
        if (attempt > RETRY_LIMIT) throw new BulkError(`${pending.length} bulk operations still rejected after ${RETRY_LIMIT} retries`, []);
        this.stats.retried += pending.length;
        await sleep(Math.min(100 * 2 ** attempt, 5_000));
      }
      this.stats.requests += 1;
      const response = await this.es.transport.request<BulkResponse>(
        {
          method: 'POST',
          path: '/_bulk',
          querystring: {
            filter_path: 'errors,items.*.status,items.*._id,items.*.error.type,items.*.error.reason',
            ...(this.options.requireAlias ? { require_alias: 'true' } : {}),
            ...(this.options.refresh ? { refresh: 'true' } : {}),
          },
          bulkBody: body,
        },
        { requestTimeout: 120_000 },
      );
      const again = this.settle(pending, response);
      if (again.length > 0) {
        // Copied out of the chunk buffer: those bytes stay valid until this send is over.
        const source = body;
        body = Buffer.concat(again.map((operation) => source.subarray(operation.start, operation.end)));
        let offset = 0;
        pending = again.map((operation) => {
          const length = operation.end - operation.start;
          const moved = { kind: operation.kind, start: offset, end: offset + length };
          offset += length;
          return moved;
        });
      } else {
        pending = [];
      }
    }
    this.options.onAcknowledged?.(chunk.operations.length);
  }

  /** Counts the outcome of each operation; returns those to send again (429). */
  private settle(operations: Operation[], response: BulkResponse): Operation[] {
    const items = response.items ?? [];
    if (items.length !== operations.length)
      throw new BulkError(`bulk response has ${items.length} items for ${operations.length} operations`, []);
    const again: Operation[] = [];
    const failures: BulkError['failures'] = [];
    items.forEach((item, position) => {
      const operation = operations[position]!;
      const result = item[operation.kind] ?? Object.values(item)[0]!;
      const status = result.status;
      if (status >= 200 && status < 300) {
        if (operation.kind === 'index') this.stats.indexed += 1;
        else this.stats.deleted += 1;
      } else if (status === 409) {
        this.stats.stale += 1;
      } else if (status === 404 && operation.kind === 'delete' && result.error === undefined) {
        this.stats.absent += 1;
      } else if (status === 429) {
        again.push(operation);
      } else {
        failures.push({ id: result._id, status, type: result.error?.type, reason: result.error?.reason });
      }
    });
    if (failures.length > 0) {
      const first = failures[0]!;
      throw new BulkError(
        `${failures.length} bulk operations failed; first: ${first.id} ${first.status} ${first.type}: ${first.reason}`,
        failures,
      );
    }
    return again;
  }
}

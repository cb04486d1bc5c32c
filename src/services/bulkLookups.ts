import { ApiError } from '../errors.js';
import { batchKeys, LOOKUP_BATCH_MAX } from './batch.js';
import type { Services } from './context.js';
import { pointFollowing, type PointFamily } from './pointLookups.js';

/**
 * Bulk lookups: up to LOOKUP_BATCH_MAX ISBNs or ids of one kind in one request, each answered
 * exactly as its GET answers it, in input order, through the same cache entries (pointLookups.ts).
 * The keys of one batch travel together: their cache reads as one MGET, and the misses of a kind
 * as one PostgreSQL query (PointReads batches the reads of a turn).
 */

export interface BulkKind {
  family: PointFamily;
  /** The list's field in the request body. */
  field: 'isbns' | 'ids';
  /** The key's field in each result. */
  key: 'isbn' | 'id';
  /** The record's field in each result. */
  record: 'book' | 'work' | 'author';
}

export const BULK_KINDS: readonly BulkKind[] = [
  { family: 'isbn', field: 'isbns', key: 'isbn', record: 'book' },
  { family: 'books', field: 'ids', key: 'id', record: 'book' },
  { family: 'works', field: 'ids', key: 'id', record: 'work' },
  { family: 'authors', field: 'ids', key: 'id', record: 'author' },
];

/** The keys of a bulk lookup body (`{"isbns": [...]}` or `{"ids": [...]}`): a 400 naming the problem when it is no such list. */
export const bulkKeys = (kind: BulkKind, body: unknown): string[] => batchKeys(body, kind.field, LOOKUP_BATCH_MAX);

/**
 * The answer to a bulk lookup as JSON text, `{"results": [...]}`: for each key, in input order, the
 * key as given, the status its GET gives, and the GET's body, the record (a merged key followed to
 * its survivor, named in `merged_into`) or the error object. Records are spliced in as the cache
 * holds them, so each is byte for byte what its GET answers.
 */
export async function bulkLookup(services: Pick<Services, 'reads' | 'pointCache'>, requestId: string, kind: BulkKind, keys: readonly string[]): Promise<string> {
  const results = await Promise.all(
    keys.map(async (key) => {
      const head = `${JSON.stringify(kind.key)}:${JSON.stringify(key)}`;
      try {
        const { text, mergedInto } = await pointFollowing(services, requestId, kind.family, key);
        const merged = mergedInto === null ? '' : `"merged_into":${JSON.stringify(mergedInto)},`;
        return `{${head},"status":200,${merged}${JSON.stringify(kind.record)}:${text}}`;
      } catch (error) {
        // A key's own error (400, 404) is its result; a fault of the stores fails the request, as it fails a GET.
        if (!(error instanceof ApiError) || error.status >= 500) throw error;
        return `{${head},"status":${error.status},"error":${JSON.stringify(error.toJSON().error)}}`;
      }
    }),
  );
  return `{"results":[${results.join(',')}]}`;
}

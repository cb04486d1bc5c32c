import { z } from 'zod/v4';
import { parseIsbn } from '../domain/isbn.js';
import { authorRecord, bookRecord, workRecord } from '../domain/records.js';
import { ApiError, errorObject, parseInput } from '../errors.js';
import { batchKeysBody, LOOKUP_BATCH_MAX } from './batch.js';
import type { Services } from './context.js';
import type { PointFamily } from './lookups.js';
import { pointFollowing } from './pointLookups.js';

/**
 * Bulk lookups: up to LOOKUP_BATCH_MAX ISBNs or ids of one kind in one request, each answered
 * exactly as its GET answers it, in input order, through the same cache entries (pointLookups.ts).
 * The keys of one batch travel together: their cache reads as one MGET, and the misses of a kind
 * as one PostgreSQL query (PointReads batches the reads of a turn).
 */

const isbnsBody = batchKeysBody(
  'isbns',
  LOOKUP_BATCH_MAX,
  'ISBN-10 or ISBN-13, hyphens and spaces allowed; checked one by one, as its GET checks it. A list as a shelf export holds it: ' +
    'an ISBN-10 beside its ISBN-13, or the same line twice, is answered in each place and charged once.',
).meta({ id: 'IsbnBatchRequest' });
const idsBody = batchKeysBody('ids', LOOKUP_BATCH_MAX, "Ids of the route's kind; checked one by one, as their GET checks them.").meta({
  id: 'IdBatchRequest',
});

export interface BulkKind {
  family: PointFamily;
  /** The request body: the list's field, and what the list holds. */
  body: typeof isbnsBody | typeof idsBody;
  field: 'isbns' | 'ids';
  /** The key's field in each result. */
  key: 'isbn' | 'id';
  /** The record's field in each result. */
  record: 'book' | 'work' | 'author';
  /** The record's schema. */
  recordSchema: typeof bookRecord | typeof workRecord | typeof authorRecord;
  /** What the answer's JSON holds, for the OpenAPI document (bulkLookup writes it). */
  answer: z.ZodType;
  /** What a key names, whatever its spelling: keys with one identity are one item of the budget. */
  identity: (key: string) => string;
}

const asGiven = (key: string): string => key;

/** The answer of a bulk lookup: one result per key, in input order. */
function answerOf(key: BulkKind['key'], record: BulkKind['record'], schema: z.ZodType, id: string): z.ZodType {
  const result = z.object({
    [key]: z.string().meta({ description: 'As given.' }),
    status: z
      .int()
      .meta({ enum: [200, 400, 404, 410], description: 'What its GET answers (200 after following a merge; 410 for a deleted record).' }),
    merged_into: z
      .string()
      .optional()
      .meta({ description: 'Present when the key was merged: the survivor, whose record this is. Use it from now on.' }),
    [record]: schema.optional(),
    error: errorObject.optional().meta({ description: "The error object of its GET's answer." }),
  });
  return z.object({ results: z.array(result).meta({ description: 'In input order.' }) }).meta({ id });
}

export const BULK_KINDS: readonly BulkKind[] = [
  {
    family: 'isbn',
    body: isbnsBody,
    field: 'isbns',
    key: 'isbn',
    record: 'book',
    answer: answerOf('isbn', 'book', bookRecord, 'IsbnBatchResult'),
    recordSchema: bookRecord,
    // An ISBN-10 and its ISBN-13, hyphenated or not, are one ISBN; an invalid one is only itself.
    identity: (isbn) => parseIsbn(isbn)?.isbn13 ?? isbn,
  },
  {
    family: 'books',
    body: idsBody,
    field: 'ids',
    key: 'id',
    record: 'book',
    answer: answerOf('id', 'book', bookRecord, 'BookBatchResult'),
    recordSchema: bookRecord,
    identity: asGiven,
  },
  {
    family: 'works',
    body: idsBody,
    field: 'ids',
    key: 'id',
    record: 'work',
    answer: answerOf('id', 'work', workRecord, 'WorkBatchResult'),
    recordSchema: workRecord,
    identity: asGiven,
  },
  {
    family: 'authors',
    body: idsBody,
    field: 'ids',
    key: 'id',
    record: 'author',
    answer: answerOf('id', 'author', authorRecord, 'AuthorBatchResult'),
    recordSchema: authorRecord,
    identity: asGiven,
  },
];

/** The keys of a bulk lookup body (`{"isbns": [...]}` or `{"ids": [...]}`): a 400 naming the problem when it is no such list. */
export function bulkKeys(kind: BulkKind, body: unknown): string[] {
  const parsed: { isbns: string[] } | { ids: string[] } = parseInput(kind.body, body);
  return 'isbns' in parsed ? parsed.isbns : parsed.ids;
}

/** The units of the key's budget a bulk lookup of `keys` draws: one per distinct key, however often and in whatever spelling it comes. */
export const bulkUnits = (kind: BulkKind, keys: readonly string[]): number => new Set(keys.map(kind.identity)).size;

/**
 * The answer to a bulk lookup as JSON text, `{"results": [...]}`: for each key, in input order, the
 * key as given, the status its GET gives, and the GET's body, the record (a merged key followed to
 * its survivor, named in `merged_into`) or the error object. Records are spliced in as the cache
 * holds them, so each is byte for byte what its GET answers.
 */
export async function bulkLookup(
  services: Pick<Services, 'reads' | 'pointCache'>,
  requestId: string,
  kind: BulkKind,
  keys: readonly string[],
): Promise<string> {
  // A key given twice is read once and answered in both places.
  const answers = new Map<string, Promise<string>>();
  const answer = (key: string): Promise<string> => {
    let found = answers.get(key);
    if (!found) answers.set(key, (found = answerKey(key)));
    return found;
  };
  const answerKey = async (key: string): Promise<string> => {
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
  };
  const results = await Promise.all(keys.map(answer));
  return `{"results":[${results.join(',')}]}`;
}

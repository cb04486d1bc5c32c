import { createSchema } from 'zod-openapi';
import { z } from 'zod/v4';
import { ApiError, errorBody, refused } from '../errors.js';
import type { RateDecision } from '../stores/redis/rateLimiter.js';
import { matchBooks, matchRequest, matchResult } from './match.js';
import type { SearchServices } from './search.js';

/**
 * The shape every batch request shares: one JSON object naming one list, `{"<field>": [...]}`, of
 * one item at least and `max` at most. Each item then goes its own way (answered or refused on its
 * own), but a list that is not one is refused whole, with a message naming what is wrong.
 */

/** Records of POST /v1/match/batch, each the body of a POST /v1/match. */
export const MATCH_BATCH_MAX = 50;
/** ISBNs or ids of one bulk lookup. */
export const LOOKUP_BATCH_MAX = 100;

/** What a JSON value is, in a message: `null`, `an array`, `number`. */
const kindOf = (value: unknown): string => (value === null ? 'null' : Array.isArray(value) ? 'an array' : typeof value);

/**
 * The body of a batch request, `{"<field>": [1 to max items]}`, in the words of the 400 (read it
 * with parseInput). `item` checks each item when the list is read, or only describes them (the MCP
 * batch tools' listing) where each item is its service's to check.
 */
export function batchBody<Field extends string, Item extends z.ZodType>(field: Field, max: number, item: Item) {
  const shape = `{"${field}": [...]}`;
  const list = z
    .array(item, { error: (issue) => (issue.input === undefined ? `${field} is required: ${shape}` : `${field} must be an array`) })
    .min(1, `${field} must not be empty`)
    .max(max, {
      error: (issue) => `${field} has ${Array.isArray(issue.input) ? issue.input.length : 'too many'} items; at most ${max} per request`,
    });
  return z.strictObject({ [field]: list } as { [K in Field]: typeof list }, {
    error: (issue) =>
      issue.code === 'unrecognized_keys'
        ? `unknown field "${issue.keys[0]}": the body is ${shape}`
        : `request body must be a JSON object ${shape}`,
  });
}

/** Keys to look up: strings, each answered in its place, a repeat as often as it comes (bulkLookups.ts charges each distinct key once). */
export function batchKeysBody<Field extends string>(field: Field, max: number, describe: string) {
  const key = z.string({ error: (issue) => `must be a string, got ${kindOf(issue.input)}` }).meta({ description: describe });
  return batchBody(field, max, key);
}

/** POST /v1/match/batch: each record is a POST /v1/match body, checked on its own (a bad one fails only itself). */
export const matchBatchBody = batchBody(
  'records',
  MATCH_BATCH_MAX,
  // Read as anything, as each record is checked on its own; shown as what it should be.
  z.unknown().meta({
    override: ({ jsonSchema }) =>
      Object.assign(jsonSchema, createSchema(matchRequest, { io: 'input' }).schema, {
        description: 'A `POST /v1/match` body; checked record by record.',
      }),
  }),
).meta({ id: 'MatchBatchRequest' });

export const matchBatchResult = z
  .object({ results: z.array(z.union([matchResult, errorBody])).meta({ description: 'In input order.' }) })
  .meta({ id: 'MatchBatchResult' });

/** The answer of POST /v1/match/batch and of the MCP tool match_books: each record as POST /v1/match answers it, or its 400's error object, in input order. */
export async function matchBatch(services: SearchServices, records: readonly unknown[]): Promise<z.output<typeof matchBatchResult>> {
  const answers = await matchBooks(services, records);
  return { results: answers.map((answer) => (answer instanceof ApiError ? answer.toJSON() : answer)) };
}

/** The 429 of a batch of `count` items the key's remaining budget cannot cover (see RateLimiter.takeWhole). */
export function batchRefused(count: number, decision: RateDecision, windowS: number): ApiError {
  const fits =
    count <= decision.limit
      ? `${decision.remaining} left of ${decision.limit}`
      : `more than the whole budget of ${decision.limit}; send smaller batches`;
  return refused(
    `a batch of ${count} ${count === 1 ? 'item' : 'items'} needs ${count} requests of the budget (${decision.limit} requests per ${windowS} seconds): ${fits}`,
    decision,
  );
}

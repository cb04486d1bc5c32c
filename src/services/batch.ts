import { z } from 'zod/v4';
import { ApiError, badRequest, refused } from '../errors.js';
import type { RateDecision } from '../stores/redis/rateLimiter.js';
import { matchBooks, type MatchResult } from './match.js';
import type { SearchServices } from './search.js';

type ApiErrorJson = ReturnType<ApiError['toJSON']>;

/**
 * The shape every batch request shares: one JSON object naming one list, `{"<field>": [...]}`, of
 * one item at least and `max` at most. Each item then goes its own way (answered or refused on its
 * own), but a list that is not one is refused whole, with a message naming what is wrong.
 */

/** Records of POST /v1/match/batch, each the body of a POST /v1/match. */
export const MATCH_BATCH_MAX = 50;
/** ISBNs or ids of one bulk lookup. */
export const LOOKUP_BATCH_MAX = 100;

/**
 * The body of a batch request, `{"<field>": [item, ...]}` with 1 to `max` items, as zod checks it,
 * in the words of the 400 (batchProblem picks the one it names). The items are each one's own to
 * check; `item` describes them (for the MCP batch tools' listing).
 */
export function batchBody(field: string, max: number, item: z.ZodType = z.unknown()): z.ZodType<Record<string, unknown[]>> {
  const list = z
    .array(item, { error: (issue) => (issue.input === undefined ? `${field} is required: {"${field}": [...]}` : `${field} must be an array`) })
    .min(1, `${field} must not be empty`)
    .max(max, { error: (issue) => `${field} has ${Array.isArray(issue.input) ? issue.input.length : 'too many'} items; at most ${max} per request` });
  return z.strictObject(
    { [field]: list },
    { error: (issue) => (issue.code === 'unrecognized_keys' ? `unknown field "${issue.keys[0]}": the body is {"${field}": [...]}` : `request body must be a JSON object {"${field}": [...]}`) },
  );
}

/** What a batch body's 400 names, of all that is wrong with it: an unknown field first, as the body's shape comes before its list. */
const batchProblem = (issues: readonly z.core.$ZodIssue[]): string => (issues.find((issue) => issue.code === 'unrecognized_keys') ?? issues[0])!.message;

/** The items of a batch body, or its 400. */
export function batchList(body: unknown, field: string, max: number): unknown[] {
  const parsed = batchBody(field, max).safeParse(body);
  if (!parsed.success) throw badRequest(batchProblem(parsed.error.issues));
  return parsed.data[field]!;
}

/** The answer of POST /v1/match/batch and of the MCP tool match_books: each record as POST /v1/match answers it, or its 400's error object, in input order. */
export async function matchBatch(services: SearchServices, records: readonly unknown[]): Promise<{ results: (MatchResult | ApiErrorJson)[] }> {
  const answers = await matchBooks(services, records);
  return { results: answers.map((answer) => (answer instanceof ApiError ? answer.toJSON() : answer)) };
}

/** A list of keys to look up: strings, each once (a repeat would be answered twice and billed twice). */
export function batchKeys(body: unknown, field: string, max: number): string[] {
  const list = batchList(body, field, max);
  const seen = new Map<string, number>();
  list.forEach((item, index) => {
    if (typeof item !== 'string') throw badRequest(`${field}[${index}] must be a string, got ${item === null ? 'null' : Array.isArray(item) ? 'an array' : typeof item}`);
    const first = seen.get(item);
    if (first !== undefined) throw badRequest(`${field}[${index}] repeats ${field}[${first}] (${JSON.stringify(item.length > 64 ? `${item.slice(0, 64)}…` : item)}): give each once`);
    seen.set(item, index);
  });
  return list as string[];
}

/** The 429 of a batch of `count` items the key's remaining budget cannot cover (see RateLimiter.takeWhole). */
export function batchRefused(count: number, decision: RateDecision, windowS: number): ApiError {
  const fits = count <= decision.limit ? `${decision.remaining} left of ${decision.limit}` : `more than the whole budget of ${decision.limit}; send smaller batches`;
  return refused(`a batch of ${count} ${count === 1 ? 'item' : 'items'} needs ${count} requests of the budget (${decision.limit} requests per ${windowS} seconds): ${fits}`, decision);
}

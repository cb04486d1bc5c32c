import { badRequest, refused, type ApiError } from '../errors.js';
import type { RateDecision } from '../stores/redis/rateLimiter.js';

/**
 * The shape every batch request shares: one JSON object naming one list, `{"<field>": [...]}`, of
 * one item at least and `max` at most. Each item then goes its own way (answered or refused on its
 * own), but a list that is not one is refused whole, with a message naming what is wrong.
 */

/** Records of POST /v1/match/batch, each the body of a POST /v1/match. */
export const MATCH_BATCH_MAX = 50;
/** ISBNs or ids of one bulk lookup. */
export const LOOKUP_BATCH_MAX = 100;

export function batchList(body: unknown, field: string, max: number): unknown[] {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) throw badRequest(`request body must be a JSON object {"${field}": [...]}`);
  const unknown = Object.keys(body).find((key) => key !== field);
  if (unknown !== undefined) throw badRequest(`unknown field "${unknown}": the body is {"${field}": [...]}`);
  const list = (body as Record<string, unknown>)[field];
  if (list === undefined) throw badRequest(`${field} is required: {"${field}": [...]}`);
  if (!Array.isArray(list)) throw badRequest(`${field} must be an array`);
  if (list.length === 0) throw badRequest(`${field} must not be empty`);
  if (list.length > max) throw badRequest(`${field} has ${list.length} items; at most ${max} per request`);
  return list;
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

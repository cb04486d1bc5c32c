import { badRequest } from '../errors.js';
import type { Services } from '../services/context.js';
import { isMerged, type Merged } from '../services/lookups.js';
import type { QueryText } from '../services/queryParams.js';
import { readJsonBody } from './middleware/jsonBody.js';
import type { AppContext, Route } from './route.js';

/** What routes read of a request and how they answer: query parameters, and JSON as exact bytes. */

/** Sends a JSON value as its exact bytes, so that cached and fresh answers are identical. */
export function sendJson(ctx: AppContext, value: unknown, status = 200): void {
  sendJsonText(ctx, JSON.stringify(value), status);
}

/** Sends JSON already written as text (a cached answer, or one made of cached parts). */
export function sendJsonText(ctx: AppContext, text: string, status = 200): void {
  ctx.status = status;
  ctx.type = 'application/json';
  ctx.body = text;
}

/** A query parameter given at most once (a repeated one is a 400, not a silent pick). */
export function queryParam(ctx: AppContext, name: string): string | undefined {
  const value = ctx.query[name];
  if (Array.isArray(value)) throw badRequest(`query parameter ${name} is given more than once`);
  return value;
}

/** The query parameters a route's query schema names, as text; others are ignored. */
function queryParams<Query extends { shape: object }>(ctx: AppContext, schema: Query): QueryText<Query> {
  return Object.fromEntries(Object.keys(schema.shape).map((name) => [name, queryParam(ctx, name)])) as QueryText<Query>;
}

/** A merged id answers 301 to its survivor under the same path family. */
export function redirect(ctx: AppContext, { mergedInto, location }: Merged): void {
  ctx.set('Location', location);
  sendJson(ctx, { merged_into: mergedInto, location }, 301);
}

/**
 * How a route without a handler of its own answers over HTTP: as its tool does (Route.answer), its
 * input read from the request (the parameters its query schema names, the JSON body of a POST).
 */
export async function answerRequest(
  ctx: AppContext,
  services: Services,
  route: Route,
  params: Readonly<Record<string, string>>,
): Promise<void> {
  if (!route.answer) throw new Error(`route ${route.name} has neither a handler nor an answer`);
  const query = route.query ? queryParams(ctx, route.query) : {};
  const body = route.method === 'POST' ? await readJsonBody(ctx) : undefined;
  const answer = await route.answer(services, ctx.state.requestId, { params, query, body });
  if (isMerged(answer)) redirect(ctx, answer);
  else sendJsonText(ctx, answer.text);
}

import { badRequest } from '../errors.js';
import type { AppContext } from './route.js';

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

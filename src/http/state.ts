import type { Context, Next, ParameterizedContext } from 'koa';
import { badRequest } from '../errors.js';
import type { Route } from './route.js';

/** What middleware leaves on ctx.state for later middleware. */
export interface RequestState {
  requestId: string;
  /**
   * The route that serves the request's method and path, set before the guard runs (routeRequests);
   * undefined when none does (an unknown path, or a method its path does not serve).
   */
  route?: Route;
  /** The route's path parameters, decoded. */
  params: Record<string, string>;
  /** The authenticated key id, set by `authenticate`. */
  kid?: string;
  /** A finer usage route than the route's template, set by routes that carry several calls (POST /mcp: the tool). */
  meteredRoute?: string;
}

export type AppContext = ParameterizedContext<RequestState>;
export type Middleware = (ctx: AppContext, next: Next) => Promise<void>;
export type { Context, Next };

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

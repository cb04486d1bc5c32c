import type { Context, Next, ParameterizedContext } from 'koa';

/** What middleware leaves on ctx.state for later middleware. */
export interface RequestState {
  requestId: string;
  /** The authenticated key id, set by `authenticate`. */
  kid?: string;
  /** Ids of the entities a response shows, set by point-lookup routes for the cache. */
  shows?: string[];
}

export type AppContext = ParameterizedContext<RequestState>;
export type Middleware = (ctx: AppContext, next: Next) => Promise<void>;
export type { Context, Next };

/** Sends a JSON value as its exact bytes, so that cached and fresh answers are identical. */
export function sendJson(ctx: AppContext, value: unknown, status = 200): void {
  ctx.status = status;
  ctx.type = 'application/json';
  ctx.body = JSON.stringify(value);
}

import type { Next, ParameterizedContext } from 'koa';
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

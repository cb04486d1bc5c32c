import { randomUUID } from 'node:crypto';
import type { Middleware } from '../route.js';

const ACCEPTABLE = /^[\w.-]{1,64}$/;

/** Tags each request with an id (the caller's X-Request-Id when it is sane) and echoes it back. */
export const requestId = (): Middleware => async (ctx, next) => {
  const offered = ctx.get('X-Request-Id');
  ctx.state.requestId = ACCEPTABLE.test(offered) ? offered : randomUUID();
  ctx.set('X-Request-Id', ctx.state.requestId);
  await next();
};

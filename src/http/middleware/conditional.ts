import { createHash } from 'node:crypto';
import type { Config } from '../../config.js';
import { requestAccess } from '../routeTable.js';
import type { Middleware, Reuse } from '../route.js';

/**
 * Conditional GETs: every 200 of a JSON GET carries an ETag (a hash of its bytes, so the cached
 * and the freshly read answer of one record share it) and the Cache-Control of its route's kind
 * of answer; `If-None-Match` with the current tag answers 304 without the body. The request has
 * been admitted, rate limited and read like any other by then: a 304 is counted and metered as a
 * call, and a point lookup's costs the cache read alone.
 */

/** The strong validator of a body: the same bytes, the same tag. */
export const entityTag = (body: string): string => `"${createHash('sha256').update(body).digest('base64url').slice(0, 27)}"`;

/**
 * Cache-Control of each kind of answer. Keyed answers are `private`: a shared cache must not hand
 * them to a client without a key, whose calls would then be neither checked nor metered.
 */
export function cacheControl(reuse: Reuse, { pointCacheTtlS, shortCacheTtlS }: Pick<Config, 'pointCacheTtlS' | 'shortCacheTtlS'>): string {
  switch (reuse) {
    case 'point':
      return `private, max-age=${pointCacheTtlS}`;
    case 'short':
      return `private, max-age=${shortCacheTtlS}`;
    case 'settled':
      return 'private, max-age=31536000, immutable';
    case 'never':
      return 'no-store';
    case 'revalidate':
      return 'no-cache';
  }
}

/**
 * Whether If-None-Match names `etag` (weak comparison, `*` for any). Not Koa's `fresh`: that treats a
 * request's `Cache-Control: no-cache` as a reload, and fetch() sends one beside every If-None-Match
 * a script sets, while a request directive is for caches on the way, not for the origin (RFC 9110 13.1.2).
 */
function matches(ifNoneMatch: string, etag: string): boolean {
  if (ifNoneMatch.trim() === '*') return true;
  return ifNoneMatch.split(',').some((tag) => tag.trim().replace(/^W\//, '') === etag);
}

export function conditionalGets(config: Pick<Config, 'pointCacheTtlS' | 'shortCacheTtlS'>): Middleware {
  return async (ctx, next) => {
    await next();
    const { route } = ctx.state;
    if (!route || route.method !== 'GET' || ctx.status !== 200 || typeof ctx.body !== 'string' || ctx.response.type !== 'application/json')
      return;
    const reuse = ctx.state.reuse ?? route.reuse ?? 'revalidate';
    ctx.set('Cache-Control', cacheControl(reuse, config));
    // A keyed answer is the key's: a cache between keeps one per key (and `private` keeps shared caches out).
    if (requestAccess(ctx, route) === 'key') ctx.vary('Authorization');
    const etag = entityTag(ctx.body);
    ctx.set('ETag', etag);
    if (matches(ctx.get('If-None-Match'), etag)) ctx.status = 304;
  };
}

import { parseFields, projectRecords, type Fields } from '../../services/fields.js';
import type { Services } from '../../services/context.js';
import { queryParam } from '../messages.js';
import type { AppContext, Middleware } from '../route.js';
import { spendRequest } from './rateLimit.js';

/**
 * `fields=` on the routes whose entry names their records (Route.partial): the parameter is read
 * before the route runs (an unknown field is a 400 that reads nothing), and each record of the
 * route's 200 keeps only the fields asked for, before its ETag is taken.
 */

export function partialResponses({ rateLimiter }: Pick<Services, 'rateLimiter'>, spendsItself: (ctx: AppContext) => boolean): Middleware {
  return async (ctx, next) => {
    const partial = ctx.state.route?.partial;
    if (!partial) return next();
    let fields: Fields;
    try {
      fields = parseFields(queryParam(ctx, 'fields'), partial.record, partial.what);
    } catch (error) {
      // Refused before the route could spend its unit: a 400 costs one, like any request.
      if (spendsItself(ctx)) await spendRequest(ctx, rateLimiter);
      throw error;
    }
    await next();
    if (fields === null || ctx.status !== 200 || typeof ctx.body !== 'string') return;
    ctx.body = JSON.stringify(projectRecords(JSON.parse(ctx.body), partial.at, fields));
  };
}

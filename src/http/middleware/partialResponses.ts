import { parseFields, pickFields, type Fields } from '../../services/fields.js';
import type { Services } from '../../services/context.js';
import { queryParam } from '../messages.js';
import type { AppContext, Middleware } from '../route.js';
import { spendRequest } from './rateLimit.js';

/**
 * `fields=` on the routes whose entry names their records (Route.partial): the parameter is read
 * before the route runs (an unknown field is a 400 that reads nothing), and each record of the
 * route's 200 keeps only the fields asked for, before its ETag is taken.
 */

const isObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);

/** `value` with the records at `at` (field names, `*` for each item of a list) cut to `fields`. */
function project(value: unknown, at: readonly string[], fields: ReadonlySet<string>): unknown {
  const [step, ...rest] = at;
  if (step === undefined) return isObject(value) ? pickFields(value, fields) : value;
  if (step === '*') return Array.isArray(value) ? value.map((item) => project(item, rest, fields)) : value;
  // An item without the record (a bulk lookup's 404) stays as it is.
  if (!isObject(value) || !(step in value)) return value;
  return { ...value, [step]: project(value[step], rest, fields) };
}

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
    ctx.body = JSON.stringify(project(JSON.parse(ctx.body), partial.at, fields));
  };
}

import type { Services } from '../../services/context.js';
import type { AppContext } from '../route.js';
import { spendItems } from './rateLimit.js';

/** Batch bodies may be larger than single ones: 50 match records of a few long fields. */
export const BATCH_BODY_LIMIT_BYTES = 512 * 1024;

/**
 * Reads the items of a batch request and spends them on the key's budget, one unit each (or what
 * `units` counts: a bulk lookup's distinct keys), all or none (spendItems). A body that cannot be read as a batch still costs one unit, like any request,
 * and is refused with its 400; so does an empty batch where the protocol allows one.
 */
export async function admitBatch<T>(
  ctx: AppContext,
  { rateLimiter }: Pick<Services, 'rateLimiter'>,
  read: () => Promise<readonly T[]>,
  units: (items: readonly T[]) => number = (items) => items.length,
): Promise<readonly T[]> {
  let items: readonly T[];
  try {
    items = await read();
  } catch (error) {
    await spendItems(ctx, rateLimiter, 1);
    throw error;
  }
  await spendItems(ctx, rateLimiter, Math.max(1, units(items)));
  return items;
}

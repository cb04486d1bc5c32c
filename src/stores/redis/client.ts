import { createHash } from 'node:crypto';
import { createClient, ErrorReply } from 'redis';
import type { Logger } from '../../log.js';
import { StoreGuard } from '../guard.js';

export type Redis = ReturnType<typeof createClient>;

/**
 * The request path's guard of Redis (see StoreGuard): a stalled or unreachable Redis costs a
 * request at most half the wait it may spend on any store (STORE_WAIT_MS), since a request makes
 * two rounds to Redis (the rate limit, the cache); then the cache reads as a miss and the rate
 * limit counts in memory. Its waits draw on no request's budget: a request can do without Redis.
 */
export const redisGuard = (log: Logger, storeWaitMs: number): StoreGuard =>
  new StoreGuard('Redis', log, Math.max(1, Math.round(storeWaitMs / 2)), isRedisOutage, false);

/** Every failure but an error Redis itself answered (a script's bug) means Redis is away; busy or loading is away too. */
function isRedisOutage(error: unknown): boolean {
  return !(error instanceof ErrorReply) || /^(LOADING|BUSY|MASTERDOWN|TRYAGAIN)\b/.test(error.message);
}

export async function connectRedis(url: string): Promise<Redis> {
  const client = createClient({
    url,
    // Fail fast while Redis is away instead of queueing commands without bound.
    disableOfflineQueue: true,
    socket: { connectTimeout: 1_000, reconnectStrategy: (retries) => Math.min(50 * 2 ** retries, 1_000) },
  });
  // Errors also surface on the command that hit them; the event only has to be consumed.
  client.on('error', () => undefined);
  await client.connect();
  return client;
}

/** Deletes every key under `prefix` (a test's or a benchmark's own), a page of keys at a time. */
export async function deleteKeysUnder(redis: Redis, prefix: string): Promise<void> {
  for await (const keys of redis.scanIterator({ MATCH: `${prefix}*`, COUNT: 1000 })) if (keys.length > 0) await redis.del(keys);
}

export interface LuaScript {
  source: string;
  sha: string;
}

export function luaScript(source: string): LuaScript {
  return { source, sha: createHash('sha1').update(source).digest('hex') };
}

/** Runs a Lua script by its digest, sending the source only on the first call or after a server restart. */
export async function runScript(redis: Redis, script: LuaScript, keys: string[], args: string[]): Promise<unknown> {
  try {
    return await redis.evalSha(script.sha, { keys, arguments: args });
  } catch (error) {
    if (!(error instanceof Error) || !error.message.startsWith('NOSCRIPT')) throw error;
    return redis.eval(script.source, { keys, arguments: args });
  }
}

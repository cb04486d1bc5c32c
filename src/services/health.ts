import { z } from 'zod/v4';
import type { MeterHealth } from './meter.js';
import type { Services } from './context.js';

const dependencyHealth = z.object({ status: z.enum(['up', 'down']), latency_ms: z.number(), error: z.string().optional() });

const meterHealth = z.object({
  pending: z.int().meta({ description: 'Usage records not yet stored.' }),
  dropped: z.int().meta({ description: 'Usage records lost to a full buffer.' }),
  lastError: z.string().nullable().meta({ description: 'Why the last write failed, while it is failing.' }),
}) satisfies z.ZodType<MeterHealth>;

/** GET /health's body, whether 200 or 503. */
export const health = z
  .object({
    status: z.enum(['ok', 'degraded']),
    checks: z.record(z.string(), dependencyHealth).meta({ description: 'Each dependency by name: `postgres`, `redis`, `elasticsearch`.' }),
    metering: z.union([meterHealth, z.object({ enabled: z.literal(false) })]),
  })
  .meta({ id: 'Health' });

type DependencyHealth = z.output<typeof dependencyHealth>;
export type Health = z.output<typeof health>;

// Each dependency is asked in parallel and given this long: a load balancer's check gets its answer
// within a second whatever stalls (a paused Redis holds a ping forever).
const TIMEOUT_MS = 750;

async function probe(check: () => Promise<unknown>): Promise<DependencyHealth> {
  const started = performance.now();
  let timer: NodeJS.Timeout | undefined;
  try {
    await Promise.race([
      check(),
      new Promise((_, reject) => {
        timer = setTimeout(() => reject(new Error(`no answer within ${TIMEOUT_MS} ms`)), TIMEOUT_MS);
      }),
    ]);
    return { status: 'up', latency_ms: Math.round((performance.now() - started) * 10) / 10 };
  } catch (error) {
    return {
      status: 'down',
      latency_ms: Math.round((performance.now() - started) * 10) / 10,
      error: error instanceof Error ? error.message : String(error),
    };
  } finally {
    clearTimeout(timer);
  }
}

/** Asks each dependency in parallel; any one down makes the service `degraded` (503). */
export async function checkHealth(services: Services): Promise<Health> {
  const entries = Object.entries(dependencyChecks(services));
  const results = await Promise.all(entries.map(([, check]) => probe(check)));
  const checks = Object.fromEntries(entries.map(([name], index) => [name, results[index]!]));
  const meter = services.meter?.health();
  // Dropped usage records are reported, not made a 503: a load balancer should keep the instance.
  const healthy = results.every((result) => result.status === 'up');
  return { status: healthy ? 'ok' : 'degraded', checks, metering: meter ?? { enabled: false } };
}

function dependencyChecks(services: Services): Record<string, () => Promise<unknown>> {
  return {
    postgres: () => services.db.query('select 1'),
    redis: () => services.redis.ping(),
    elasticsearch: async () => {
      const health = await services.elastic.cluster.health();
      if (health.status === 'red') throw new Error('cluster status red');
    },
  };
}

import { z } from 'zod/v4';
import { isUnavailable } from '../errors.js';
import type { Logger } from '../log.js';
import type { Meter, MeterHealth } from './meter.js';
import type { Elastic } from '../stores/elasticsearch/client.js';
import type { Queryable } from '../stores/postgres/pool.js';
import type { Redis } from '../stores/redis/client.js';

const dependencyHealth = z.object({ status: z.enum(['up', 'down']) });

const meterHealth = z.object({
  pending: z.int().meta({ description: 'Usage records not yet stored.' }),
  dropped: z.int().meta({ description: 'Usage records lost to a full buffer.' }),
  failing: z.boolean().meta({ description: 'The last write of usage failed; the records wait for the next.' }),
}) satisfies z.ZodType<MeterHealth>;

/** GET /health's body, whether 200 or 503. */
export const health = z
  .object({
    status: z.enum(['ok', 'degraded']),
    checks: z.record(z.string(), dependencyHealth).meta({ description: 'Each dependency by name: `postgres`, `redis`, `elasticsearch`.' }),
    metering: z.union([meterHealth, z.object({ enabled: z.literal(false) })]),
  })
  .meta({ id: 'Health' });

export type Health = z.output<typeof health>;

// Each dependency is asked in parallel and given this long: a load balancer's check gets its answer
// within a second whatever stalls (a paused Redis holds a ping forever).
const TIMEOUT_MS = 750;
// /health is public and unlimited: however often it is asked, the stores are asked at most this often.
const REUSE_MS = 1_000;

type Checks = Record<'postgres' | 'redis' | 'elasticsearch', () => Promise<unknown>>;

/**
 * The health of this process's stores, for GET /health. Publicly only up or down: why a store is
 * down (a driver's message, with host names and addresses) goes to the log.
 */
export class HealthCheck {
  private last: { at: number; report: Promise<Omit<Health, 'metering'>> } | null = null;
  private readonly checks: Checks;

  constructor(
    { db, redis, elastic }: { db: Queryable; redis: Redis; elastic: Elastic },
    private readonly meter: Meter | null,
    private readonly log: Logger,
  ) {
    this.checks = {
      postgres: () => db.query('select 1'),
      redis: () => redis.ping(),
      elasticsearch: async () => {
        const cluster = await elastic.cluster.health();
        if (cluster.status === 'red') throw new Error('cluster status red');
      },
    };
  }

  /** Any one dependency down makes the service `degraded` (503). Calls within REUSE_MS of the last check share its answer. */
  async report(): Promise<Health> {
    const now = performance.now();
    if (!this.last || now - this.last.at > REUSE_MS) this.last = { at: now, report: this.checkStores() };
    // Dropped usage records are reported, not made a 503: a load balancer should keep the instance.
    return { ...(await this.last.report), metering: this.meter?.health() ?? { enabled: false } };
  }

  private async checkStores(): Promise<Omit<Health, 'metering'>> {
    const entries = Object.entries(this.checks);
    const results = await Promise.all(entries.map(([store, check]) => this.probe(store, check)));
    const checks = Object.fromEntries(entries.map(([store], index) => [store, { status: results[index]! }]));
    return { status: results.every((result) => result === 'up') ? 'ok' : 'degraded', checks };
  }

  private async probe(store: string, check: () => Promise<unknown>): Promise<'up' | 'down'> {
    let timer: NodeJS.Timeout | undefined;
    try {
      await Promise.race([
        check(),
        new Promise((_, reject) => {
          timer = setTimeout(() => reject(new Error(`no answer within ${TIMEOUT_MS} ms`)), TIMEOUT_MS);
        }),
      ]);
      return 'up';
    } catch (error) {
      // A store's guard logs its outages, with the driver's message, once per interval; anything else is said here.
      if (!isUnavailable(error)) this.log.info({ store, err: error }, 'health check: store down');
      return 'down';
    } finally {
      clearTimeout(timer);
    }
  }
}

// Reading a page of the change feed from any cursor, on a feed of 1,000,000 changes (or --count),
// through the same service function as GET /v1/changes, against a baseline in the same run: the
// cheapest possible read of 1,000 consecutive rows of the table by primary key.
// Run: node --import tsx scripts/bench/changes.ts [--count 1000000] [--reads 300]
import { parseArgs } from 'node:util';
import { createLogger } from '../../src/log.js';
import { changesSince } from '../../src/services/changeFeed.js';
import { ShortCache } from '../../src/services/shortCache.js';
import { connectRedis } from '../../src/stores/redis/client.js';
import { ResponseCache } from '../../src/stores/redis/responseCache.js';
import { loadConfig } from '../../src/config.js';
import { benchDatabase, benchRedisPrefix } from '../lib/bench.js';
import { percentile } from '../lib/percentile.js';

const { values } = parseArgs({ options: { count: { type: 'string', default: '1000000' }, reads: { type: 'string', default: '300' } } });
const count = Number(values.count);
const reads = Number(values.reads);
const PAGE = 1_000;

const database = await benchDatabase('bookmeta_bench_changes');
const redisPrefix = benchRedisPrefix('bench-changes');
const redis = await connectRedis(loadConfig().redisUrl);
// No short cache here: every read goes to PostgreSQL, the case that matters.
const uncached = new ShortCache(new ResponseCache(redis, redisPrefix.prefix), 0, createLogger('silent'));

try {
  console.log(`writing ${count} changes`);
  await database.db.query(
    `insert into changes (entity, entity_id, operation, survivor_id)
     select (array['book','work','author'])[1 + i % 3]::entity_kind, entity_key('bk_' || lpad(i::text, 12, '0')),
            (case when i % 50 = 0 then 'merge' else 'update' end)::change_operation,
            case when i % 50 = 0 then entity_key('bk_' || lpad((i + 1)::text, 12, '0')) end
       from generate_series(1, $1::int) as i`,
    [count],
  );
  await database.db.query('vacuum analyze changes');

  const cursors = Array.from({ length: reads }, () => Math.floor(Math.random() * (count - PAGE)));
  const time = async (read: (cursor: number) => Promise<unknown>): Promise<number[]> => {
    const timings: number[] = [];
    for (const cursor of cursors) {
      const started = performance.now();
      await read(cursor);
      timings.push(performance.now() - started);
    }
    return timings;
  };
  const baseline = await time((cursor) => database.db.query('select * from changes where seq > $1 and seq <= $1 + 1000', [cursor]));
  const feed = await time(async (cursor) => {
    const page = await changesSince(database.db, uncached, String(cursor), String(PAGE));
    if (page.changes.length !== PAGE) throw new Error(`short page at ${cursor}`);
  });

  const line = (label: string, timings: number[]) =>
    `${label.padEnd(40)} p50 ${percentile(timings, 50).toFixed(1).padStart(6)} ms   p95 ${percentile(timings, 95).toFixed(1).padStart(6)} ms`;
  console.log(`${reads} reads of ${PAGE} changes from random cursors in a feed of ${count}`);
  console.log(line('baseline: 1,000 rows by primary key', baseline));
  console.log(line('changesSince (GET /v1/changes)', feed));
  console.log('');
  console.log(
    `feed p95: ${percentile(feed, 95).toFixed(1)} ms (target < 50 ms); ratio to baseline p95: ${(percentile(feed, 95) / percentile(baseline, 95)).toFixed(2)}`,
  );
} finally {
  await redis.quit();
  await redisPrefix.drop();
  await database.drop();
}

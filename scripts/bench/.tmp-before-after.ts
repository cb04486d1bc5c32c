// One-off (not committed): cached lookup, main's code (before) against this branch (after), against a bare Koa route, interleaved in one run.
import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import { benchDatabase, benchKey, benchRedisPrefix, importSampleBooks, startApi, startBareKoa, type BenchServer } from '../lib/bench.js';
import { alternate, formatLoad, load } from './lib/load.js';

function startApiAt(cwd: string, env: NodeJS.ProcessEnv): Promise<BenchServer> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'loader/cli.ts', 'serve'], { env: { ...process.env, PORT: '0', LOG_LEVEL: 'info', ...env }, cwd, stdio: ['ignore', 'pipe', 'pipe'] });
  const exited = new Promise<void>((resolve) => child.on('exit', () => resolve()));
  child.stdout.resume();
  return new Promise((resolve, reject) => {
    const lines = createInterface({ input: child.stderr });
    lines.on('line', (line) => {
      try {
        const entry = JSON.parse(line) as { msg?: string; url?: string };
        if (entry.msg !== 'listening' || !entry.url) return;
        lines.close();
        child.stderr.resume();
        resolve({ url: entry.url, stop: async () => { child.kill('SIGTERM'); await exited; } });
      } catch { /* not JSON */ }
    });
    child.on('exit', (code) => reject(new Error(`exited ${code}`)));
  });
}

const rounds = Number(process.env.ROUNDS ?? 8);
const roundS = Number(process.env.ROUND_S ?? 3);
const connections = 16;
const database = await benchDatabase('bookmeta_bench_routes');
await importSampleBooks(database.db);
const headers = await benchKey(database.db);
const { rows } = await database.db.query<{ isbn_13: string }>('select isbn_13 from books where isbn_13 is not null order by popularity desc limit 1');
const hot = `/v1/isbn/${rows[0]!.isbn_13}`;
const redis = benchRedisPrefix('bench-routes');
const env = { DATABASE_URL: database.url, RATE_LIMIT_MAX: '1000000000', REDIS_PREFIX: redis.prefix };
const before = await startApiAt('/tmp/routes-base', env);
const after = await startApi(env);
const bare = await startBareKoa(await (await fetch(`${after.url}${hot}`, { headers })).text());
try {
  const [baseline, b, a] = await alternate(
    [
      { label: 'bare Koa route', url: `${bare.url}${hot}` },
      { label: 'cached lookup, before (main)', url: `${before.url}${hot}`, headers },
      { label: 'cached lookup, after (routes)', url: `${after.url}${hot}`, headers },
    ],
    { rounds, roundS, connections },
  );
  const pacedB = await load({ label: 'before at half baseline rate', url: `${before.url}${hot}`, headers, connections, durationS: roundS * 2, rate: Math.round(baseline!.rps / 2) });
  const pacedA = await load({ label: 'after at half baseline rate', url: `${after.url}${hot}`, headers, connections, durationS: roundS * 2, rate: Math.round(baseline!.rps / 2) });
  for (const result of [baseline!, b!, a!, pacedB, pacedA]) console.log(formatLoad(result));
  console.log(`before / baseline: ${(b!.rps / baseline!.rps).toFixed(2)}   after / baseline: ${(a!.rps / baseline!.rps).toFixed(2)}   after / before: ${(a!.rps / b!.rps).toFixed(2)}`);
  console.log(`p99 at half baseline: before ${pacedB.p99.toFixed(1)} ms, after ${pacedA.p99.toFixed(1)} ms`);
} finally {
  await Promise.all([before.stop(), after.stop(), bare.stop()]);
  await database.drop();
  await redis.drop();
}

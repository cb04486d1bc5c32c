import test from 'ava';
import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import { serveSyncMetrics } from '../loader/index/syncMetrics.js';
import { createLogger } from '../src/log.js';
import { projectPath } from '../src/paths.js';
import { lastSeq } from '../src/stores/postgres/changes.js';
import { GOODBOOKS_300, liveBookIds, retitle } from './helpers/catalogue.js';
import { createWorld, type TestWorld } from './helpers/env.js';
import { eventually } from './helpers/eventually.js';
import { loaderDeps, type TestLoaderDeps } from './helpers/indexing.js';
import { runCli } from './helpers/processes.js';
import { scrape, value } from './helpers/scrape.js';

let world: TestWorld;
let deps: TestLoaderDeps;

test.before(async () => {
  world = await createWorld();
  deps = loaderDeps(world);
});
test.after.always(async () => {
  await deps?.close();
  await world?.destroy();
});

/** The JSON log lines a command wrote to stderr (progress output between them is skipped). */
function logLines(stderr: string): { msg?: string; [field: string]: unknown }[] {
  return stderr.split(/[\r\n]/).flatMap((line) => {
    if (!line.startsWith('{')) return [];
    return [JSON.parse(line) as { msg?: string }];
  });
}

test.serial('import and reindex keep their printed report and progress, and log the report as one JSON line', async (t) => {
  const env = { ...world.env, LOG_LEVEL: 'info' };
  const imported = await runCli(env, ['import', 'goodbooks', GOODBOOKS_300]);
  t.is(imported.code, 0, imported.stderr);
  t.regex(imported.stdout, /^goodbooks: read 300 rows; imported \d+/m);
  t.regex(imported.stderr, /goodbooks: \d+ rows imported/);
  const reports = logLines(imported.stderr).filter((line) => line.msg === 'import finished');
  t.is(reports.length, 1);
  const [report] = reports[0]!.reports as { source: string; read: number; imported: number; rejected: number }[];
  t.is(report!.source, 'goodbooks');
  t.is(report!.read, 300);
  t.is(
    `goodbooks: read ${report!.read} rows; imported ${report!.imported}`,
    imported.stdout.match(/^goodbooks: read \d+ rows; imported \d+/m)![0],
  );
  t.is(typeof report!.rejected, 'number');

  const reindexed = await runCli(env, ['reindex', 'all', '--no-progress']);
  t.is(reindexed.code, 0, reindexed.stderr);
  t.regex(reindexed.stdout, /alias/);
  const finished = logLines(reindexed.stderr).filter((line) => line.msg === 'reindex finished');
  t.is(finished.length, 1);
  const results = finished[0]!.results as { alias: string; count: number }[];
  t.deepEqual(results.map((result) => result.alias).sort(), [deps.aliases.authors, deps.aliases.books]);
  t.true(results.every((result) => result.count > 0));
});

test.serial('sync metrics show how far behind the feed head sync is, in changes and in seconds', async (t) => {
  const metrics = await serveSyncMetrics(world.db, '127.0.0.1', 0, createLogger('silent'));
  try {
    const books = await liveBookIds(world.db, 3, 10);
    await retitle(world.db, books, (id) => `Waiting ${id}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
    const scraped = await scrape(metrics.url);
    const head = await lastSeq(world.db);
    t.is(value(scraped, 'bookmeta_sync_head_seq'), head);
    t.is(value(scraped, 'bookmeta_sync_lag_changes'), head - value(scraped, 'bookmeta_sync_applied_seq')!);
    t.true(value(scraped, 'bookmeta_sync_lag_changes')! >= 3);
    t.true(value(scraped, 'bookmeta_sync_lag_seconds')! >= 0.05);
  } finally {
    await metrics.close();
  }
});

test.serial('sync --follow serves its own metrics: applied sequence, feed head, lag, documents indexed and failed', async (t) => {
  const child = spawn(process.execPath, ['--import', 'tsx', projectPath('loader', 'cli.ts'), 'sync', '--follow'], {
    env: { ...world.env, LOG_LEVEL: 'info', SYNC_METRICS_PORT: '0' },
    cwd: projectPath(),
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  try {
    const url = await new Promise<string>((resolve, reject) => {
      createInterface({ input: child.stderr }).on('line', (line) => {
        const entry = JSON.parse(line) as { msg?: string; url?: string };
        if (entry.msg === 'metrics listening' && entry.url) resolve(entry.url);
      });
      void exited.then((code) => reject(new Error(`sync exited with ${code} before serving metrics`)));
    });
    t.regex(url, /^http:\/\/127\.0\.0\.1:\d+\/metrics$/);
    const caughtUp = async () => {
      const scraped = await scrape(url);
      return value(scraped, 'bookmeta_sync_lag_changes') === 0 && value(scraped, 'bookmeta_sync_applied_seq') === (await lastSeq(world.db));
    };
    t.true(await eventually(caughtUp, 30_000));
    const before = await scrape(url);
    const [book] = await liveBookIds(world.db, 1, 20);
    await retitle(world.db, [book!], () => 'Followed By Metrics');
    t.true(await eventually(caughtUp, 30_000));
    const after = await scrape(url);
    t.is(value(after, 'bookmeta_sync_lag_seconds'), 0);
    t.true(value(after, 'bookmeta_sync_applied_seq')! > value(before, 'bookmeta_sync_applied_seq')!);
    t.true(value(after, 'bookmeta_sync_changes_applied_total')! > value(before, 'bookmeta_sync_changes_applied_total')!);
    t.true(
      value(after, 'bookmeta_sync_documents_total', { outcome: 'indexed' })! >
        value(before, 'bookmeta_sync_documents_total', { outcome: 'indexed' })!,
    );
    t.is(value(after, 'bookmeta_sync_documents_total', { outcome: 'failed' }), 0);
    t.is(value(after, 'bookmeta_sync_page_failures_total'), 0);
    t.true(after.families.has('process_cpu_user_seconds_total'));
    child.kill('SIGTERM');
    t.is(await exited, 0);
    await t.throwsAsync(fetch(url));
  } finally {
    child.kill('SIGKILL');
  }
});

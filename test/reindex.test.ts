import test from 'ava';
import { setTimeout as sleep } from 'node:timers/promises';
import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import { authorKey } from '../src/domain/names.js';
import { aliasTargets, strayIndices } from '../loader/stores/elasticsearch/indices.js';
import { mergeEntities } from '../src/stores/postgres/merges.js';
import { recordChanges } from '../src/stores/postgres/changes.js';
import { withTransaction } from '../src/stores/postgres/pool.js';
import { projectPath } from '../src/paths.js';
import { reindex } from '../loader/index/reindex.js';
import { MERGED_SEGMENTS, type WarmQueries } from '../loader/index/readyIndex.js';
import { syncOnce } from '../loader/index/sync.js';
import { createProgress, formatDuration, progressLine } from '../loader/index/progress.js';
import { allDocuments, assertIndexMatches, useIndexedWorld } from './helpers/indexing.js';
import { TcpProxy } from './helpers/faults.js';
import { runCli } from './helpers/processes.js';
import { liveBooks, retitle } from './helpers/catalogue.js';

const { world, deps } = useIndexedWorld(test);

test.serial('reindex builds versioned indices behind the aliases with every live book and author', async (t) => {
  const results = await reindex(deps, 'all', { progress: false });
  t.is(results.length, 2);
  for (const result of results) {
    t.regex(result.index, new RegExp(`^${result.alias}-v\\d+$`));
    t.deepEqual(await aliasTargets(deps.es, result.alias), [result.index]);
  }
  await assertIndexMatches(t, deps);

  const books = await allDocuments<Record<string, unknown>>(deps.es, deps.aliases.books);
  const hunger = [...books.values()].find((book) => book.isbn_13 === '9780439023481')!;
  t.deepEqual(Object.keys(hunger), [
    'id',
    'work_id',
    'kind',
    'work_title',
    'isbn_13',
    'isbn_10',
    'title',
    'subtitle',
    'series',
    'series_number',
    'authors',
    'author_ids',
    'author_names',
    'first_author',
    'author_facet',
    'publisher',
    'year',
    'language',
    'pages',
    'cover_url',
    'physical_format',
    'subjects',
    'popularity',
    'average_rating',
    'rating',
    'work_year',
    'work_readers',
    'work_rating',
    'also_liked',
    'updated_seq',
    'subject_keys',
    'subject_facet',
    'title_start',
    'series_start',
  ]);
  t.is(hunger.title, 'The Hunger Games');
  // Type-ahead's inputs: the title's and series' keys, weighed by the work's readers.
  t.deepEqual(hunger.title_start, { input: ['hunger games'], weight: hunger.work_readers });
  t.deepEqual(hunger.series_start, { input: ['hunger games'], weight: hunger.work_readers });
  t.deepEqual(hunger.author_names, ['Suzanne Collins']);
  t.is(hunger.popularity, 4780653);
  t.is(hunger.updated_seq, results[0]!.snapshotSeq);

  const authors = await allDocuments<Record<string, unknown>>(deps.es, deps.aliases.authors);
  const collins = [...authors.values()].find((author) => author.name === 'Suzanne Collins')!;
  t.is(collins.name_key, authorKey('Suzanne Collins'));
  const { rows } = await world.db.query<{ popularity: number; works: number }>(
    `select sum(b.popularity)::bigint as popularity, count(distinct b.work_id)::int as works from book_authors ba
       join books b on b.id = ba.book_id and b.merged_into is null where ba.author_id = entity_key($1)`,
    [collins.id],
  );
  t.is(collins.popularity, rows[0]!.popularity);
  t.is(collins.work_count, rows[0]!.works);
});

test.serial('search answers throughout a reindex and changes committed during it are not lost', async (t) => {
  const [first, second, third, fourth] = await liveBooks(world.db, 4);
  const before = await aliasTargets(deps.es, deps.aliases.books);
  let searches = 0;
  let failures = 0;
  let empty = 0;
  let running = true;
  const searching = (async () => {
    while (running) {
      try {
        const response = await deps.es.search({ index: deps.aliases.books, size: 1, query: { match_all: {} } });
        searches += 1;
        if (response.hits.hits.length === 0) empty += 1;
      } catch {
        failures += 1;
      }
      await sleep(5);
    }
  })();

  const results = await reindex(deps, 'books', {
    progress: false,
    batchSize: 50,
    maxRate: 1_000,
    hooks: {
      // Committed after the snapshot was taken: the snapshot does not hold these.
      afterSnapshot: async () => {
        await retitle(world.db, [first!.id], () => 'Changed While Streaming');
        const outcome = await mergeEntities(world.db, 'book', second!.id, third!.id);
        t.true(outcome.merged);
      },
      // Committed after the catch-up, just before the swap.
      beforeSwap: async () => {
        await retitle(world.db, [fourth!.id], () => 'Changed Before The Swap');
      },
    },
  });
  running = false;
  await searching;

  t.true(searches > 20, `only ${searches} searches ran`);
  t.is(failures, 0);
  t.is(empty, 0);
  t.notDeepEqual(await aliasTargets(deps.es, deps.aliases.books), before);
  t.deepEqual(await strayIndices(deps.es, deps.aliases.books), [], 'the old index is dropped');
  const books = await allDocuments<{ title: string }>(deps.es, deps.aliases.books);
  t.is(books.get(first!.id)?.title, 'Changed While Streaming');
  t.is(books.get(fourth!.id)?.title, 'Changed Before The Swap');
  t.false(books.has(second!.id), 'the merged book left the index');
  t.true(books.has(third!.id));
  t.true(results[0]!.completeUpTo > results[0]!.snapshotSeq);
  // The authors index did not see those changes yet; sync brings it up to date.
  await syncOnce(deps);
  await assertIndexMatches(t, deps);
});

test.serial('the CLI reindexes, prints a summary and the loader status agrees with PostgreSQL', async (t) => {
  const result = await runCli(world.env, ['reindex', 'all', '--no-progress']);
  t.is(result.code, 0, result.stderr);
  t.regex(result.stdout, /books-v\d+\s+\d+\s+\d+/);
  const status = await runCli(world.env, ['loader', 'status', '--json']);
  t.is(status.code, 0, status.stderr);
  const parsed = JSON.parse(status.stdout) as {
    lagChanges: number;
    indices: { documents: number; live: number; targets: string[]; others: string[] }[];
  };
  t.is(parsed.lagChanges, 0);
  for (const index of parsed.indices) {
    t.is(index.documents, index.live);
    t.is(index.targets.length, 1);
    t.deepEqual(index.others, []);
  }
  const text = await runCli(world.env, ['loader', 'status']);
  t.regex(text.stdout, /sync checkpoint: \d+ of \d+/);
  t.regex(text.stdout, /lag: 0 changes/);
});

/** What comes late past the count check: Elasticsearch's answers, or the requests on their way to it. */
type Slow = 'answers' | 'requests';

/**
 * Spawns `bookmeta reindex books` (its Elasticsearch through `proxy`) and SIGKILLs it `delayMs` after
 * it logs `message`. Answers whether the kill ended a live process (it died of the signal): a
 * reindex that had already run its course was not interrupted by it.
 */
async function killReindexAt(proxy: TcpProxy, message: string, delayMs: number, slow: Slow): Promise<boolean> {
  const child = spawn(
    process.execPath,
    ['--import', 'tsx', projectPath('loader', 'cli.ts'), 'reindex', 'books', '--batch-size', '20', '--max-rate', '400', '--no-progress'],
    { env: { ...world.env, ELASTICSEARCH_URL: proxy.url, LOG_LEVEL: 'info' }, cwd: projectPath(), stdio: ['ignore', 'ignore', 'pipe'] },
  );
  const exited = new Promise<NodeJS.Signals | null>((resolve) => child.on('exit', (_code, signal) => resolve(signal)));
  const lines = createInterface({ input: child.stderr });
  await new Promise<void>((resolve, reject) => {
    let seen = false;
    lines.on('line', (line) => {
      // Past the count check every answer of Elasticsearch (or every request) comes late, so the swap
      // and the drop of the old index after it take seconds: a kill after "alias swapped" meets a
      // reindex still running, and a request held on its way reaches Elasticsearch after the kill.
      if (line.includes('"msg":"counts checked"')) {
        if (slow === 'answers') proxy.delay(SLOW_AFTER_CHECK_MS);
        else proxy.holdRequests(SLOW_AFTER_CHECK_MS);
      }
      if (!seen && line.includes(`"msg":"${message}"`)) {
        seen = true;
        setTimeout(resolve, delayMs);
      }
    });
    // A reindex that runs its course logs every awaited message, so ending without it means it failed:
    // there would be nothing left to kill. 'close' comes after stderr ended, so after its last line.
    child.on('close', (code, signal) => {
      if (!seen) reject(new Error(`reindex exited (${signal ?? `code ${code}`}) before "${message}"`));
    });
  });
  child.kill('SIGKILL');
  const signal = await exited;
  proxy.delay(0);
  proxy.holdRequests(0);
  return signal === 'SIGKILL';
}

const SLOW_AFTER_CHECK_MS = 1_000;

test.serial('kill -9 at any moment of a reindex loses nothing; the next reindex drops the leftover index', async (t) => {
  // Each phase at a moment of its own: after its message, a random part of the time it lasts.
  const moment = (upToMs: number) => Math.floor(Math.random() * upToMs);
  const phases: [string, number, Slow][] = [
    ['reindex started', moment(50), 'answers'], // index created, streaming starts
    ['reindex started', 400 + moment(400), 'answers'], // streaming
    // Under the sync lock: reading the alias's targets, then swapping (each answer late).
    ['counts checked', moment(3 * SLOW_AFTER_CHECK_MS), 'answers'],
    // The swap request sent (two held requests after the record) but not yet at Elasticsearch: it
    // takes effect after the kill, when the sync lock is free again.
    ['swap recorded', 2.25 * SLOW_AFTER_CHECK_MS + moment(SLOW_AFTER_CHECK_MS / 2), 'requests'],
    ['alias swapped', moment(SLOW_AFTER_CHECK_MS / 2), 'answers'], // swapped, old index not dropped yet
  ];
  const proxy = await TcpProxy.start(process.env.ELASTICSEARCH_URL ?? 'http://127.0.0.1:9200');
  t.teardown(() => proxy.close());
  await reindex(deps, 'all', { progress: false });
  for (const [message, delayMs, slow] of phases) {
    const [book] = await liveBooks(world.db, 1);
    const aliasBefore = await aliasTargets(deps.es, deps.aliases.books);
    await retitle(world.db, [book!.id], () => `Retitled Before Killed Reindex ${message} ${delayMs}`);
    t.true(await killReindexAt(proxy, message, delayMs, slow), `killed ${delayMs} ms after "${message}": the reindex was still running`);
    // Whatever phase it died in, the alias points at one complete index and search answers.
    const targets = await aliasTargets(deps.es, deps.aliases.books);
    t.is(targets.length, 1);
    const { count } = await deps.es.count({ index: deps.aliases.books });
    t.true(count > 0);
    const leftovers = await strayIndices(deps.es, deps.aliases.books);
    t.log(
      `killed ${delayMs} ms after "${message}": alias ${targets[0] === aliasBefore[0] ? 'kept' : 'swapped'}, ${leftovers.length} leftover indices`,
    );
    await retitle(world.db, [book!.id], () => `Retitled After Killed Reindex ${message} ${delayMs}`);
    await syncOnce(deps);
    // Whatever the dead reindex had sent takes effect before the indices are judged.
    await proxy.requestsDelivered();
    if (slow === 'requests') await sleep(SLOW_AFTER_CHECK_MS);
    await assertIndexMatches(t, deps);
  }
  const rerun = await runCli(world.env, ['reindex', 'books', '--no-progress']);
  t.is(rerun.code, 0, rerun.stderr);
  t.deepEqual(await strayIndices(deps.es, deps.aliases.books), []);
  await syncOnce(deps);
  await assertIndexMatches(t, deps);
});

test('progress: one updating line with docs/s and ETA on a terminal, plain lines elsewhere', (t) => {
  const { line, bar } = progressLine('reindex books', 250, 1000, 5);
  t.is(line, 'reindex books: 250/1000 (25.0%) 50 docs/s ETA 15s elapsed 5s');
  t.is(bar, `[${'#'.repeat(6)}${'-'.repeat(18)}]`);
  t.is(formatDuration(3725), '1h02m');

  const written: string[] = [];
  const fake = (isTTY: boolean) => ({ isTTY, write: (text: string) => written.push(text) }) as unknown as NodeJS.WriteStream;
  const onTerminal = createProgress({ label: 'x', total: 10, stream: fake(true) });
  onTerminal.add(5);
  onTerminal.finish();
  t.true(written.every((text) => text.startsWith('\r')));
  t.true(written.at(-1)!.endsWith('\n'));
  written.length = 0;
  const inLogs = createProgress({ label: 'x', total: 10, stream: fake(false), plainEverySeconds: 3600 });
  inLogs.add(5);
  inLogs.add(5);
  inLogs.finish();
  t.is(written.length, 2); // the first line at once, then the final one
  t.true(written.every((text) => !text.includes('\r') && text.endsWith('\n')));
  t.regex(written[1]!, /x: 10\/10 \(100.0%\) \d+ docs\/s ETA 0s elapsed 0s done/);
});

test.serial('reindex merges and warms the new index before its alias moves to it', async (t) => {
  // The sample catalogue has no subjects: a few books get one, so that a subject's page has something to read.
  const subjected = await liveBooks(world.db, 3);
  await withTransaction(world.db, async (client) => {
    await client.query('update books set subjects = $2 where id = any(entity_keys($1))', [
      subjected.map((book) => book.id),
      ['Fantasy fiction'],
    ]);
    await recordChanges(
      client,
      subjected.map((book) => ({ entity: 'book' as const, id: book.id, operation: 'update' as const })),
    );
  });
  const beforeSwap: { segments: number; queries: number; aliased: boolean }[] = [];
  const results = await reindex(deps, 'books', {
    progress: false,
    hooks: {
      beforeSwap: async (_kind, index) => {
        const stats = await deps.es.indices.stats({ index, metric: ['segments', 'search'] });
        beforeSwap.push({
          segments: stats._all.primaries?.segments?.count ?? -1,
          queries: stats._all.primaries?.search?.query_total ?? 0,
          aliased: (await aliasTargets(deps.es, deps.aliases.books)).includes(index),
        });
      },
    },
  });
  // Only the warm-up can have searched the new index: clients reach it through the alias, not yet on it.
  const [ready] = beforeSwap;
  t.false(ready!.aliased);
  t.true(ready!.queries > 0, 'warmed by queries before the swap');
  t.true(ready!.segments >= 1 && ready!.segments <= MERGED_SEGMENTS, `${ready!.segments} segments before the swap`);
  t.true(results[0]!.segments >= 1 && results[0]!.segments <= MERGED_SEGMENTS, `${results[0]!.segments} segments at the swap`);

  const run = await runCli({ ...world.env, LOG_LEVEL: 'info' }, ['reindex', 'all', '--no-progress']);
  t.is(run.code, 0, run.stderr);
  const lines = run.stderr
    .split('\n')
    .filter((line) => line.startsWith('{'))
    .map((line) => JSON.parse(line) as { msg: string; index?: string; segments?: number; queries?: number; kinds?: WarmQueries });
  for (const result of await Promise.all([deps.aliases.books, deps.aliases.authors].map((alias) => aliasTargets(deps.es, alias)))) {
    const index = result[0]!;
    const steps = lines.filter((line) => line.index === index);
    t.deepEqual(
      steps.map((line) => line.msg).filter((msg) => ['reindex started', 'merged', 'warmed', 'alias swapped'].includes(msg)),
      ['reindex started', 'merged', 'warmed', 'alias swapped'],
      index,
    );
    const warmed = steps.find((line) => line.msg === 'warmed')!;
    t.true(warmed.queries! > 0, `${index} warmed by ${warmed.queries} queries`);
    // Every kind of request the API sends to that index has been run on it.
    const kinds = index.startsWith(deps.aliases.books) ? ['search', 'match', 'suggest', 'subject'] : ['search', 'suggest'];
    t.deepEqual(
      kinds.filter((kind) => (warmed.kinds?.[kind as keyof WarmQueries] ?? 0) > 0),
      kinds,
      `${index} warmed by ${JSON.stringify(warmed.kinds)}`,
    );
    const swapped = steps.find((line) => line.msg === 'alias swapped')!;
    t.true(swapped.segments! >= 1 && swapped.segments! <= MERGED_SEGMENTS, `${index}: ${swapped.segments} segments at the swap`);
  }
});

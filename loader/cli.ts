#!/usr/bin/env node
import { Command, InvalidArgumentError, Option } from 'commander';
import { loadConfig, type Config } from '../src/config.js';
import { createLogger, type Logger } from '../src/log.js';
import { startServer } from '../src/server.js';
import { changeKeyOrigins, issueApiKey, keyOrigins } from '../src/services/apiKeys.js';
import { listApiKeys, revokeApiKey } from '../src/stores/postgres/apiKeys.js';
import { ensureDatabase, migrate } from '../src/stores/postgres/migrate.js';
import { createPool, type Pool } from '../src/stores/postgres/pool.js';
import { usageReport } from '../src/stores/postgres/usage.js';
import { formatTable } from '../src/table.js';
import { connectRedis } from '../src/stores/redis/client.js';
import { ResponseCache } from '../src/stores/redis/responseCache.js';
import { bookCrossing } from './import/bookCrossing.js';
import { goodbooks } from './import/goodbooks.js';
import { importCatalogue, type CatalogueSource } from './import/importer.js';
import { formatImportReport, importSummary } from './import/report.js';
import { ENTITY_KINDS, type EntityKind } from '../src/domain/ids.js';
import { merge } from '../src/services/merge.js';
import { regroupWorks } from './import/regroup.js';
import { resolveAuthors } from './import/authors.js';
import { createElastic, indexAliases } from '../src/stores/elasticsearch/client.js';
import { importRatings } from './import/ratings.js';
import { importOpenLibrary } from './import/openlibrary/import.js';
import { OL_BATCH, OL_METHODS, type OlMethod } from './import/openlibrary/options.js';
import { reindex, type ReindexTarget } from './index/reindex.js';
import { ensureAliases, follow, syncOnce, type LoaderDeps } from './index/sync.js';
import { formatLoaderStatus, loaderStatus } from './index/status.js';
import { serveSyncMetrics } from './index/syncMetrics.js';

/** `bookmeta`: every operator command. Each honours DATABASE_URL, REDIS_URL and ELASTICSEARCH_URL. */

const config: Config = loadConfig();
const log: Logger = createLogger(config.logLevel);

/** Opens a migrated database for one command and closes it afterwards. */
async function withDatabase<T>(work: (db: Pool) => Promise<T> | T): Promise<T> {
  await ensureDatabase(config.databaseUrl);
  const db = createPool(config.databaseUrl, 4);
  try {
    await migrate(db);
    return await work(db);
  } finally {
    await db.end();
  }
}

/** A repeatable option's values, in the order given. */
const collect = (value: string, previous: string[]): string[] => [...previous, value];

/**
 * The response cache, for commands that change records and must drop their cached answers. Without
 * Redis the command still runs (warned): cached answers then expire on their own within 24 hours.
 */
async function withCache<T>(work: (cache: ResponseCache | null) => Promise<T>): Promise<T> {
  const redis = await connectRedis(config.redisUrl).catch((error: unknown) => {
    log.warn({ err: error }, 'Redis unreachable: cached answers of changed records will not be dropped');
    return null;
  });
  try {
    return await work(redis ? new ResponseCache(redis, config.redisPrefix) : null);
  } finally {
    await redis?.quit().catch(() => undefined);
  }
}

/** PostgreSQL (migrated) and Elasticsearch for one loader command. */
function withLoader<T>(work: (deps: LoaderDeps) => Promise<T>): Promise<T> {
  return withDatabase(async (db) => {
    const es = createElastic(config.elasticsearchUrl);
    try {
      return await work({ db, es, aliases: indexAliases(config.indexPrefix), log, shape: config.indexShape });
    } finally {
      await es.close();
    }
  });
}

/** withLoader with the response cache: for commands that change what the indices answer (answersChanged). */
const withIndexWriter = <T>(work: (deps: LoaderDeps) => Promise<T>): Promise<T> =>
  withLoader((deps) => withCache((cache) => work({ ...deps, cache })));

function positive(text: string): number {
  const value = Number(text);
  if (!Number.isInteger(value) || value <= 0) throw new InvalidArgumentError(`not a positive integer: ${text}`);
  return value;
}

/** An AbortSignal that fires on the first SIGTERM or SIGINT. */
function stopSignal(): AbortSignal {
  const controller = new AbortController();
  for (const signal of ['SIGTERM', 'SIGINT'] as const) {
    process.once(signal, () => {
      log.info({ signal }, 'stopping after the current page');
      controller.abort();
    });
  }
  return controller.signal;
}

function date(text: string): Date {
  const value = new Date(text);
  if (Number.isNaN(value.getTime())) throw new InvalidArgumentError(`not a date: ${text}`);
  return value;
}

const program = new Command('bookmeta').description('Book metadata service: API server and operator commands').showHelpAfterError();

program
  .command('serve')
  .description('run the API server (migrates first); stops gracefully on SIGTERM or SIGINT')
  .action(async () => {
    const serverLog = createLogger(config.logLevel, { buffered: true });
    const server = await startServer(config, serverLog);
    for (const signal of ['SIGTERM', 'SIGINT'] as const) {
      process.once(signal, () => {
        server.stop().then(
          () => process.exit(0),
          (error: unknown) => {
            serverLog.error({ err: error }, 'unclean stop');
            process.exit(1);
          },
        );
      });
    }
  });

program
  .command('migrate')
  .description('create the database if needed and apply pending migrations')
  .action(() =>
    withDatabase(() => {
      console.log('database is up to date');
    }),
  );

const keys = program.command('keys').description('issue, list and revoke API keys');
keys
  .command('create')
  .description('issue a key; it is printed once, alone on the last line')
  .requiredOption('--name <name>', 'who or what the key is for')
  .option('--origin <origin>', 'a web origin whose pages may use the key from a browser (CORS); repeat for several', collect, [])
  .action(({ name, origin }: { name: string; origin: string[] }) =>
    withDatabase(async (db) => {
      const { kid, key } = await issueApiKey(db, name, origin);
      const where = origin.length > 0 ? ` (browser pages of ${keyOrigins(origin).join(', ')})` : '';
      console.log(`created key ${kid} for "${name}"${where}; store it now, it cannot be shown again:`);
      console.log(key);
    }),
  );
keys
  .command('origins')
  .description(
    'replace the web origins whose browser pages may use a key; none given: server-side only (running servers follow within 5 seconds)',
  )
  .argument('<kid>', 'the key id (the part after svc_live_)')
  .option('--origin <origin>', 'a web origin, e.g. https://shelf.example; repeat for several', collect, [])
  .action((kid: string, { origin }: { origin: string[] }) =>
    withDatabase(async (db) => {
      if (!(await changeKeyOrigins(db, kid, origin))) {
        console.error(`no key with kid ${kid}`);
        process.exitCode = 1;
        return;
      }
      console.log(
        origin.length > 0 ? `key ${kid} may be used by pages of ${keyOrigins(origin).join(', ')}` : `key ${kid} is server-side only`,
      );
    }),
  );
keys
  .command('list')
  .description('show kid, name, created, revoked and origins of every key')
  .action(() =>
    withDatabase(async (db) => {
      const rows = await listApiKeys(db);
      console.log(
        formatTable(
          ['kid', 'name', 'created', 'revoked', 'origins'],
          rows.map((row) => [row.kid, row.name, row.createdAt.toISOString(), row.revokedAt?.toISOString() ?? '', row.origins.join(' ')]),
        ),
      );
    }),
  );
keys
  .command('revoke')
  .description('revoke a key; running servers refuse it within 5 seconds')
  .argument('<kid>', 'the key id (the part after svc_live_)')
  .action((kid: string) =>
    withDatabase(async (db) => {
      if (!(await revokeApiKey(db, kid))) {
        console.error(`no key with kid ${kid}`);
        process.exitCode = 1;
        return;
      }
      console.log(`revoked ${kid}`);
    }),
  );

const importCommand = program.command('import').description('load catalogue data from files');
const sources: Record<string, CatalogueSource> = { goodbooks, 'book-crossing': bookCrossing };
for (const [name, source] of Object.entries(sources)) {
  importCommand
    .command(name)
    .description(`import a ${name} books CSV (streamed, idempotent; bad rows are reported, never fatal)`)
    .argument('<file>', 'path of the CSV file')
    .action((file: string) =>
      withDatabase((db) =>
        withCache(async (cache) => {
          const report = await importCatalogue(source, file, { db, cache, log }, (progress) => {
            process.stderr.write(`\r${name}: ${progress.imported} rows imported`);
          });
          process.stderr.write('\n');
          console.log(formatImportReport(report));
          log.info({ command: `import ${name}`, reports: [importSummary(report)] }, 'import finished');
        }),
      ),
    );
}

importCommand
  .command('openlibrary')
  .description(
    'import Open Library dump files (.txt or .txt.gz; authors, works, editions or all types, in any order); records not newer than what was imported are skipped',
  )
  .argument('<files...>', 'paths of the dump files')
  .option('--batch-size <records>', 'records per transaction', positive, OL_BATCH)
  .option('--no-progress', 'no progress bar or progress lines')
  .addOption(
    new Option(
      '--method <method>',
      'set-based (auto, the default, is the same): into a catalogue without Open Library records a first load in one transaction, else a re-import that applies only new and newer records; record-by-record: every record, batch by batch',
    )
      .choices(OL_METHODS)
      .default('auto'),
  )
  .action((files: string[], options: { batchSize: number; progress: boolean; method: OlMethod }) =>
    withDatabase((db) =>
      withCache(async (cache) => {
        const reports = await importOpenLibrary(files, { db, cache, log }, options);
        for (const report of reports) console.log(formatImportReport(report));
        log.info({ command: 'import openlibrary', reports: reports.map(importSummary) }, 'import finished');
      }),
    ),
  );

importCommand
  .command('ratings')
  .description('import Book-Crossing ratings (User-ID, ISBN, Book-Rating); derives "also liked" and records changes for sync')
  .argument('<file>', 'path of the CSV file')
  .action((file: string) =>
    withDatabase((db) =>
      withCache(async (cache) => {
        const report = await importRatings(
          file,
          { db, log, cache },
          {
            onProgress: (progress) => process.stderr.write(`\rratings: ${progress.imported} rows imported`),
          },
        );
        process.stderr.write('\n');
        console.log(formatImportReport(report));
        console.log(
          `also liked: ${report.alsoLiked.books} books have a list; ${report.alsoLiked.changed.length} lists changed (run \`bookmeta sync\` to index them)`,
        );
        const alsoLiked = { books: report.alsoLiked.books, changed: report.alsoLiked.changed.length };
        log.info({ command: 'import ratings', reports: [{ ...importSummary(report), alsoLiked }] }, 'import finished');
      }),
    ),
  );

program
  .command('reindex')
  .description('rebuild indices from PostgreSQL into new physical indices and swap the aliases (search keeps answering)')
  .argument(
    '[target]',
    'books, authors or all',
    (value: string) => {
      if (!['books', 'authors', 'all'].includes(value)) throw new InvalidArgumentError('must be books, authors or all');
      return value as ReindexTarget;
    },
    'all',
  )
  .option('--batch-size <rows>', 'rows per cursor read', positive, 2000)
  .option('--concurrency <requests>', 'bulk requests in flight', positive, 2)
  .option('--bulk-mb <megabytes>', 'size of one bulk request', positive, 5)
  .option('--max-rate <docs>', 'documents per second at most', positive)
  .option('--no-progress', 'no progress bar or progress lines')
  .action(
    (target: ReindexTarget, options: { batchSize: number; concurrency: number; bulkMb: number; maxRate?: number; progress: boolean }) =>
      withIndexWriter(async (deps) => {
        const results = await reindex(deps, target, { ...options, maxBytes: options.bulkMb * 1024 * 1024 });
        console.log(
          formatTable(
            ['alias', 'index', 'documents', 'docs/s', 'complete up to seq', 'seconds', 'dropped'],
            results.map((result) => [
              result.alias,
              result.index,
              String(result.count),
              String(Math.round(result.docsPerSecond)),
              String(result.completeUpTo),
              result.seconds.toFixed(1),
              result.dropped.join(', '),
            ]),
          ),
        );
        log.info({ command: 'reindex', results }, 'reindex finished');
      }),
  );

program
  .command('sync')
  .description('apply the change sequence after the checkpoint to the indices; --follow keeps tailing it')
  .option('--follow', 'keep following until SIGTERM or SIGINT')
  .option('--page-size <changes>', 'changes per page', positive, 1000)
  .option('--poll-ms <ms>', 'pause between polls when idle (follow)', positive, 100)
  .action((options: { follow?: boolean; pageSize: number; pollMs: number }) =>
    withIndexWriter(async (deps) => {
      const signal = stopSignal();
      if (options.follow) {
        const metrics =
          config.syncMetricsPort === null ? null : await serveSyncMetrics(deps.db, config.metricsHost, config.syncMetricsPort, log);
        log.info('sync following the change sequence');
        const result = await follow(deps, { pageSize: options.pageSize, pollMs: options.pollMs, signal, ...metrics?.hooks }).finally(() =>
          metrics?.close(),
        );
        console.log(`sync stopped at seq ${result.checkpoint}: ${result.changes} changes applied`);
        return;
      }
      await ensureAliases(deps);
      const result = await syncOnce(deps, { pageSize: options.pageSize, signal });
      console.log(`sync at seq ${result.checkpoint}: ${result.changes} changes applied in ${result.pages} pages`);
    }),
  );

program
  .command('loader')
  .description('the search index loader')
  .command('status')
  .description('sync checkpoint, lag, alias targets and document counts against PostgreSQL')
  .option('--json', 'print JSON instead of text')
  .action((options: { json?: boolean }) =>
    withLoader(async (deps) => {
      const status = await loaderStatus(deps);
      console.log(options.json ? JSON.stringify(status, null, 2) : formatLoaderStatus(status));
    }),
  );

program
  .command('merge')
  .description('merge FROM into INTO: FROM becomes a redirect, what hung on it moves to INTO (idempotent)')
  .argument('<kind>', `one of ${ENTITY_KINDS.join(', ')}`, (value: string) => {
    if (!ENTITY_KINDS.includes(value as EntityKind)) throw new InvalidArgumentError(`must be one of ${ENTITY_KINDS.join(', ')}`);
    return value as EntityKind;
  })
  .argument('<from>', 'id of the entity that goes away')
  .argument('<into>', 'id of the surviving entity')
  .action((kind: EntityKind, from: string, into: string) =>
    withDatabase((db) =>
      withCache(async (cache) => {
        const outcome = await merge(db, cache, kind, from, into);
        if ('refused' in outcome) {
          console.error(`refused: ${outcome.refused}`);
          process.exitCode = 1;
        } else if ('alreadyDone' in outcome) {
          console.log(`${kind} ${from} is already merged into ${into}; nothing to do`);
        } else {
          console.log(`merged ${kind} ${from} into ${into} (${outcome.changes.length} changes recorded)`);
        }
      }),
    ),
  );

program
  .command('regroup')
  .description(
    "merge works that today's grouping rule makes one (edition labels aside) and mark boxsets, omnibuses and companions (idempotent)",
  )
  .action(() =>
    withDatabase((db) =>
      withCache(async (cache) => {
        const outcome = await regroupWorks(db, cache);
        console.log(`regrouped works: ${outcome.merged} merged into others, ${outcome.revised} revised (key, title or kind)`);
      }),
    ),
  );

program
  .command('resolve-authors')
  .description(
    'merge author records of one writer that sources keep apart: tied by a shared book or work and names that can be one person (idempotent)',
  )
  .action(() =>
    withDatabase((db) =>
      withCache(async (cache) => {
        const outcome = await resolveAuthors(db, cache);
        console.log(`resolved authors: ${outcome.authors} merged into others; ${outcome.works} works merged that their authors now share`);
      }),
    ),
  );

program
  .command('usage')
  .description('calls per key per day and route')
  .option('--kid <kid>', 'only this key')
  .option('--since <date>', 'from this date or time (inclusive)', date)
  .option('--until <date>', 'up to this date or time (exclusive)', date)
  .option('--json', 'print JSON instead of a table')
  .action((options: { kid?: string; since?: Date; until?: Date; json?: boolean }) =>
    withDatabase(async (db) => {
      const lines = await usageReport(db, options);
      if (options.json) {
        console.log(JSON.stringify(lines, null, 2));
        return;
      }
      console.log(
        formatTable(
          ['day', 'kid', 'route', 'calls', 'errors'],
          lines.map((line) => [line.day, line.kid, line.route, String(line.calls), String(line.errors)]),
        ),
      );
    }),
  );

program.parseAsync().catch((error: unknown) => {
  console.error(`bookmeta: ${error instanceof Error ? error.message : String(error)}`);
  process.exitCode = 1;
});

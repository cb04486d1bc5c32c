import type { ExecutionContext, TestFn } from 'ava';
import { createElastic, indexAliases, type Elastic } from '../../src/stores/elasticsearch/client.js';
import { authorDocuments, bookDocuments } from '../../loader/stores/elasticsearch/documents.js';
import { createLogger } from '../../src/log.js';
import { reindex } from '../../loader/index/reindex.js';
import type { LoaderDeps } from '../../loader/index/sync.js';
import { loadSampleCatalogue } from './catalogue.js';
import { createWorld, type TestWorld } from './env.js';

/** The loader's dependencies for a test world (its own index prefix), and a way to drop its indices. */
export function loaderDeps(world: TestWorld): LoaderDeps & { close(): Promise<void> } {
  const es = createElastic(world.config.elasticsearchUrl);
  return {
    db: world.db,
    es,
    aliases: indexAliases(world.config.indexPrefix),
    log: createLogger('silent'),
    cache: world.cache,
    async close() {
      await es.indices
        .delete({ index: `${world.config.indexPrefix}*`, ignore_unavailable: true, allow_no_indices: true })
        .catch(() => undefined);
      await es.close();
    },
  };
}

export type TestLoaderDeps = ReturnType<typeof loaderDeps>;

/** A world holding the sample catalogue, with the loader's dependencies for it. */
export interface IndexedWorld {
  world: TestWorld;
  deps: TestLoaderDeps;
}

/**
 * A world with the sample catalogue and the loader's dependencies, set up once for a test file (and,
 * with `reindex`, its indices built): the usual start of an indexing test. Its before hook is serial, so
 * before hooks declared after this call start only once the world is ready (ava otherwise runs hooks
 * concurrently).
 *
 * `world` and `deps` are filled in place by the before hook, so they can be destructured at module
 * level (`const { world, deps } = useIndexedWorld(test)`) and used in helpers and tests.
 */
export function useIndexedWorld(test: TestFn, options: { reindex?: boolean } = {}): IndexedWorld {
  const fixture: IndexedWorld = { world: {} as TestWorld, deps: {} as TestLoaderDeps };
  test.serial.before(async () => {
    Object.assign(fixture.world, await createWorld());
    Object.assign(fixture.deps, loaderDeps(fixture.world));
    await loadSampleCatalogue(fixture.world);
    if (options.reindex) await reindex(fixture.deps, 'all', { progress: false });
  });
  test.after.always(async () => {
    // Either may still be empty if the before hook failed early.
    await fixture.deps.close?.();
    await fixture.world.destroy?.();
  });
  return fixture;
}

/** Every document of an index or alias, by id (refreshed first). */
export async function allDocuments<T = Record<string, unknown>>(es: Elastic, index: string): Promise<Map<string, T>> {
  await es.indices.refresh({ index });
  const found = new Map<string, T>();
  let response = await es.search<T>({ index, size: 1000, scroll: '1m', sort: ['_doc'], query: { match_all: {} } });
  while (response.hits.hits.length > 0) {
    for (const hit of response.hits.hits) found.set(hit._id!, hit._source!);
    response = await es.scroll<T>({ scroll_id: response._scroll_id!, scroll: '1m' });
  }
  if (response._scroll_id) await es.clearScroll({ scroll_id: response._scroll_id }).catch(() => undefined);
  return found;
}

function withoutSeq(document: Record<string, unknown>): Record<string, unknown> {
  const { updated_seq: _seq, ...rest } = document;
  return rest;
}

/**
 * Proves PostgreSQL and Elasticsearch agree: every live book and author is indexed with exactly the
 * document PostgreSQL gives now (all but updated_seq), and nothing else is indexed.
 */
export async function assertIndexMatches(t: ExecutionContext, deps: LoaderDeps): Promise<void> {
  for (const kind of ['books', 'authors'] as const) {
    const indexed = await allDocuments<Record<string, unknown>>(deps.es, deps.aliases[kind]);
    const { rows } = await deps.db.query<{ id: string }>(
      `select public_id(e.id) as id from ${kind} e where e.merged_into is null order by e.id`,
    );
    const ids = rows.map((row) => row.id);
    const built = kind === 'books' ? await bookDocuments(deps.db, ids, 0) : await authorDocuments(deps.db, ids, 0);
    const missing = ids.filter((id) => !indexed.has(id));
    const extra = [...indexed.keys()].filter((id) => !ids.includes(id));
    t.deepEqual(missing, [], `${kind}: live in PostgreSQL but not indexed`);
    t.deepEqual(extra, [], `${kind}: indexed but not live in PostgreSQL`);
    const stale = built
      .filter(
        (doc) =>
          JSON.stringify(withoutSeq(indexed.get(doc.id) ?? {})) !==
          JSON.stringify(withoutSeq(JSON.parse(doc.json) as Record<string, unknown>)),
      )
      .map((doc) => doc.id);
    t.deepEqual(stale, [], `${kind}: indexed document differs from PostgreSQL`);
  }
}

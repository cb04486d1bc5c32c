import { reindex } from '../../loader/index/reindex.js';
import type { RunningServer } from '../../src/server.js';
import type { MatchResult } from '../../src/services/match.js';
import { loadSampleCatalogue } from './catalogue.js';
import { patientFetch } from './client.js';
import { createWorld, newKey, PRODUCTION_STORE_WAIT, startTestServer, type TestWorld } from './env.js';
import { loaderDeps } from './indexing.js';

/**
 * A world for the search, match and recommendation tests: the sample catalogue in PostgreSQL (plus
 * whatever `prepare` adds), both indices built by the indexer's own reindex, so the tests see exactly
 * the documents production sees, and an API server with a key and a rate limit out of the way. The
 * server waits for its stores as long as production does; `get` and `post` ask it as a careful
 * client does (patientFetch). A file whose requests take other ways passes GENEROUS_STORE_WAIT as
 * `env`, and says why.
 */
export interface SearchWorld {
  world: TestWorld;
  server: RunningServer;
  get(path: string): Promise<Response>;
  post(path: string, body: string): Promise<Response>;
  close(): Promise<void>;
}

export async function openSearchWorld(
  prepare: (world: TestWorld) => Promise<void> = () => Promise.resolve(),
  env: NodeJS.ProcessEnv = PRODUCTION_STORE_WAIT,
): Promise<SearchWorld> {
  const world = await createWorld(env);
  const deps = loaderDeps(world);
  const ask = patientFetch();
  try {
    await loadSampleCatalogue(world);
    await prepare(world);
    await reindex(deps, 'all', { progress: false });
    const server = await startTestServer(world, { rateLimitMax: 1_000_000 });
    const { auth } = await newKey(world);
    return {
      world,
      server,
      get: (path) => ask(`${server.url}${path}`, { headers: auth, redirect: 'manual' }),
      post: (path, body) => ask(`${server.url}${path}`, { method: 'POST', headers: { ...auth, 'Content-Type': 'application/json' }, body }),
      async close() {
        await server.stop();
        await deps.close();
        await world.destroy();
      },
    };
  } catch (error) {
    await deps.close();
    await world.destroy();
    throw error;
  }
}

/** POST /v1/match with a record; anything but a 200 fails the test with the answer. */
export async function matchRecord(search: SearchWorld, body: Record<string, unknown>): Promise<MatchResult> {
  const response = await search.post('/v1/match', JSON.stringify(body));
  if (response.status !== 200) throw new Error(`${JSON.stringify(body)}: ${response.status} ${await response.text()}`);
  return (await response.json()) as MatchResult;
}

import { reindex } from '../../loader/index/reindex.js';
import type { TestWorld } from './env.js';
import { loaderDeps } from './indexing.js';

/**
 * Builds the books and authors indices of a world from its PostgreSQL catalogue with the indexer's
 * own reindex, so search tests see exactly the documents production sees. Returns the function that
 * drops the world's indices again.
 */
export async function indexWorld(world: TestWorld): Promise<() => Promise<void>> {
  const deps = loaderDeps(world);
  try {
    await reindex(deps, 'all', { progress: false });
  } catch (error) {
    await deps.close();
    throw error;
  }
  return () => deps.close();
}

import test from 'ava';
import { reindex } from '../loader/index/reindex.js';
import { ensureAliases } from '../loader/index/sync.js';
import { aliasTargets } from '../loader/stores/elasticsearch/indices.js';
import { useIndexedWorld } from './helpers/indexing.js';
import { runCli } from './helpers/processes.js';

const { world, deps } = useIndexedWorld(test);

async function shapeOf(alias: string): Promise<{ shards: string; replicas: string }> {
  const [index] = await aliasTargets(deps.es, alias);
  const settings = await deps.es.indices.getSettings({ index: index! });
  const { number_of_shards: shards, number_of_replicas: replicas } = settings[index!]!.settings!.index!;
  return { shards: String(shards), replicas: String(replicas) };
}

test.serial('indices are built in the shape the loader is given: shards, and replicas once the bulk load is done', async (t) => {
  const shaped = { ...deps, shape: { shards: 2, replicas: 1 } };
  await ensureAliases(shaped);
  t.deepEqual(await shapeOf(deps.aliases.authors), { shards: '2', replicas: '1' });
  await reindex(shaped, 'books', { progress: false });
  t.deepEqual(await shapeOf(deps.aliases.books), { shards: '2', replicas: '1' });
});

test.serial('without a shape, an index has one shard and no replica', async (t) => {
  await reindex({ ...deps, shape: undefined }, 'authors', { progress: false });
  t.deepEqual(await shapeOf(deps.aliases.authors), { shards: '1', replicas: '0' });
});

test.serial('bookmeta reindex builds its indices in the shape INDEX_SHARDS and INDEX_REPLICAS give', async (t) => {
  const cli = await runCli({ ...world.env, INDEX_SHARDS: '3', INDEX_REPLICAS: '1' }, ['reindex', 'authors', '--no-progress']);
  t.is(cli.code, 0, cli.stderr);
  t.deepEqual(await shapeOf(deps.aliases.authors), { shards: '3', replicas: '1' });
});

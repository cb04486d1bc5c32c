import pg from 'pg';
import { reindex } from '../../../loader/index/reindex.js';
import { loadConfig, type Config } from '../../../src/config.js';
import { createLogger } from '../../../src/log.js';
import { buildServices, closeServices } from '../../../src/wiring.js';
import type { Services } from '../../../src/services/context.js';
import { createElastic, indexAliases } from '../../../src/stores/elasticsearch/client.js';
import type { Pool } from '../../../src/stores/postgres/pool.js';
import { ADMIN_URL, benchDatabase } from '../../lib/bench.js';

/**
 * A named scratch catalogue for the quality evaluations (scripts/eval/*.ts): its own PostgreSQL
 * database and index prefix, loaded and indexed once, then reused by later runs unless `fresh`
 * (loading and indexing take minutes; the queries take seconds). EVAL_WORLD_SUFFIX, when set, is
 * added to the name, so that two checkouts on one machine keep their catalogues apart.
 */
export interface EvalWorld {
  config: Config;
  /** The API's services over this world, the short cache off so every query is computed. */
  services: Services;
  close(): Promise<void>;
}

async function isLoaded(config: Config, name: string): Promise<boolean> {
  const admin = new pg.Client({ connectionString: ADMIN_URL });
  await admin.connect();
  const { rowCount } = await admin.query('select 1 from pg_database where datname = $1', [name]).finally(() => admin.end());
  if (rowCount === 0) return false;
  const elastic = createElastic(config.elasticsearchUrl);
  try {
    return await elastic.indices.existsAlias({ name: Object.values(indexAliases(config.indexPrefix)) });
  } finally {
    await elastic.close();
  }
}

export async function openEvalWorld(base: string, fresh: boolean, load: (db: Pool) => Promise<void>): Promise<EvalWorld> {
  const name = `${base}${process.env.EVAL_WORLD_SUFFIX ?? ''}`;
  if (!/^[a-z0-9_]+$/u.test(name)) throw new Error(`an evaluation catalogue is named in lower case, digits and _: "${name}"`);
  const url = new URL(ADMIN_URL);
  url.pathname = `/${name}`;
  const log = createLogger(process.env.LOG_LEVEL ?? 'warn');
  const config: Config = {
    // An evaluation measures answers, not outages: on a loaded machine a store may take longer than the API's bound.
    ...loadConfig({
      STORE_WAIT_MS: '5000',
      ...process.env,
      DATABASE_URL: url.toString(),
      INDEX_PREFIX: `${name.replaceAll('_', '-')}-`,
      REDIS_PREFIX: `${name}:`,
    }),
    shortCacheTtlS: 0,
    meteringEnabled: false,
  };
  if (fresh || !(await isLoaded(config, name))) {
    const database = await benchDatabase(name);
    const elastic = createElastic(config.elasticsearchUrl);
    try {
      process.stderr.write(`loading ${name}...\n`);
      await load(database.db);
      await database.db.query('analyze'); // fresh statistics, or the planner scans authors once per book
      await reindex({ db: database.db, es: elastic, aliases: indexAliases(config.indexPrefix), log }, 'all', { progress: true });
    } finally {
      await elastic.close();
      await database.db.end();
    }
  }
  const services = await buildServices(config, log);
  return { config, services, close: () => closeServices(services) };
}

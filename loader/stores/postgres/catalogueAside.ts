import type { PoolClient } from '../../../src/stores/postgres/pool.js';

/**
 * A first load into an empty catalogue builds its tables aside (loader/import/openlibrary/firstLoad.ts):
 * empty copies of the catalogue tables, without indexes, in a schema of the load's own transaction
 * that is searched first, so every statement of the load after `setAside` (the set-based writes, the
 * record path, the popularity) reads and writes them while the API goes on reading the live, empty
 * ones. Their indexes and constraints are built once the rows are in (`indexAside`), and `swapIn`
 * puts them in the live tables' place just before the commit. A killed load takes the schema with
 * it. The definitions are the live tables' own, read from the catalog: nothing is declared twice.
 *
 * Built aside: the tables a load writes and every table whose foreign keys reference one of them (the
 * readers' signals, the author names...): all must be empty, and their dependants drop with them at
 * the swap. Writers to any of them wait for the load; readers never do, but for the swap itself.
 */

const SCHEMA = 'catalogue_aside';
// Room for the index builds' sorts, for this session only: the server's default is sized for a few
// concurrent sessions, and a build that fits it sorts in one pass.
const MAINTENANCE_WORK_MEM = '1GB';
// Waiting for the live tables at the swap: a reader holding one of them while waiting for another
// we hold would deadlock; past this the swap lets go of what it took and tries again.
const SWAP_LOCK_TIMEOUT = '200ms';

export interface Aside {
  /** The tables built aside, by name. */
  tables: string[];
  /** The live tables' schema, quoted, and the session's search path. */
  live: string;
  searchPath: string;
  /** Primary keys and unique constraints, then plain indexes, then foreign keys, each a statement on the aside tables. */
  builds: string[];
}

const quoted = (name: string): string => `"${name.replace(/"/g, '""')}"`;

/**
 * Sets the catalogue tables aside for `written` (names of tables in the current schema) and the
 * tables that reference them: answers null, having changed nothing, when one of them holds rows, or
 * when a view or a sequence depends on one (those would not follow the swap).
 */
export async function setAside(client: PoolClient, written: readonly string[]): Promise<Aside | null> {
  const { rows: tables } = await client.query<{ name: string; options: string[] | null }>(
    `with recursive aside(oid) as (
       select c.oid from pg_class c where c.relnamespace = current_schema()::regnamespace and c.relname = any($1)
       union
       select k.conrelid from pg_constraint k join aside a on k.confrelid = a.oid where k.contype = 'f')
     select c.relname as name, c.reloptions as options from pg_class c join aside a on a.oid = c.oid order by 1`,
    [written],
  );
  const names = tables.map((table) => table.name);
  const list = names.map(quoted).join(', ');
  // Writers wait for the load from here; readers go on. A load that writes in place lets go of the
  // locks again (rolling back to the savepoint does).
  await client.query('savepoint aside');
  await client.query(`lock table ${list} in share row exclusive mode`);
  const { rows: held } = await client.query<{ any: boolean }>(
    `select ${names.map((name) => `exists (select 1 from ${quoted(name)})`).join(' or ')} as any`,
  );
  const { rows: dependants } = await client.query<{ n: number }>(
    `select count(*)::int as n from pg_depend d
      where d.refobjid = any($1::regclass[])
        and (d.classid = 'pg_rewrite'::regclass
             or (d.classid = 'pg_class'::regclass and (select relkind from pg_class where oid = d.objid) = 'S'))`,
    [names],
  );
  if (held[0]!.any || dependants[0]!.n > 0) {
    await client.query('rollback to savepoint aside');
    return null;
  }
  await client.query('release savepoint aside');

  // Read before the search path changes: a foreign key's definition names its table unqualified.
  const { rows: definitions } = await client.query<{ kind: 'key' | 'index' | 'foreign' | 'trigger'; definition: string }>(
    `select case when k.contype = 'f' then 'foreign' else 'key' end as kind,
            format('alter table %I add constraint %I %s', c.relname, k.conname, pg_get_constraintdef(k.oid)) as definition
       from pg_constraint k join pg_class c on c.oid = k.conrelid
      where c.oid = any($1::regclass[]) and k.contype in ('p', 'u', 'x', 'f')
     union all
     select 'index', pg_get_indexdef(i.indexrelid) from pg_index i
      where i.indrelid = any($1::regclass[]) and not exists (select 1 from pg_constraint k where k.conindid = i.indexrelid)
     union all
     select 'trigger', pg_get_triggerdef(t.oid) from pg_trigger t where t.tgrelid = any($1::regclass[]) and not t.tgisinternal
     order by 1, 2`,
    [names],
  );
  const { rows: session } = await client.query<{ live: string; path: string }>(
    "select quote_ident(current_schema()) as live, current_setting('search_path') as path",
  );
  const { live, path } = session[0]!;
  // Index and trigger definitions name the live table, qualified: the same on the one aside.
  const onAside = (definition: string): string => {
    const at = definition.match(/ ON (\S+)\.(\S+) (USING|FOR|EXECUTE|REFERENCING)/);
    if (!at || at[1] !== live) throw new Error(`setAside: cannot place on the table aside: ${definition}`);
    return definition.replace(at[0], ` ON ${SCHEMA}.${at[2]} ${at[3]}`);
  };
  const ofKind = (kind: string) => definitions.filter((row) => row.kind === kind).map((row) => row.definition);

  await client.query(`create schema ${SCHEMA}`);
  for (const { name, options } of tables)
    await client.query(
      `create table ${SCHEMA}.${quoted(name)} (like ${live}.${quoted(name)} including all excluding indexes)${options ? ` with (${options.join(', ')})` : ''}`,
    );
  for (const trigger of ofKind('trigger')) await client.query(onAside(trigger));
  await client.query(`set local search_path = ${SCHEMA}, ${path}`);
  return { tables: names, live, searchPath: path, builds: [...ofKind('key'), ...ofKind('index').map(onAside), ...ofKind('foreign')] };
}

/** The indexes and constraints of the tables aside, each built once over all its rows. */
export async function indexAside(client: PoolClient, aside: Aside): Promise<void> {
  await client.query(`set local maintenance_work_mem = '${MAINTENANCE_WORK_MEM}'`);
  // A foreign key is checked with one anti-join, hashing the referenced table, whose keys are unique.
  await client.query('set local enable_hashjoin = on');
  for (const build of aside.builds) await client.query(build);
  await client.query('set local enable_hashjoin = off');
  await client.query('reset maintenance_work_mem');
}

/**
 * The tables aside in the live ones' place, in the caller's transaction: the live ones (empty, as
 * setAside found them) are dropped, the others take their schema, and the search path is the
 * session's again. Visible all at once at the commit; readers wait for it from here.
 */
export async function swapIn(client: PoolClient, aside: Aside): Promise<void> {
  await client.query(`set local search_path = ${aside.searchPath}`);
  const list = aside.tables.map(quoted).join(', ');
  await client.query(`set local lock_timeout = '${SWAP_LOCK_TIMEOUT}'`);
  await client.query('savepoint swap');
  for (;;) {
    try {
      await client.query(`lock table ${list} in access exclusive mode`);
      break;
    } catch (error) {
      if ((error as { code?: string }).code !== '55P03') throw error;
      await client.query('rollback to savepoint swap');
    }
  }
  await client.query('release savepoint swap');
  await client.query('reset lock_timeout');
  await client.query(`drop table ${list}`);
  for (const table of aside.tables) await client.query(`alter table ${SCHEMA}.${quoted(table)} set schema ${aside.live}`);
  await client.query(`drop schema ${SCHEMA}`);
}

import { idPrefix } from '../../../src/domain/ids.js';
import { MAX_REDIRECT_HOPS, olKeySuffix } from '../../../src/domain/openlibrary.js';
import type { WorkKind } from '../../../src/domain/titles.js';
import { lockChangeSequence } from '../../../src/stores/postgres/changes.js';
import type { PoolClient } from '../../../src/stores/postgres/pool.js';
import { copyText } from './copy.js';

/**
 * The SQL of an Open Library first load (loader/import/openlibrary/firstLoad.ts): records, already
 * mapped by domain/openlibrary.ts, are copied into a staging table, then every table is written with
 * one INSERT ... SELECT each. Everything runs in the caller's transaction; the staging tables are
 * temporary and go with it.
 *
 * Memory is bounded by design, whatever the dump's size or skew: each statement sets its own
 * work_mem, every sort and hash aggregate spills to disk past it, and joins whose inner side could
 * hold one key many times (an edition's work or author, an ISBN) are merge joins of sorted inputs
 * (hash joins are off for the whole transaction): a hash join cannot split a batch whose rows share
 * one key, so a popular work or a repeated ISBN would grow it past any limit.
 */

/** One staged record: the type decides which columns are filled. */
export interface StagedRecord {
  ord: number;
  file: number;
  line: number;
  type: 'author' | 'work' | 'edition' | 'redirect' | 'delete';
  key: string;
  revision: number;
  /** The new entity a record makes: author, work or book. */
  id?: string;
  /** Its identity key: name_key, work_key or source_key. */
  identity_key?: string;
  /** An edition that names no work: the id and key of its own. */
  own_work_id?: string | null;
  own_work_key?: string | null;
  digest?: string;
  redirect_to?: string;
  name?: string;
  bio?: string | null;
  birth_date?: string | null;
  death_date?: string | null;
  alternate_names?: string[];
  title?: string;
  subtitle?: string | null;
  /** A work's kind; an edition's, the kind of the work it makes (its own, or a placeholder): see keys.ts olWorkKind. */
  work_kind?: WorkKind;
  subjects?: string[] | null;
  description?: string | null;
  year?: number | null;
  /** As the catalogue stores it (see covers.ts). */
  cover_url?: string | null;
  work_key?: string | null;
  author_keys?: string[];
  isbn_13?: string | null;
  isbn_10?: string | null;
  series?: string | null;
  publisher?: string | null;
  language?: string | null;
  pages?: number | null;
  physical_format?: string | null;
  id_schemes?: string[];
  id_values?: string[];
}

export const STAGE_COLUMNS = [
  'ord',
  'file',
  'line',
  'type',
  'key',
  'revision',
  'id',
  'identity_key',
  'own_work_id',
  'own_work_key',
  'digest',
  'redirect_to',
  'name',
  'bio',
  'birth_date',
  'death_date',
  'alternate_names',
  'title',
  'subtitle',
  'work_kind',
  'subjects',
  'description',
  'year',
  'cover_url',
  'work_key',
  'author_keys',
  'isbn_13',
  'isbn_10',
  'series',
  'publisher',
  'language',
  'pages',
  'physical_format',
  'id_schemes',
  'id_values',
] as const satisfies readonly (keyof StagedRecord)[];

// Per statement: room to sort or hash a modest load in memory; a larger one spills to disk, so memory stays bounded at any size.
const WORK_MEM = '64MB';

/**
 * Prepares the session and transaction: asynchronous commit (a crash loses at most the load, which
 * then has not happened), temporary tables kept in memory up to `temp_buffers`, no hash joins. Must
 * be the first statements of the session's transaction, before any temporary table is touched.
 * The staged ids (id, own_work_id) are public ids, as stage.ts makes them; the writes read their
 * keys (entity_id, own_work_entity_id), parsed once per row as it is copied in.
 */
export async function beginFirstLoad(client: PoolClient): Promise<void> {
  await client.query("set temp_buffers = '256MB'");
  await client.query('begin');
  await client.query('set local synchronous_commit = off');
  await client.query(`set local work_mem = '${WORK_MEM}'`);
  await client.query('set local enable_hashjoin = off');
  await client.query(`create temp table ol_stage (
      ord bigint not null, file integer not null, line integer not null, type text not null, key text not null, revision integer not null,
      id text, entity_id bigint generated always as (entity_key(id)) stored, identity_key text,
      own_work_id text, own_work_entity_id bigint generated always as (entity_key(own_work_id)) stored, own_work_key text,
      digest bigint, redirect_to text,
      name text, bio text, birth_date text, death_date text, alternate_names text[],
      title text, subtitle text, work_kind text, subjects text[], description text, year integer, cover_url text,
      work_key text, author_keys text[], isbn_13 text, isbn_10 text, series text, publisher text, language text, pages integer,
      physical_format text, id_schemes text[], id_values text[], routed boolean not null default false
    ) on commit drop`);
}

/**
 * Whether the catalogue holds no Open Library key, decided under a lock that makes every other
 * importer of Open Library records wait for this transaction (readers are not blocked).
 */
export async function claimFirstLoad(client: PoolClient): Promise<boolean> {
  await client.query('lock table openlibrary_records in share row exclusive mode');
  const { rows } = await client.query<{ any: boolean }>('select exists (select 1 from openlibrary_records) as any');
  return !rows[0]!.any;
}

/** Staged records, as lines of COPY's text format (see copy.ts copyLines), in one COPY. */
export async function stageRecords(client: PoolClient, text: AsyncIterable<string>): Promise<void> {
  await copyText(client, 'ol_stage', STAGE_COLUMNS, text);
}

/**
 * The newest record of each key: of a key staged more than once, the highest revision stays, the
 * first line of it on a tie (a later line of the same revision is not newer). Answers how many went,
 * and the staging table's size.
 */
export async function keepNewest(client: PoolClient): Promise<{ dropped: number; stagedBytes: number }> {
  await client.query('create index on ol_stage (key)');
  await client.query('analyze ol_stage');
  const { rowCount } = await client.query(
    `with repeated as (select key from ol_stage group by key having count(*) > 1),
          newest as (select distinct on (s.key) s.ord from ol_stage s join repeated r on r.key = s.key order by s.key, s.revision desc, s.ord)
     delete from ol_stage s using repeated r where s.key = r.key and s.ord not in (select ord from newest)`,
  );
  const { rows } = await client.query<{ bytes: number }>("select pg_total_relation_size('ol_stage')::bigint as bytes");
  return { dropped: rowCount ?? 0, stagedBytes: rows[0]!.bytes };
}

/**
 * Editions the set-based writes cannot decide alone, marked `routed` for the record-by-record path:
 * those whose ISBN another staged edition repeats, or a book of the catalogue already has.
 */
export async function routeIsbnsTaken(client: PoolClient): Promise<{ file: number; line: number }[]> {
  await client.query(
    `update ol_stage s set routed = true
      where s.type = 'edition' and s.isbn_13 is not null
        and (s.isbn_13 in (select isbn_13 from ol_stage where type = 'edition' and isbn_13 is not null group by isbn_13 having count(*) > 1)
             or exists (select 1 from books b where b.isbn_13 = s.isbn_13))`,
  );
  const { rows } = await client.query<{ file: number; line: number }>('select file, line from ol_stage where routed order by ord');
  return rows;
}

/**
 * A load comes in two parts, each staged, written and emptied before the next is staged, so that the
 * staging table holds one part at a time: the records of author and work keys (authors, works, and
 * their redirects and deletes), then those of edition keys. Editions need the first part's entities
 * and redirects; the first part needs nothing of theirs but the placeholders they make.
 */
export type StagePart = 'authors and works' | 'editions';

/** The part a dump line's records belong to, from its key column (`/type/edition<TAB>/books/OL1M<TAB>...`); a line without one, to the first. */
export const partOfLine = (text: string): StagePart =>
  text.startsWith('/books/', text.indexOf('\t') + 1) ? 'editions' : 'authors and works';

// The key a reference lands on: one join per redirect followed, the last one found wins.
const HOPS = Array.from({ length: MAX_REDIRECT_HOPS }, (_, at) => at + 1);
const REDIRECT_HOPS = HOPS.map(
  (hop) => `left join ol_redirect h${hop} on h${hop}.key = ${hop === 1 ? 'r.key' : `h${hop - 1}.redirect_to`}`,
).join('\n');
const LANDING = `coalesce(${HOPS.map((hop) => `h${HOPS.length + 1 - hop}.redirect_to`).join(', ')}, r.key)`;

/** The tables a first load writes with one statement each (see writeAuthorsAndWorks, writeEditions). */
export const CATALOGUE_TABLES = ['authors', 'works', 'books', 'book_authors', 'external_ids', 'openlibrary_records'];

/**
 * Writes go to tables set aside (see catalogueAside.ts), which have no indexes or foreign keys yet;
 * to the live ones, where the role may, with the foreign keys checked once per constraint after the
 * writes (see checkReferences) rather than by a trigger per row; nothing else fires on these tables.
 * Answers whether they are to be checked.
 */
async function beginWrites(client: PoolClient, aside: boolean): Promise<boolean> {
  const { rows } = await client.query<{ may: boolean }>("select has_parameter_privilege('session_replication_role', 'set') as may");
  const checkAfter = !aside && rows[0]!.may;
  if (checkAfter) await client.query('set local session_replication_role = replica');
  return checkAfter;
}

/**
 * The first part's rows: authors, works, the authors' external identifiers, the Open Library keys
 * of all (records, redirects, deletes). Its redirects stay for the editions' references (ol_redirect).
 * Rows go in in the order of each table's primary key: its pages fill one after another (and an
 * index built over them reads them in order, where a B-tree filled in random order ends about a
 * third larger).
 */
export async function writeAuthorsAndWorks(client: PoolClient, aside: boolean): Promise<void> {
  await client.query(
    `create temp table ol_redirect on commit drop as
       select key, redirect_to from ol_stage where type = 'redirect'`,
  );
  await client.query('alter table ol_redirect add primary key (key)');
  await client.query('analyze ol_redirect');
  const checkAfter = await beginWrites(client, aside);
  await client.query(
    `insert into authors (id, name_key, name, bio, birth_date, death_date, alternate_names)
     select entity_id, identity_key, name, bio, birth_date, death_date, alternate_names from ol_stage where type = 'author' order by 1`,
  );
  await client.query(
    `insert into works (id, work_key, title, subtitle, kind, subjects, description, original_year, cover_url)
     select entity_id, identity_key, title, subtitle, work_kind, subjects, description, year, cover_url from ol_stage where type = 'work' order by 1`,
  );
  await writeExternalIds(client);
  await client.query(
    `insert into openlibrary_records (key, revision, state, entity_id, digest, redirect_to)
     select key, revision, case when type in ('author', 'work') then 'record' else type end::openlibrary_state,
            entity_id, digest, redirect_to from ol_stage
     order by 1`,
  );
  if (checkAfter) await client.query('set local session_replication_role = origin');
}

async function writeExternalIds(client: PoolClient): Promise<void> {
  await client.query(
    `insert into external_ids (entity_id, scheme, value)
     select distinct s.entity_id, x.scheme, x.value from ol_stage s cross join unnest(s.id_schemes, s.id_values) as x(scheme, value)
      where s.type in ('author', 'edition') and not s.routed
     order by 1, 2, 3`,
  );
}

/**
 * Every work and author key an edition names, resolved as the record path resolves it: through at
 * most MAX_REDIRECT_HOPS redirects to its landing key, then to the entity of that key's record,
 * else to a placeholder (a work titled as the first edition naming it, of its kind, an author named
 * by its key) that keeps the state and revision of a deleted key. Answers how many placeholders
 * were made.
 */
export async function resolveReferences(client: PoolClient): Promise<number> {
  await client.query(
    `create temp table ol_reference on commit drop as
       select distinct key from (
         select work_key as key from ol_stage where type = 'edition' and work_key is not null
         union all select unnest(author_keys) from ol_stage where type = 'edition') named`,
  );
  await client.query('analyze ol_reference');
  await client.query(
    `create temp table ol_target on commit drop as
       select l.key, l.landing, k.entity_id
         from (select r.key, ${LANDING} as landing
                 from ol_reference r
                 ${REDIRECT_HOPS}) l
         left join openlibrary_records k on k.key = l.landing and k.state = 'record'`,
  );
  // Landing keys without a record: one placeholder each, with what the first edition naming it says.
  // Its kind is its key's: only a key ending with olKeySuffix('author') may name an edition's author.
  await client.query(
    `create temp table ol_placeholder on commit drop as
       select p.landing as key, case when p.landing like $1 then 'author' else 'work' end as kind,
              new_entity_key(case when p.landing like $1 then $2 else $3 end) as id,
              coalesce(k.revision, 0) as revision, case when k.state = 'delete' then 'delete' else 'pending' end as state,
              k.key is not null as known, null::text as title, null::text as work_kind
         from (select distinct landing from ol_target where entity_id is null) p
         left join openlibrary_records k on k.key = p.landing`,
    [`%${olKeySuffix('author')}`, idPrefix('author'), idPrefix('work')],
  );
  await client.query('alter table ol_placeholder add primary key (key)');
  await client.query('analyze ol_placeholder');
  await client.query(
    `update ol_placeholder p set title = f.title, work_kind = f.work_kind
       from (select distinct on (t.landing) t.landing, e.title, e.work_kind
               from ol_stage e join ol_target t on t.key = e.work_key
              where e.type = 'edition' and t.entity_id is null
              order by t.landing, e.ord) f
      where p.key = f.landing`,
  );
  await client.query('update ol_target t set entity_id = p.id from ol_placeholder p where p.key = t.landing and t.entity_id is null');
  await client.query('alter table ol_target add primary key (key)');
  await client.query('analyze ol_stage, ol_target');
  const { rows } = await client.query<{ n: number }>('select count(*)::int as n from ol_placeholder');
  return rows[0]!.n;
}

/**
 * The second part's rows: the placeholders' authors and works, the works of editions that name
 * none, books, credits, the editions' external identifiers and Open Library keys; a placeholder's
 * key that the first part stored (deleted, or redirected past the hops followed) gets its entity.
 */
export async function writeEditions(client: PoolClient, prefixes: { work: string; author: string }, aside: boolean): Promise<void> {
  const checkAfter = await beginWrites(client, aside);
  await client.query(
    `insert into authors (id, name_key, name, bio, birth_date, death_date, alternate_names)
     select id, $1 || key, key, null, null, null, '{}' from ol_placeholder where kind = 'author' order by 1`,
    [prefixes.author],
  );
  await client.query(
    `insert into works (id, work_key, title, subtitle, kind, subjects, description, original_year, cover_url)
     select id, $1 || key, title, null::text, work_kind, '{}'::text[], null::text, null::integer, null::text from ol_placeholder where kind = 'work'
     union all
     select own_work_entity_id, own_work_key, title, subtitle, work_kind, '{}', null, year, null from ol_stage where type = 'edition' and not routed and own_work_id is not null
     order by 1`,
    [prefixes.work],
  );
  await client.query(
    `insert into books (id, work_id, isbn_13, isbn_10, source_key, title, subtitle, series, publisher, year, language, pages, cover_url, subjects, description, physical_format)
     select s.entity_id, t.entity_id, s.isbn_13, s.isbn_10, s.identity_key, s.title, s.subtitle, s.series, s.publisher, s.year, s.language, s.pages, s.cover_url, s.subjects, s.description, s.physical_format
       from ol_stage s join ol_target t on t.key = s.work_key
      where s.type = 'edition' and not s.routed
     union all
     select s.entity_id, s.own_work_entity_id, s.isbn_13, s.isbn_10, s.identity_key, s.title, s.subtitle, s.series, s.publisher, s.year, s.language, s.pages, s.cover_url, s.subjects, s.description, s.physical_format
       from ol_stage s
      where s.type = 'edition' and not s.routed and s.work_key is null
     order by 1`,
  );
  // Two keys of one edition may land on one author: credited once, where first named.
  await client.query(
    `insert into book_authors (book_id, author_id, position)
     select book_id, author_id, (row_number() over (partition by book_id order by first) - 1)::smallint
       from (select s.entity_id as book_id, t.entity_id as author_id, min(named.n) as first
               from ol_stage s cross join unnest(s.author_keys) with ordinality as named(key, n)
               join ol_target t on t.key = named.key
              where s.type = 'edition' and not s.routed
              group by 1, 2) credits`,
  );
  await writeExternalIds(client);
  await client.query(
    `update openlibrary_records k set revision = p.revision, state = p.state::openlibrary_state, entity_id = p.id, redirect_to = null
       from ol_placeholder p where p.known and k.key = p.key`,
  );
  await client.query(
    `insert into openlibrary_records (key, revision, state, entity_id, digest, redirect_to)
     select key, revision, 'record', entity_id, digest, null from ol_stage where type = 'edition' and not routed
     union all
     select key, revision, type::openlibrary_state, null, null, redirect_to from ol_stage where type in ('redirect', 'delete')
     union all
     select key, revision, state::openlibrary_state, id, null, null from ol_placeholder where not known
     order by 1`,
  );
  if (checkAfter) {
    await client.query('set local session_replication_role = origin');
    await checkReferences(client);
  }
}

/**
 * The foreign keys the writes skipped, one anti-join each over the whole table: a violation fails the
 * load. These are hash joins, the only ones of a load: an anti-join hashes the referenced table,
 * whose keys are unique, so its batches split and memory stays within work_mem.
 */
async function checkReferences(client: PoolClient): Promise<void> {
  await client.query('set local enable_hashjoin = on');
  const { rows } = await client.query<{ problem: string }>(
    `select 'a book of a work that does not exist' as problem
      where exists (select 1 from books b where not exists (select 1 from works w where w.id = b.work_id))
     union all
     select 'a credit of a book that does not exist'
      where exists (select 1 from book_authors ba where not exists (select 1 from books b where b.id = ba.book_id))
     union all
     select 'a credit of an author that does not exist'
      where exists (select 1 from book_authors ba where not exists (select 1 from authors a where a.id = ba.author_id))`,
  );
  await client.query('set local enable_hashjoin = off');
  if (rows.length > 0) throw new Error(`first load: ${rows.map((row) => row.problem).join('; ')}`);
}

/**
 * One insert change for every entity the staged part made, in one block of the sequence (the
 * editions' part: their own works and the placeholders too); answers how many.
 */
export async function recordInserts(client: PoolClient, part: StagePart): Promise<number> {
  await lockChangeSequence(client);
  const { rowCount } = await client.query(
    `insert into changes (entity, entity_id, operation)
     select entity::entity_kind, id, 'insert' from (
       select ord, 0 as part, case type when 'edition' then 'book' else type end as entity, entity_id as id from ol_stage where type in ('author', 'work') or (type = 'edition' and not routed)
       ${
         part === 'editions'
           ? `union all
              select ord, 1, 'work', own_work_entity_id from ol_stage where type = 'edition' and not routed and own_work_id is not null
              union all
              select 0, 2, kind, id from ol_placeholder`
           : ''
       }) inserted
     order by ord, part`,
  );
  return rowCount ?? 0;
}

/**
 * Empties the staging table once its part is written (after the editions, the tables of references
 * too): created in this transaction, they give their disk back at once (a drop would keep it until
 * the commit).
 */
export async function emptyStaging(client: PoolClient, part: StagePart): Promise<void> {
  await client.query(part === 'editions' ? 'truncate ol_stage, ol_redirect, ol_reference, ol_target, ol_placeholder' : 'truncate ol_stage');
}

/** Planner statistics of the tables a load grew (inside the transaction: the leftovers' lookups need them). */
export async function analyzeCatalogue(client: PoolClient): Promise<void> {
  await client.query('analyze books, works, authors, book_authors, external_ids, openlibrary_records');
}

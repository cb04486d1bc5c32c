import test from 'ava';
import type { RunningServer } from '../src/server.js';
import { kindOfId } from '../src/domain/ids.js';
import { issueApiKey } from '../src/services/apiKeys.js';
import { migrate } from '../src/stores/postgres/migrate.js';
import type { Pool } from '../src/stores/postgres/pool.js';
import { createWorld, databaseAtRelease, startTestServer, type TestWorld } from './helpers/env.js';

/**
 * Entity ids are stored as integer keys since migration 060 (issue 31); every id issued before, as
 * text, must go on answering. A catalogue is written as the release with migration 052 wrote it, the
 * later migrations run over it, and the API is asked by the text ids it had.
 */

const LAST_RELEASE_WITH_TEXT_IDS = '052_goodreads_stars.sql';

// Ids as the service issued them before (domain/ids.ts newId).
const AUTHOR = 'au_3k8m2x7q1v9d';
const WORK = 'wk_5n1x7q0c2r9a';
const BOOK = 'bk_8f4t0w6h2j5e';
const MERGED_BOOK = 'bk_1z9y3s7p5r0g';

let world: TestWorld;
let scratch: Awaited<ReturnType<typeof databaseAtRelease>> | undefined;
let db: Pool;
let server: RunningServer | undefined;
let auth: { Authorization: string };
let applied: string[];

test.before(async () => {
  world = await createWorld();
  scratch = await databaseAtRelease(world, LAST_RELEASE_WITH_TEXT_IDS);
  db = scratch.db;
  // The catalogue as the service wrote it with text ids: a book merged into another of its work, credits,
  // spellings, an identifier of each kind of table, readers and the change feed.
  const writes: [string, string[]][] = [
    ["insert into authors (id, name, name_key) values ($1, 'Ursula K. Le Guin', 'ursula k le guin')", [AUTHOR]],
    [
      "insert into author_names (name, name_key, author_id) values ('Ursula K. Le Guin', 'ursula k le guin', $1), ('Ursula Le Guin', 'ursula le guin', $1)",
      [AUTHOR],
    ],
    [
      "insert into works (id, work_key, title, original_year) values ($1, 'the left hand of darkness|ursula k le guin', 'The Left Hand of Darkness', 1969)",
      [WORK],
    ],
    [
      `insert into books (id, work_id, isbn_13, isbn_10, title, popularity)
         values ($1, $3, '9780441478125', '0441478123', 'The Left Hand of Darkness', 100),
                ($2, $3, '9780441007318', null, 'The Left Hand of Darkness', 0)`,
      [BOOK, MERGED_BOOK, WORK],
    ],
    ['update books set merged_into = $1 where id = $2', [BOOK, MERGED_BOOK]],
    ['insert into book_authors (book_id, author_id, position) values ($1, $2, 0)', [BOOK, AUTHOR]],
    ["insert into external_ids (entity_id, scheme, value) values ($1, 'goodreads', '18423')", [BOOK]],
    ["insert into openlibrary_records (key, revision, state, entity_id) values ('OL59863W', 1, 'record', $1)", [WORK]],
    [
      "insert into work_readers (work_id, want_to_read, currently_reading, already_read, rated) values ($1, 7, 2, 30, '{0,0,1,2,3}')",
      [WORK],
    ],
    [
      `insert into changes (entity, entity_id, operation, survivor_id)
         values ('author', $1, 'insert', null), ('work', $2, 'insert', null), ('book', $3, 'insert', null),
                ('book', $4, 'insert', null), ('book', $4, 'merge', $3)`,
      [AUTHOR, WORK, BOOK, MERGED_BOOK],
    ],
  ];
  for (const [text, values] of writes) await db.query(text, values);
  applied = await migrate(db);
  server = await startTestServer(world, { databaseUrl: scratch.url });
  const { key } = await issueApiKey(db, 'test');
  auth = { Authorization: `Bearer ${key}` };
});

test.after.always(async () => {
  await server?.stop();
  await scratch?.drop();
  await world?.destroy();
});

const get = (path: string) => fetch(`${server!.url}${path}`, { headers: auth, redirect: 'manual' });
const json = async <T>(path: string): Promise<T> => {
  const response = await get(path);
  if (response.status !== 200) throw new Error(`${path}: ${response.status} ${await response.text()}`);
  return (await response.json()) as T;
};

test('the migrations after 052 run over a catalogue of text ids and leave its ids stored as integer keys', async (t) => {
  t.true(applied.includes('060_integer_ids.sql'));
  t.true(applied.every((file) => file > LAST_RELEASE_WITH_TEXT_IDS));
  const { rows } = await db.query<{ type: string }>('select pg_typeof(id)::text as type from books limit 1');
  t.is(rows[0]!.type, 'bigint');
});

test('a book, its work and its author written with text ids before the migration answer GET by those same ids', async (t) => {
  const book = await json<Record<string, unknown>>(`/v1/books/${BOOK}`);
  t.like(book, {
    id: BOOK,
    work_id: WORK,
    isbn_13: '9780441478125',
    authors: [{ id: AUTHOR, name: 'Ursula K. Le Guin' }],
    identifiers: { goodreads: ['18423'] },
    readers: { want_to_read: 7, currently_reading: 2, already_read: 30 },
  });

  const work = await json<Record<string, unknown>>(`/v1/works/${WORK}`);
  t.like(work, {
    id: WORK,
    title: 'The Left Hand of Darkness',
    authors: [{ id: AUTHOR, name: 'Ursula K. Le Guin' }],
    edition_count: 1,
    identifiers: { openlibrary: ['OL59863W'] },
  });
  t.deepEqual(
    (work.editions as { id: string }[]).map((edition) => edition.id),
    [BOOK],
  );

  const author = await json<Record<string, unknown>>(`/v1/authors/${AUTHOR}`);
  t.like(author, {
    id: AUTHOR,
    name: 'Ursula K. Le Guin',
    alternate_names: ['Ursula Le Guin'],
    work_count: 1,
    works: [{ id: WORK, title: 'The Left Hand of Darkness', original_year: 1969 }],
  });
});

test('a book merged before the migration answers 301 to its survivor by their text ids', async (t) => {
  const response = await get(`/v1/books/${MERGED_BOOK}`);
  t.is(response.status, 301);
  t.is(response.headers.get('location'), `/v1/books/${BOOK}`);
});

test('the change feed names what was written before the migration by its text ids, a merge with its survivor', async (t) => {
  const page = await json<{ changes: { entity: string; id: string; operation: string; survivor_id: string | null }[] }>(
    '/v1/changes?since=0',
  );
  t.deepEqual(
    page.changes.map(({ entity, id, operation, survivor_id }) => ({ entity, id, operation, survivor_id })),
    [
      { entity: 'author', id: AUTHOR, operation: 'insert', survivor_id: null },
      { entity: 'work', id: WORK, operation: 'insert', survivor_id: null },
      { entity: 'book', id: BOOK, operation: 'insert', survivor_id: null },
      { entity: 'book', id: MERGED_BOOK, operation: 'insert', survivor_id: null },
      { entity: 'book', id: MERGED_BOOK, operation: 'merge', survivor_id: BOOK },
    ],
  );
});

const ALPHABET = '0123456789abcdefghjkmnpqrstvwxyz';

test('public_id gives back every id entity_key reads, each character of the alphabet in each place, and keys sort as the ids do', async (t) => {
  const ids = ['au', 'bk', 'wk'].flatMap((prefix) => [
    ...[...ALPHABET].map((character) => `${prefix}_${character.repeat(12)}`),
    `${prefix}_${ALPHABET.slice(0, 12)}`,
    `${prefix}_${ALPHABET.slice(12, 24)}`,
    `${prefix}_${ALPHABET.slice(20, 32)}`,
    `${prefix}_z00000000000`,
    `${prefix}_00000000000z`,
  ]);
  const { rows } = await world.db.query<{ id: string; back: string; positive: boolean }>(
    'select i.id, public_id(entity_key(i.id)) as back, entity_key(i.id) > 0 as positive from unnest($1::text[]) as i(id)',
    [ids],
  );
  t.deepEqual(
    rows.filter((row) => row.back !== row.id || !row.positive),
    [],
  );
  const { rows: sorted } = await world.db.query<{ ids: string[] }>(
    'select array_agg(i.id order by entity_key(i.id)) as ids from unnest($1::text[]) as i(id)',
    [ids],
  );
  t.deepEqual(sorted[0]!.ids, [...ids].sort());
  const { rows: keys } = await world.db.query<{ id: string }>(
    'select public_id(k.key) as id from unnest(entity_keys($1)) with ordinality as k(key, n) order by k.n',
    [[WORK, BOOK, AUTHOR]],
  );
  t.deepEqual(
    keys.map((row) => row.id),
    [WORK, BOOK, AUTHOR],
  );
});

test('entity_key reads no key from text that is not an id: wrong prefix, i l o u, wrong length, upper case', async (t) => {
  const malformed = [
    'xx_5n1x7q0c2r9a',
    'ab_5n1x7q0c2r9a',
    'bk-5n1x7q0c2r9a',
    'bk5n1x7q0c2r9a',
    'bk_5n1x7q0c2r9i',
    'bk_5n1x7q0c2r9l',
    'bk_5n1x7q0c2r9o',
    'bk_5n1x7q0c2r9u',
    'wk_i00000000000',
    'au_lllllllllllll',
    'bk_5n1x7q0c2r9',
    'bk_5n1x7q0c2r9aa',
    'bk_',
    '',
    'BK_5n1x7q0c2r9a',
    'bk_5N1X7Q0C2R9A',
    'bk_5n1x7q0c2r9A',
    ' bk_5n1x7q0c2r9a',
    'bk_5n1x7q0c2r9a ',
    'bk_5n1x7q0c2r9a\n',
    '12345',
  ];
  const { rows } = await world.db.query<{ id: string; key: string | null }>(
    'select i.id, entity_key(i.id) as key from unnest($1::text[]) as i(id)',
    [malformed],
  );
  t.deepEqual(
    rows.filter((row) => row.key !== null),
    [],
  );
  // The service's TypeScript agrees: none of them is an id.
  t.deepEqual(
    malformed.filter((id) => kindOfId(id) !== null),
    [],
  );
  const { rows: nulls } = await world.db.query<{ key: string | null; keys: (string | null)[] }>(
    'select entity_key(null) as key, entity_keys($1) as keys',
    [[BOOK, 'bk_5n1x7q0c2r9i', WORK]],
  );
  t.is(nulls[0]!.key, null);
  t.is(nulls[0]!.keys.length, 3);
  t.is(nulls[0]!.keys[1], null);
  t.true(nulls[0]!.keys[0] !== null && nulls[0]!.keys[2] !== null);
});

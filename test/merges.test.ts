import test from 'ava';
import { pointCached } from './helpers/cache.js';
import { useApi } from './helpers/env.js';
import { liveBooks, loadSampleCatalogue } from './helpers/catalogue.js';
import { runCli } from './helpers/processes.js';
import type { EntityKind } from '../src/domain/ids.js';
import { merge as mergeEntities } from '../src/services/merge.js';
import { createPool } from '../src/stores/postgres/pool.js';
import { PointReads } from '../src/stores/postgres/pointReads.js';

const api = useApi(test, { prepare: loadSampleCatalogue });
const get = (path: string) => api.get(path);

/** The merge service, as the CLI calls it, with the outcome as the CLI reports it (code 0 or 1). */
async function merge(kind: EntityKind, from: string, into: string): Promise<{ code: number; stdout: string; stderr: string }> {
  const outcome = await mergeEntities(api.world.db, api.world.cache, kind, from, into);
  if ('refused' in outcome) return { code: 1, stdout: '', stderr: `refused: ${outcome.refused}` };
  return { code: 0, stdout: 'alreadyDone' in outcome ? 'already merged' : `merged ${kind} ${from} into ${into}`, stderr: '' };
}

/** How many changes the feed holds. */
const changeCount = async (): Promise<number> =>
  (await api.world.db.query<{ n: number }>('select count(*)::int as n from changes')).rows[0]!.n;

/** Ids of three live books that are not otherwise used by these tests, one per call. */
let offset = 0;
async function books(count: number) {
  const rows = await liveBooks(api.world.db, count, { offset, withIsbn: true });
  offset += count;
  return rows;
}

test.serial('bookmeta merge reports a merge, a repeat and a refusal with its exit code', async (t) => {
  const [from, into] = await books(2);
  const cli = (args: string[]) => runCli(api.world.env, ['merge', ...args]);
  const done = await cli(['book', from!.id, into!.id]);
  t.is(done.code, 0, done.stderr);
  t.regex(done.stdout, new RegExp(`merged book ${from!.id} into ${into!.id} \\(\\d+ changes recorded\\)`));
  const again = await cli(['book', from!.id, into!.id]);
  t.is(again.code, 0);
  t.regex(again.stdout, /is already merged into .*; nothing to do/);
  const refused = await cli(['book', into!.id, into!.id]);
  t.is(refused.code, 1);
  t.regex(refused.stderr, /^refused: cannot merge book .* into itself/m);
  const badKind = await cli(['shelf', from!.id, into!.id]);
  t.is(badKind.code, 1);
  t.regex(badKind.stderr, /must be one of book, work, author/);
});

test.serial('a merged book id answers 301 with Location at the survivor, and the survivor answers 200', async (t) => {
  const [from, into] = await books(2);
  const result = await merge('book', from!.id, into!.id);
  t.is(result.code, 0, result.stderr);
  const response = await get(`/v1/books/${from!.id}`);
  t.is(response.status, 301);
  t.is(response.headers.get('location'), `/v1/books/${into!.id}`);
  t.deepEqual(await response.json(), { merged_into: into!.id, location: `/v1/books/${into!.id}` });
  t.is((await get(`/v1/books/${into!.id}`)).status, 200);
  // The merged edition's ISBN leads to the survivor too.
  const byIsbn = await get(`/v1/isbn/${from!.isbn_13}`);
  t.is(byIsbn.status, 301);
  t.is(byIsbn.headers.get('location'), `/v1/books/${into!.id}`);
});

test.serial('a chain of merges collapses: the first id points straight at the final survivor', async (t) => {
  const [a, b, c] = await books(3);
  t.is((await merge('book', a!.id, b!.id)).code, 0);
  t.is((await merge('book', b!.id, c!.id)).code, 0);
  for (const id of [a!.id, b!.id]) {
    const response = await get(`/v1/books/${id}`);
    t.is(response.status, 301);
    t.is(response.headers.get('location'), `/v1/books/${c!.id}`);
  }
});

test.serial(
  'merging twice through bookmeta merge is a no-op that succeeds: no change recorded, both ids answer as after the first',
  async (t) => {
    const [from, into] = await books(2);
    const cli = () => runCli(api.world.env, ['merge', 'book', from!.id, into!.id]);
    const first = await cli();
    t.is(first.code, 0, first.stderr);
    const changesBefore = await changeCount();
    const again = await cli();
    t.is(again.code, 0, again.stderr);
    t.regex(again.stdout, new RegExp(`${from!.id} is already merged into ${into!.id}; nothing to do`));
    t.is(await changeCount(), changesBefore, 'the repeat recorded no change');
    t.is((await get(`/v1/books/${from!.id}`)).headers.get('location'), `/v1/books/${into!.id}`);
    t.is((await get(`/v1/books/${into!.id}`)).status, 200);
  },
);

test.serial('a merge into itself, into a redirect, a cycle, or across kinds is refused with a clear message', async (t) => {
  const [a, b, c] = await books(3);
  const itself = await merge('book', a!.id, a!.id);
  t.is(itself.code, 1);
  t.regex(itself.stderr, /cannot merge book .* into itself/);

  t.is((await merge('book', a!.id, b!.id)).code, 0);
  const cycle = await merge('book', b!.id, a!.id);
  t.is(cycle.code, 1);
  t.regex(cycle.stderr, /would make a cycle/);

  const intoRedirect = await merge('book', c!.id, a!.id);
  t.is(intoRedirect.code, 1);
  t.regex(intoRedirect.stderr, new RegExp(`is a redirect to ${b!.id}; merge into ${b!.id} instead`));

  const wrongKind = await merge('work', c!.id, b!.id);
  t.is(wrongKind.code, 1);
  t.regex(wrongKind.stderr, /is not a work id/);

  const missing = await merge('book', c!.id, 'bk_000000000000');
  t.is(missing.code, 1);
  t.regex(missing.stderr, /book bk_000000000000 not found/);
});

test.serial('merging works moves the editions to the survivor and redirects the old work', async (t) => {
  const [x, y] = await books(2);
  const fromEditions = await api.world.db.query<{ id: string }>(
    'select public_id(id) as id from books where work_id = entity_key($1) and merged_into is null',
    [x!.work_id],
  );
  t.is((await merge('work', x!.work_id, y!.work_id)).code, 0);
  const work = (await (await get(`/v1/works/${y!.work_id}`)).json()) as { editions: { id: string }[]; edition_count: number };
  for (const row of fromEditions.rows) t.true(work.editions.some((edition) => edition.id === row.id));
  const book = (await (await get(`/v1/books/${x!.id}`)).json()) as { work_id: string };
  t.is(book.work_id, y!.work_id);
  const old = await get(`/v1/works/${x!.work_id}`);
  t.is(old.status, 301);
  t.is(old.headers.get('location'), `/v1/works/${y!.work_id}`);
});

test.serial('merging authors moves their books and spellings and redirects the old author', async (t) => {
  const { rows } = await api.world.db.query<{ id: string }>(
    `select public_id(a.id) as id from authors a where a.merged_into is null and exists (select 1 from book_authors ba where ba.author_id = a.id)
      order by a.id limit 2`,
  );
  const [from, into] = rows;
  const fromName = (await api.world.db.query<{ name: string }>('select name from authors where id = entity_key($1)', [from!.id])).rows[0]!
    .name;
  t.is((await merge('author', from!.id, into!.id)).code, 0);
  const author = (await (await get(`/v1/authors/${into!.id}`)).json()) as { alternate_names: string[] };
  t.true(author.alternate_names.includes(fromName));
  const old = await get(`/v1/authors/${from!.id}`);
  t.is(old.status, 301);
  t.is(old.headers.get('location'), `/v1/authors/${into!.id}`);
  const left = await api.world.db.query<{ n: number }>('select count(*)::int as n from book_authors where author_id = entity_key($1)', [
    from!.id,
  ]);
  t.is(left.rows[0]!.n, 0);
});

test.serial('a merge drops the cached answers of both ids at once', async (t) => {
  const [from, into] = await books(2);
  for (const id of [from!.id, into!.id]) {
    await get(`/v1/books/${id}`);
    t.true(await pointCached(api.world, `/v1/books/${id}`));
  }
  for (const id of [from!.id, into!.id]) t.is((await get(`/v1/books/${id}`)).headers.get('x-cache'), 'HIT');
  t.is((await merge('book', from!.id, into!.id)).code, 0);
  const old = await get(`/v1/books/${from!.id}`);
  t.is(old.status, 301);
  t.is((await get(`/v1/books/${into!.id}`)).headers.get('x-cache'), 'MISS');
});

test.serial('every merge is in the change feed with its survivor', async (t) => {
  const [from, into] = await books(2);
  const before = Number((await api.world.db.query<{ seq: string }>('select coalesce(max(seq), 0) as seq from changes')).rows[0]!.seq);
  t.is((await merge('book', from!.id, into!.id)).code, 0);
  const page = (await (await get(`/v1/changes?since=${before}`)).json()) as {
    changes: { id: string; operation: string; survivor_id: string | null }[];
  };
  t.true(page.changes.some((change) => change.id === from!.id && change.operation === 'merge' && change.survivor_id === into!.id));
});

test.serial('point lookups made together share one query, and each gets its own answer: found, merged or absent', async (t) => {
  const [from, into, other] = await books(3);
  t.is((await merge('book', from!.id, into!.id)).code, 0);
  const db = createPool(api.world.config.databaseUrl, 5);
  let queries = 0;
  db.on('acquire', () => queries++);
  try {
    const reads = new PointReads(db);
    const answers = await Promise.all([
      reads.book(into!.id),
      reads.book(from!.id),
      reads.book('bk_0000000000zz'),
      reads.book(into!.id),
      reads.bookByIsbn13(other!.isbn_13),
    ]);
    t.is(queries, 2, 'one query for the ids, one for the ISBN');
    t.is(answers[0] && 'found' in answers[0] ? answers[0].found.id : null, into!.id);
    t.deepEqual(answers[1], { mergedInto: into!.id });
    t.is(answers[2], null);
    t.deepEqual(answers[3], answers[0]);
    t.is(answers[4] && 'found' in answers[4] ? answers[4].found.id : null, other!.id);
    // A later turn is a query of its own.
    t.is(await reads.book('bk_0000000000zz'), null);
    t.is(queries, 3);
  } finally {
    await db.end();
  }
});

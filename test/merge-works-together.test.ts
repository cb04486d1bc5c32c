import test from 'ava';
import { pointCached } from './helpers/cache.js';
import { useApi } from './helpers/env.js';
import { loadSampleCatalogue } from './helpers/catalogue.js';
import { merge, mergeWorks } from '../src/services/merge.js';

const api = useApi(test, { prepare: loadSampleCatalogue });
const get = (path: string) => api.get(path);

/** Works of distinct live books not otherwise used by these tests, `count` per call. */
let offset = 0;
async function works(count: number): Promise<string[]> {
  const { rows } = await api.world.db.query<{ work_id: string }>(
    `select distinct on (b.work_id) public_id(b.work_id) as work_id from books b where b.merged_into is null and b.deleted_at is null order by b.work_id offset $1 limit $2`,
    [offset, count],
  );
  offset += count;
  return rows.map((row) => row.work_id);
}

const editionsOf = async (workId: string): Promise<string[]> =>
  (
    await api.world.db.query<{ id: string }>(
      'select public_id(id) as id from books where work_id = entity_key($1) and merged_into is null order by books.id',
      [workId],
    )
  ).rows.map((row) => row.id);

test.serial(
  'works merged together answer as merged one by one: editions moved, 301s (an older redirect too), each merge in the feed, cached answers dropped',
  async (t) => {
    const [a, b, into, older] = await works(4);
    // A redirect to `a` already: it must point at the final survivor afterwards.
    t.true((await merge(api.world.db, api.world.cache, 'work', older!, a!)).merged);
    const moving = [...(await editionsOf(a!)), ...(await editionsOf(b!))];
    const editions = [...moving, ...(await editionsOf(into!))].sort();
    for (const id of [a!, into!]) {
      await get(`/v1/works/${id}`);
      t.true(await pointCached(api.world, `/v1/works/${id}`));
    }
    const before = Number((await api.world.db.query<{ seq: string }>('select coalesce(max(seq), 0) as seq from changes')).rows[0]!.seq);

    const outcomes = await mergeWorks(api.world.db, api.world.cache, [
      { fromId: a!, intoId: into! },
      { fromId: b!, intoId: into! },
    ]);

    t.deepEqual(
      outcomes.map((outcome) => outcome.merged),
      [true, true],
    );
    t.deepEqual(await editionsOf(into!), editions);
    for (const id of [a!, b!, older!]) {
      const response = await get(`/v1/works/${id}`);
      t.is(response.status, 301, id);
      t.is(response.headers.get('location'), `/v1/works/${into!}`);
    }
    t.is((await get(`/v1/works/${into!}`)).headers.get('x-cache'), 'MISS');
    const page = (await (await get(`/v1/changes?since=${before}`)).json()) as {
      changes: { entity: string; id: string; operation: string; survivor_id: string | null }[];
    };
    const merged = page.changes.filter((change) => change.operation === 'merge').map((change) => [change.id, change.survivor_id]);
    t.deepEqual(
      merged.sort(),
      [
        [a!, into!],
        [b!, into!],
        [older!, into!],
      ].sort(),
    );
    const moved = page.changes.filter((change) => change.entity === 'book').map((change) => change.id);
    t.deepEqual(moved.sort(), moving.sort());
  },
);

test.serial('merges together that name a work twice have the outcomes of the same merges one after another', async (t) => {
  const [a, b, c] = await works(3);
  const outcomes = await mergeWorks(api.world.db, api.world.cache, [
    { fromId: a!, intoId: b! },
    { fromId: a!, intoId: c! },
    { fromId: c!, intoId: a! },
    { fromId: c!, intoId: b! },
  ]);
  t.true(outcomes[0]!.merged);
  t.regex('refused' in outcomes[1]! ? outcomes[1].refused : '', /already merged into/);
  t.regex('refused' in outcomes[2]! ? outcomes[2].refused : '', new RegExp(`is a redirect to ${b!}`));
  t.true(outcomes[3]!.merged);
  const { rows } = await api.world.db.query<{ id: string; merged_into: string | null }>(
    'select public_id(id) as id, public_id(merged_into) as merged_into from works where id = any(entity_keys($1)) order by works.id',
    [[a!, b!, c!]],
  );
  t.deepEqual(Object.fromEntries(rows.map((row) => [row.id, row.merged_into])), { [a!]: b!, [b!]: null, [c!]: b! });
});

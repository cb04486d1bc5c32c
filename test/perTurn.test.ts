import test from 'ava';
import { perTurn, type Group } from '../src/perTurn.js';

test('calls made in one turn reach the batch function together, grouped by key, answered in call order', async (t) => {
  const batches: Group<string>[][] = [];
  const load = perTurn((groups: Group<string>[]) => {
    batches.push(groups);
    return Promise.resolve(groups.map((group) => Array.from({ length: group.count }, (_, index) => `${group.key}#${index}`)));
  });
  const answers = await Promise.all([load('a'), load('b'), load('a'), load('a')]);
  t.deepEqual(answers, ['a#0', 'b#0', 'a#1', 'a#2']);
  t.deepEqual(batches, [
    [
      { key: 'a', count: 3 },
      { key: 'b', count: 1 },
    ],
  ]);
  // A later turn is a new batch.
  t.is(await load('b'), 'b#0');
  t.is(batches.length, 2);
});

test('a failed batch fails every call in it, and the next batch starts afresh', async (t) => {
  let fail = true;
  const load = perTurn((groups: Group<number>[]) => {
    if (fail) return Promise.reject(new Error('Redis is away'));
    return Promise.resolve(groups.map((group) => new Array<number>(group.count).fill(group.key * 10)));
  });
  const failed = await Promise.allSettled([load(1), load(2)]);
  t.deepEqual(
    failed.map((result) => result.status),
    ['rejected', 'rejected'],
  );
  fail = false;
  t.is(await load(3), 30);
});

import test, { type ExecutionContext } from 'ava';
import { newId } from '../src/domain/ids.js';
import { recordChanges, type Change } from '../src/stores/postgres/changes.js';
import { withTransaction } from '../src/stores/postgres/pool.js';
import { useApi } from './helpers/env.js';
import { assertBadRequest } from './helpers/assertions.js';

const api = useApi(test, { server: { rateLimitMax: 1_000_000 } });

interface Page {
  changes: { seq: number; entity: string; id: string; operation: string; survivor_id: string | null; changed_at: string }[];
  next: string;
  has_more: boolean;
}

const get = (path: string) => api.get(path);
const page = async (since: string, limit?: number): Promise<Page> =>
  (await (await get(`/v1/changes?since=${since}${limit ? `&limit=${limit}` : ''}`)).json()) as Page;

async function write(changes: Change[]): Promise<void> {
  await withTransaction(api.world.db, (client) => recordChanges(client, changes));
}

const expectBadRequest = async (t: ExecutionContext, query: string, message: string) =>
  assertBadRequest(t, await get(`/v1/changes${query}`), message, query);

test.serial('without since the feed answers 400 "since cursor is required"', async (t) => {
  await expectBadRequest(t, '', 'since cursor is required');
  await expectBadRequest(t, '?since=', 'since cursor is required');
});

test.serial('a malformed cursor is a 400', async (t) => {
  await expectBadRequest(t, '?since=abc', 'malformed since cursor "abc": expected a cursor returned as "next", or 0');
  await expectBadRequest(t, '?since=-1', 'malformed since cursor "-1": expected a cursor returned as "next", or 0');
});

test.serial('a cursor ahead of the feed is unknown: 400', async (t) => {
  await expectBadRequest(t, '?since=999999', 'unknown since cursor "999999": it is ahead of the feed');
});

test.serial('a limit outside 1..1000 is a 400', async (t) => {
  await expectBadRequest(t, '?since=0&limit=0', 'limit must be an integer from 1 to 1000');
  await expectBadRequest(t, '?since=0&limit=1001', 'limit must be an integer from 1 to 1000');
  await expectBadRequest(t, '?since=0&limit=ten', 'limit must be an integer from 1 to 1000');
  await expectBadRequest(t, '?since=0&since=1', 'query parameter since is given more than once');
});

test.serial('since=0 reads from the beginning; pages follow with next until has_more is false', async (t) => {
  await write(Array.from({ length: 25 }, () => ({ entity: 'book' as const, id: newId('book'), operation: 'insert' as const })));
  const [merged, survivor] = [newId('work'), newId('work')];
  await write([{ entity: 'work', id: merged, operation: 'merge', survivorId: survivor }]);
  const seen: Page['changes'] = [];
  let cursor = '0';
  let pages = 0;
  for (;;) {
    const current = await page(cursor, 10);
    seen.push(...current.changes);
    cursor = current.next;
    pages += 1;
    if (!current.has_more) break;
  }
  t.is(pages, 3);
  t.is(seen.length, 26);
  t.deepEqual(
    seen.map((change) => change.seq),
    [...seen.map((change) => change.seq)].sort((a, b) => a - b),
  );
  t.like(seen.at(-1), { entity: 'work', id: merged, operation: 'merge', survivor_id: survivor });
  // At the head: an empty page whose next stays put.
  const head = await page(cursor);
  t.deepEqual(head, { changes: [], next: cursor, has_more: false });
});

test.serial('concurrent writers committing out of sequence order: a follower sees every change exactly once', async (t) => {
  const start = (await page('0', 1000)).changes.at(-1)?.seq ?? 0;
  const writers = 12;
  const transactionsPerWriter = 15;
  const written = new Set<string>();
  const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

  // Each transaction does some work, appends its changes, and then waits a random time before
  // committing: without commit-ordered sequence numbers a follower would read past the ones still open.
  const writer = async () => {
    for (let n = 0; n < transactionsPerWriter; n++) {
      const client = await api.world.db.connect();
      try {
        await client.query('begin');
        await client.query('select pg_sleep($1)', [Math.random() * 0.01]);
        const changes = Array.from({ length: 1 + (n % 3) }, () => ({
          entity: 'book' as const,
          id: newId('book'),
          operation: 'update' as const,
        }));
        await recordChanges(client, changes);
        await client.query('select pg_sleep($1)', [Math.random() * 0.01]);
        if (Math.random() < 0.1) {
          await client.query('rollback'); // aborted transactions leave gaps, never phantom changes
        } else {
          await client.query('commit');
          for (const change of changes) written.add(change.id);
        }
      } finally {
        client.release();
      }
      await pause(Math.random() * 5);
    }
  };

  const seen: string[] = [];
  let cursor = String(start);
  let writing = true;
  const follower = (async () => {
    for (;;) {
      const done = !writing;
      const current = await page(cursor, 7);
      seen.push(...current.changes.map((change) => change.id));
      cursor = current.next;
      if (done && !current.has_more) return;
      if (!current.has_more) await pause(2);
    }
  })();
  await Promise.all(Array.from({ length: writers }, () => writer()));
  writing = false;
  await follower;

  t.is(new Set(seen).size, seen.length, 'no change was handed out twice');
  t.deepEqual([...seen].sort(), [...written].sort(), 'every committed change was seen, and nothing else');
  t.true(written.size > 150);
});

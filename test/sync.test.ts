import test from 'ava';
import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import { setTimeout as sleep } from 'node:timers/promises';
import { projectPath } from '../src/paths.js';
import { BulkWriter } from '../loader/stores/elasticsearch/bulk.js';
import { readCheckpoint } from '../loader/stores/postgres/checkpoints.js';
import { lastSeq, readChanges, recordChanges } from '../src/stores/postgres/changes.js';
import { mergeEntities } from '../src/stores/postgres/merges.js';
import { withTransaction } from '../src/stores/postgres/pool.js';
import { SYNC_CHECKPOINT, applyChanges, follow, syncOnce } from '../loader/index/sync.js';
import { BOOK } from '../src/stores/elasticsearch/booksIndex.js';
import { allDocuments, assertIndexMatches, useIndexedWorld } from './helpers/indexing.js';
import { runCli } from './helpers/processes.js';
import { liveBookIds, retitle } from './helpers/catalogue.js';

const { world, deps } = useIndexedWorld(test, { reindex: true });

async function checkpoint(): Promise<number> {
  return (await readCheckpoint(world.db, SYNC_CHECKPOINT))?.seq ?? 0;
}

test.serial('sync applies updates and merges: merged ids leave the index, survivors and renamed authors are refreshed', async (t) => {
  const [updated] = await liveBookIds(world.db, 1);
  await retitle(world.db, [updated!], () => 'A Title Sync Must Carry');

  // Two editions credited to different authors: merging them moves ratings and credits.
  const { rows: pair } = await world.db.query<{ from_id: string; into_id: string }>(
    `select public_id(a.id) as from_id, public_id(b.id) as into_id from books a join books b on b.work_id = a.work_id and b.id > a.id
      where a.merged_into is null and b.merged_into is null limit 1`,
  );
  const { from_id: fromBook, into_id: intoBook } = pair[0]!;
  t.true((await mergeEntities(world.db, 'book', fromBook, intoBook)).merged);

  // Merging an author rewrites the author list of every book credited to it.
  const { rows: authors } = await world.db.query<{ id: string; name: string }>(
    `select public_id(a.id) as id, a.name from authors a where a.merged_into is null
       and exists (select 1 from book_authors ba join books b on b.id = ba.book_id and b.merged_into is null where ba.author_id = a.id)
     order by a.id limit 2`,
  );
  const [gone, survivor] = authors as [{ id: string; name: string }, { id: string; name: string }];
  t.true((await mergeEntities(world.db, 'author', gone.id, survivor.id)).merged);

  const before = await checkpoint();
  const result = await syncOnce(deps);
  t.true(result.changes > 0);
  t.is(await checkpoint(), await lastSeq(world.db));
  t.true((await checkpoint()) > before);

  const books = await allDocuments<{ title: string; author_ids: string[]; author_names: string[] }>(deps.es, deps.aliases.books);
  t.is(books.get(updated!)?.title, 'A Title Sync Must Carry');
  t.false(books.has(fromBook));
  t.true(books.has(intoBook));
  const credited = [...books.values()].filter((book) => book.author_ids.includes(survivor.id));
  t.true(credited.length > 0);
  t.false([...books.values()].some((book) => book.author_ids.includes(gone.id)));
  const authorDocs = await allDocuments(deps.es, deps.aliases.authors);
  t.false(authorDocs.has(gone.id));
  t.true(authorDocs.has(survivor.id));
  await assertIndexMatches(t, deps);

  // Nothing new: a second run applies nothing.
  t.is((await syncOnce(deps)).changes, 0);
});

test.serial("a retitled book leaves its authors' documents as they were; a book moved to another work rebuilds them", async (t) => {
  await syncOnce(deps);
  // A book whose first author has another book of another work, so moving it changes their work count.
  const { rows } = await world.db.query<{ book: string; author: string; other_work: string }>(
    `select public_id(b.id) as book, public_id(ba.author_id) as author, public_id(o.work_id) as other_work
       from books b join book_authors ba on ba.book_id = b.id and ba.position = 0
       join book_authors oa on oa.author_id = ba.author_id and oa.book_id <> b.id
       join books o on o.id = oa.book_id and o.work_id <> b.work_id and o.merged_into is null
      where b.merged_into is null and b.deleted_at is null
      order by b.id limit 1`,
  );
  const { book, author, other_work: otherWork } = rows[0]!;
  const authorDoc = async () =>
    (await allDocuments<{ work_count: number; updated_seq: number }>(deps.es, deps.aliases.authors)).get(author)!;
  const before = await authorDoc();

  await retitle(world.db, [book], () => 'Retitled, Nothing Else');
  await syncOnce(deps);
  t.is((await authorDoc()).updated_seq, before.updated_seq, 'the author document was not rewritten');

  await withTransaction(world.db, async (client) => {
    await client.query('update books set work_id = entity_key($2) where id = entity_key($1)', [book, otherWork]);
    await recordChanges(client, [{ entity: 'book', id: book, operation: 'update' }]);
  });
  await syncOnce(deps);
  t.true((await authorDoc()).updated_seq > before.updated_seq, 'the author document was rebuilt');
  await assertIndexMatches(t, deps);
});

test.serial('a work still offers a title to type-ahead after the edition that offered it is retitled', async (t) => {
  await syncOnce(deps);
  // Two editions of one work under one title: only the first (by id) offers it, once.
  const [first, second] = (await liveBookIds(world.db, 2, 60)).sort();
  await withTransaction(world.db, async (client) => {
    await client.query(
      "update books set work_id = (select work_id from books where id = entity_key($1)), title = 'Quibbling Marmots' where id = any(entity_keys($2))",
      [first, [first, second]],
    );
    await recordChanges(
      client,
      [first!, second!].map((id) => ({ entity: 'book' as const, id, operation: 'update' as const })),
    );
  });
  await syncOnce(deps);
  const { rows } = await world.db.query<{ work_id: string }>('select public_id(work_id) as work_id from books where id = entity_key($1)', [
    first,
  ]);
  const offered = async () => {
    await deps.es.indices.refresh({ index: deps.aliases.books });
    const response = await deps.es.search<{ work_id: string }>({
      index: deps.aliases.books,
      size: 0,
      _source: [BOOK.work_id.path],
      suggest: { titles: { prefix: 'quibbling mar', completion: { field: BOOK.title_start.path, size: 10 } } },
    });
    const options = (response.suggest?.titles?.[0]?.options ?? []) as { _id: string; _source?: { work_id: string } }[];
    return options.map((option) => option._source?.work_id);
  };
  t.deepEqual(await offered(), [rows[0]!.work_id]);

  await retitle(world.db, [first!], () => 'Something Else Entirely');
  await syncOnce(deps);
  t.deepEqual(await offered(), [rows[0]!.work_id], 'the other edition offers the title now');
  await assertIndexMatches(t, deps);
});

test.serial('an older write never overwrites a newer one, nor brings a deleted document back', async (t) => {
  const [book] = await liveBookIds(world.db, 1, 5);
  await retitle(world.db, [book!], () => 'Newest Title');
  await syncOnce(deps);
  const doc = (await allDocuments<{ title: string; updated_seq: number }>(deps.es, deps.aliases.books)).get(book!)!;
  t.is(doc.title, 'Newest Title');

  // A late writer holding a document built before that change (lower version) is refused.
  const writer = new BulkWriter(deps.es, { requireAlias: true });
  await writer.index(
    deps.aliases.books,
    book!,
    doc.updated_seq - 1,
    JSON.stringify({ ...doc, title: 'Stale Title', updated_seq: doc.updated_seq - 1 }),
  );
  await writer.flush();
  t.is(writer.stats.stale, 1);
  t.is((await allDocuments<{ title: string }>(deps.es, deps.aliases.books)).get(book!)?.title, 'Newest Title');

  // Replaying an old page again is harmless too (its version is lower than what is indexed).
  const old = await readChanges(world.db, 0, 10);
  const stats = await applyChanges(deps, old, { books: deps.aliases.books, authors: deps.aliases.authors, aliases: true });
  t.is(stats.bulk.indexed, 0);

  // A merged book is deleted at the merge's seq; an older write of it cannot resurrect it.
  const [from, into] = await liveBookIds(world.db, 2, 10);
  t.true((await mergeEntities(world.db, 'book', from!, into!)).merged);
  await syncOnce(deps);
  const late = new BulkWriter(deps.es, { requireAlias: true });
  await late.index(deps.aliases.books, from!, (await checkpoint()) - 1, JSON.stringify({ ...doc, id: from }));
  await late.flush();
  t.is(late.stats.stale, 1);
  t.false((await allDocuments(deps.es, deps.aliases.books)).has(from!));
});

test.serial('the checkpoint does not move when Elasticsearch does not acknowledge', async (t) => {
  const [book] = await liveBookIds(world.db, 1, 20);
  await retitle(world.db, [book!], () => 'Not Yet Acknowledged');
  const before = await checkpoint();
  // Writes through an alias that does not exist are refused (require_alias): nothing is acknowledged.
  const broken = {
    ...deps,
    aliases: { books: `${world.config.indexPrefix}missing-books`, authors: `${world.config.indexPrefix}missing-authors` },
  };
  await t.throwsAsync(syncOnce(broken));
  t.is(await checkpoint(), before);
  await syncOnce(deps);
  t.true((await checkpoint()) > before);
  t.is((await allDocuments<{ title: string }>(deps.es, deps.aliases.books)).get(book!)?.title, 'Not Yet Acknowledged');
});

test.serial('ratings changes reach the index through sync', async (t) => {
  const [a, b] = await liveBookIds(world.db, 2, 30);
  await withTransaction(world.db, async (client) => {
    await client.query(`insert into book_also_liked (book_id, liked) values (entity_key($1), entity_keys($2))`, [a, [b]]);
    await recordChanges(client, [{ entity: 'book', id: a!, operation: 'update' }]);
  });
  await syncOnce(deps);
  t.deepEqual((await allDocuments<{ also_liked: string[] }>(deps.es, deps.aliases.books)).get(a!)?.also_liked, [b]);
});

test.serial("a new rating on one edition reaches every edition of its work (the work's readers and rating), and only those", async (t) => {
  const { rows } = await world.db.query<{ work_id: string; ids: string[] }>(
    `select public_id(work_id) as work_id, array_agg(public_id(id) order by id) as ids from books where merged_into is null and deleted_at is null
      group by books.work_id having count(*) > 1 order by books.work_id limit 1`,
  );
  const { work_id: workId, ids } = rows[0]!;
  await syncOnce(deps);
  const before = await allDocuments<{ work_id: string; work_readers: number; updated_seq: number }>(deps.es, deps.aliases.books);
  await withTransaction(world.db, async (client) => {
    await client.query('update books set popularity = popularity + 1000, average_rating = 1 where id = entity_key($1)', [ids[0]]);
    await recordChanges(client, [{ entity: 'book', id: ids[0]!, operation: 'update' }]);
  });
  await syncOnce(deps);
  const after = await allDocuments<{ work_id: string; work_readers: number; updated_seq: number }>(deps.es, deps.aliases.books);
  for (const id of ids) t.is(Number(after.get(id)!.work_readers), Number(before.get(id)!.work_readers) + 1000, id);
  const rewritten = [...after].filter(([id, doc]) => doc.updated_seq !== before.get(id)!.updated_seq).map(([, doc]) => doc.work_id);
  t.deepEqual([...new Set(rewritten)], [workId]);
  await assertIndexMatches(t, deps);
});

interface Follower {
  stop(signal: NodeJS.Signals): Promise<number | null>;
  kill(): Promise<void>;
}

function spawnFollow(): Promise<Follower> {
  const child = spawn(process.execPath, ['--import', 'tsx', projectPath('loader', 'cli.ts'), 'sync', '--follow', '--page-size', '25'], {
    env: { ...world.env, LOG_LEVEL: 'info' },
    cwd: projectPath(),
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  const lines = createInterface({ input: child.stderr });
  return new Promise((resolve, reject) => {
    lines.on('line', (line) => {
      if (line.includes('"msg":"sync following the change sequence"')) {
        resolve({
          async stop(signal) {
            child.kill(signal);
            return exited;
          },
          async kill() {
            child.kill('SIGKILL');
            await exited;
          },
        });
      }
    });
    void exited.then((code) => reject(new Error(`sync exited with ${code} before following`)));
  });
}

async function waitForTitle(bookId: string, title: string, timeoutMs: number): Promise<number> {
  const started = performance.now();
  while (performance.now() - started < timeoutMs) {
    const response = await deps.es.search({
      index: deps.aliases.books,
      size: 1,
      query: { bool: { filter: [{ term: { id: bookId } }, { term: { 'title.keyword': title } }] } },
    });
    if (response.hits.hits.length > 0) return performance.now() - started;
    await sleep(20);
  }
  throw new Error(`${title} not searchable within ${timeoutMs} ms`);
}

test.serial('sync --follow makes a committed change searchable within seconds and stops cleanly on SIGTERM', async (t) => {
  const follower = await spawnFollow();
  const [book] = await liveBookIds(world.db, 1, 40);
  await retitle(world.db, [book!], () => 'Followed Closely');
  const lag = await waitForTitle(book!, 'Followed Closely', 10_000);
  t.log(`commit to searchable: ${Math.round(lag)} ms`);
  t.true(lag < 5_000);
  t.is(await follower.stop('SIGTERM'), 0);
});

test.serial('sync --follow ends on an error that is not a store being away, rather than retrying it for ever', async (t) => {
  // Elasticsearch is up but refuses the index name: no pause mends that.
  const invalid = { books: 'Not_An_Index_Name', authors: 'Not_An_Index_Name' };
  const error = await t.throwsAsync(follow({ ...deps, aliases: invalid }, { signal: AbortSignal.timeout(10_000) }));
  t.regex(error?.message ?? '', /invalid_index_name_exception/);
});

test.serial('kill -9 of sync at any moment, with writes going on, loses nothing', async (t) => {
  const books = await liveBookIds(world.db, 200, 50);
  let writing = true;
  let round = 0;
  const writer = (async () => {
    while (writing) {
      round += 1;
      const batch = books.slice((round * 7) % 190, ((round * 7) % 190) + 10);
      await retitle(world.db, batch, (id) => `Write ${round} of ${id}`);
      await sleep(15);
    }
  })();
  for (const delayMs of [200, 900]) {
    const follower = await spawnFollow();
    await sleep(delayMs);
    await follower.kill();
  }
  writing = false;
  await writer;
  // Also a one-shot sync killed mid-way through a backlog.
  await retitle(world.db, books, (id) => `Backlog title of ${id}`);
  const child = spawn(process.execPath, ['--import', 'tsx', projectPath('loader', 'cli.ts'), 'sync', '--page-size', '5'], {
    env: world.env,
    cwd: projectPath(),
    stdio: 'ignore',
  });
  const exited = new Promise((resolve) => child.on('exit', resolve));
  const before = await checkpoint();
  while ((await checkpoint()) === before) await sleep(10);
  child.kill('SIGKILL');
  await exited;
  t.true((await checkpoint()) < (await lastSeq(world.db)), 'killed before the end of the backlog');

  const rerun = await runCli(world.env, ['sync']);
  t.is(rerun.code, 0, rerun.stderr);
  t.is(await checkpoint(), await lastSeq(world.db));
  await assertIndexMatches(t, deps);
  t.log(`${round} write rounds`);
});

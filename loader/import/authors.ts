import { sameAuthorNames } from '../../src/domain/names.js';
import { merge, mergeWorks } from '../../src/services/merge.js';
import type { WorkMerge } from '../../src/stores/postgres/merges.js';
import type { Pool } from '../../src/stores/postgres/pool.js';
import type { ResponseCache } from '../../src/stores/redis/responseCache.js';
import { withTransaction } from '../../src/stores/postgres/pool.js';
import {
  authorRecords,
  authorsSharingWorks,
  authoredWorksByAuthor,
  forgetResolved,
  liveAuthorsOf,
  notedAgainstAuthors,
  notedRows,
  takeToResolve,
  type AuthorRecord,
  type AuthoredWork,
} from '../stores/postgres/authors.js';
import { workKey } from './sourceFields.js';

/**
 * One author is one record, whatever the source. Each source resolves names to its own records
 * (Open Library by its keys, goodbooks and Book-Crossing by the name's identity key), so one writer
 * may be two records. Two records are merged, through the merge machinery (301s, the change feed,
 * dropped caches), only when the catalogue ties them: both are credited, or claimed by another
 * source, on books of one work (a shared ISBN is one book, so one work), and their names can be one
 * person (sameAuthorNames). A name alone never merges: namesakes are common.
 *
 * Which record survives: the Open Library one, because its key is an identity the next dump updates
 * by (a merged record would stop taking its revisions) and Open Library tells its homonyms apart;
 * between two records of other sources, the older, whose id has been answering longest. Two Open
 * Library records are never merged here: Open Library keeps them apart on purpose, or redirects one.
 * A record tied to two Open Library authors stays as it is.
 *
 * Then works split only because their authors were two records are grouped: live works whose most
 * popular edition has the same first author and the same work title are merged into the Open
 * Library work (its grouping wins, as on import), or, with none, into the most popular. Running it
 * again changes nothing.
 *
 * Every import notes, with each batch, the authors and works it changed (noteToResolve, claimCredits)
 * and ends by resolving them (resolveTouchedAuthors): the same rules over the pairs and groups that
 * involve those authors, so the work grows with the import, not with the catalogue, and the catalogue
 * after it is as a full pass (resolveAuthors, `bookmeta resolve-authors`) would leave it. An import
 * that touched a large share of the authors ends with that full pass instead. The
 * evidence of a pair or a group only changes where an import changed something, so the rest stays
 * as the last resolution left it.
 */

export interface AuthorResolution {
  /** Author records merged into another. */
  authors: number;
  /** Works merged into another because their authors now are one. */
  works: number;
}

/** A full pass over the catalogue; what imports noted before it starts is resolved by it. */
export async function resolveAuthors(db: Pool, cache: ResponseCache | null): Promise<AuthorResolution> {
  const noted = await notedRows(db);
  const outcome = await resolve(db, cache, null);
  await forgetResolved(db, noted);
  return outcome;
}

// Noted rows resolved at a time: the authors they stand for are one scope, each looked at once however
// many batches noted them (a prolific author is noted by many).
const NOTED_PER_ROUND = 50_000;
// Noted rows, as a share of the catalogue's authors, from which one full pass is cheaper than rounds.
const FULL_PASS_SHARE = 0.25;

/**
 * The authors imports noted, resolved, round after round until none is left. Each round holds its
 * rows locked until it has resolved them and deletes them with that commit: killed meanwhile, the
 * merges done stay done (each author merge, and each batch of work merges, is its own transaction)
 * and the rows wait for the next import.
 */
export async function resolveTouchedAuthors(db: Pool, cache: ResponseCache | null): Promise<AuthorResolution> {
  // An import that touched a large share of the authors (a first load, a large file) is resolved by
  // one full pass: its set-based queries read the catalogue once, where rounds would each look up
  // their scope's works and partners again, and together cost many full passes.
  const { noted, authors } = await notedAgainstAuthors(db);
  if (noted > 0 && noted >= authors * FULL_PASS_SHARE) return resolveAuthors(db, cache);
  const outcome: AuthorResolution = { authors: 0, works: 0 };
  for (;;) {
    const round = await withTransaction(db, async (client) => {
      const noted = await takeToResolve(client, NOTED_PER_ROUND);
      if (noted.rows.length === 0) return null;
      const resolved = await resolve(db, cache, await liveAuthorsOf(db, noted.authorIds, noted.workIds));
      await forgetResolved(client, noted.rows);
      return resolved;
    });
    if (!round) return outcome;
    outcome.authors += round.authors;
    outcome.works += round.works;
  }
}

/** Merges authors, then groups works, over every author (`scope` null) or over the pairs and groups of the live authors in `scope`. */
async function resolve(db: Pool, cache: ResponseCache | null, scope: string[] | null): Promise<AuthorResolution> {
  const outcome: AuthorResolution = { authors: 0, works: 0 };
  if (scope?.length === 0) return outcome;
  // A merge credits the survivor with the merged record's books, which may tie it to a third record:
  // another pass looks at the survivors (their ties are the only ones that changed), and the works
  // of the survivors are grouped with the rest of the scope's.
  let current = scope;
  let pass = scope;
  for (;;) {
    const { merged, survivors } = await mergeAuthorPass(db, cache, pass);
    if (merged === 0) break;
    outcome.authors += merged;
    if (current) {
      pass = await liveAuthorsOf(db, survivors, []);
      current = await liveAuthorsOf(db, [...current, ...survivors], []);
    }
  }
  outcome.works = await groupWorks(db, cache, current);
  return outcome;
}

/** Survivor first: Open Library's record, then the older, then the smaller id. */
function survivorOrder(a: AuthorRecord, b: AuthorRecord): number {
  if (a.openLibrary !== b.openLibrary) return a.openLibrary ? -1 : 1;
  return a.createdAt.getTime() - b.createdAt.getTime() || (a.id < b.id ? -1 : 1);
}

const namesAgree = (a: AuthorRecord, b: AuthorRecord): boolean =>
  a.names.some((name) => b.names.some((other) => sameAuthorNames(name, other)));

async function mergeAuthorPass(
  db: Pool,
  cache: ResponseCache | null,
  scope: string[] | null,
): Promise<{ merged: number; survivors: string[] }> {
  const pairs = await authorsSharingWorks(db, scope);
  // Which record a record goes into depends on all of its ties (none if two are Open Library's):
  // the records tied to the scope are looked at with all of theirs, and only they may go.
  let movable: Set<string> | null = null;
  if (scope) {
    movable = new Set(scope);
    const partners = [...new Set(pairs.flatMap((pair) => [pair.a, pair.b]))].filter((id) => !movable!.has(id));
    for (const id of partners) movable.add(id);
    const seen = new Set(pairs.map((pair) => `${pair.a} ${pair.b}`));
    if (partners.length > 0) pairs.push(...(await authorsSharingWorks(db, partners)).filter((pair) => !seen.has(`${pair.a} ${pair.b}`)));
  }
  const records = await authorRecords(db, [...new Set(pairs.flatMap((pair) => [pair.a, pair.b]))]);
  // For each record, the records it may be merged into: tied to it, of a compatible name, ranked above it.
  const targets = new Map<string, AuthorRecord[]>();
  for (const pair of pairs) {
    const [into, from] = [records.get(pair.a)!, records.get(pair.b)!].sort(survivorOrder);
    if (from!.openLibrary || !namesAgree(from!, into!) || (movable && !movable.has(from!.id))) continue;
    targets.set(from!.id, [...(targets.get(from!.id) ?? []), into!]);
  }
  let merged = 0;
  const survivors: string[] = [];
  for (const [fromId, candidates] of targets) {
    const openLibrary = candidates.filter((candidate) => candidate.openLibrary);
    if (openLibrary.length > 1) continue;
    const into = openLibrary[0] ?? candidates.sort(survivorOrder)[0]!;
    // Each merge waits for the next pass when its survivor was merged in this one: the next pass sees it anew.
    const outcome = await merge(db, cache, 'author', fromId, into.id);
    if (outcome.merged) {
      merged += 1;
      survivors.push(into.id);
    }
  }
  return { merged, survivors };
}

/** The more popular first; of two equally popular, the one whose key sorts first. */
const mostPopularFirst = (a: AuthoredWork, b: AuthoredWork): number => b.popularity - a.popularity || (a.workKey < b.workKey ? -1 : 1);

// Works read at a time: memory holds a page of them and one author's works, not a round's.
const WORKS_PER_READ = 10_000;
// Work merges committed together (mergeWorks): one transaction and a few statements for them all.
const MERGES_PER_TRANSACTION = 500;

/** With `scope`, the groups of works whose first author is in it: each such group is whole. */
async function groupWorks(db: Pool, cache: ResponseCache | null, scope: string[] | null): Promise<number> {
  let merged = 0;
  let merges: WorkMerge[] = [];
  const mergeSome = async () => {
    const outcomes = await mergeWorks(db, cache, merges);
    merged += outcomes.filter((outcome) => outcome.merged).length;
    merges = [];
  };
  // A group is keyed by its first author: each author's works make whole groups, merged as they come.
  for await (const works of authoredWorksByAuthor(db, scope, WORKS_PER_READ)) {
    const groups = new Map<string, AuthoredWork[]>();
    for (const work of works) {
      const key = workKey(work.title, undefined);
      const group = groups.get(key);
      if (group) group.push(work);
      else groups.set(key, [work]);
    }
    for (const group of groups.values()) {
      if (group.length < 2) continue;
      const openLibrary = group.filter((work) => work.openLibrary);
      if (openLibrary.length > 1) continue; // Open Library keeps these apart: which of them ours would join is unknown
      const survivor = openLibrary[0] ?? group.reduce((best, work) => (mostPopularFirst(work, best) < 0 ? work : best));
      for (const work of group) if (work.id !== survivor.id) merges.push({ fromId: work.id, intoId: survivor.id });
    }
    if (merges.length >= MERGES_PER_TRANSACTION) await mergeSome();
  }
  if (merges.length > 0) await mergeSome();
  return merged;
}

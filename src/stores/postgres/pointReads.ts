import type { AuthorRecord, BookRecord, Lookup, WorkRecord } from '../../domain/records.js';
import { perTurn, type Group } from '../../perTurn.js';
import { findAuthors, findBooks, findBooksByIsbn13, findWorks, type Lookups } from './catalogue.js';
import type { Queryable } from './pool.js';

/** One lookup per key, the keys of a turn read together by `find`. */
function batched<T>(find: (keys: string[]) => Promise<Lookups<T>>): (key: string) => Promise<Lookup<T>> {
  return perTurn(async (groups: Group<string>[]) => {
    const found = await find(groups.map((group) => group.key));
    return groups.map((group) => new Array<Lookup<T>>(group.count).fill(found.get(group.key) ?? null));
  });
}

/**
 * The catalogue's point lookups, as the API makes them: the lookups of one kind that arrive in the
 * same turn of the event loop share one query (`= any($1)`) instead of one round trip each. Under
 * load, when many cache misses arrive at once, that saves most of PostgreSQL's per-query work and
 * most of the system calls; a lone lookup waits for nothing but the end of its turn.
 */
export class PointReads {
  readonly book: (id: string) => Promise<Lookup<BookRecord>>;
  readonly bookByIsbn13: (isbn13: string) => Promise<Lookup<BookRecord>>;
  readonly work: (id: string) => Promise<Lookup<WorkRecord>>;
  readonly author: (id: string) => Promise<Lookup<AuthorRecord>>;

  constructor(db: Queryable) {
    this.book = batched((ids) => findBooks(db, ids));
    this.bookByIsbn13 = batched((isbns) => findBooksByIsbn13(db, isbns));
    this.work = batched((ids) => findWorks(db, ids));
    this.author = batched((ids) => findAuthors(db, ids));
  }
}

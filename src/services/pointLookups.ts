import type { Services } from './context.js';
import {
  authorById,
  bookById,
  bookByIsbn,
  followMerges,
  recordPath,
  requireId,
  requireIsbn,
  workById,
  type PointFamily,
  type Resolved,
} from './lookups.js';
import type { PointAnswer } from './pointCache.js';

/**
 * The four point lookups as their GET routes answer them (`/v1/<family>/<key>`), through the
 * 24-hour cache under the canonical URL. The GET routes, the bulk lookups and the MCP tools all go
 * through here, so each reads and fills the entries the others do.
 */

const READS: Record<PointFamily, (reads: Services['reads'], key: string) => Promise<Resolved<unknown>>> = {
  isbn: bookByIsbn,
  books: bookById,
  works: workById,
  authors: authorById,
};

/**
 * The key's one spelling, or the 400 of a key that cannot be one of its family, before the cache or
 * any store is asked: an ISBN as its ISBN-13, whatever hyphens, spaces or ISBN-10 the client sent.
 */
const CANONICAL: Record<PointFamily, (key: string) => string> = {
  isbn: (isbn) => requireIsbn(isbn).isbn13,
  books: (id) => requireId('book', id),
  works: (id) => requireId('work', id),
  authors: (id) => requireId('author', id),
};

/** Where a merged key's survivor is read: a merged edition's ISBN leads to the surviving book. */
const SURVIVOR_FAMILY: Record<PointFamily, Exclude<PointFamily, 'isbn'>> = {
  isbn: 'books',
  books: 'books',
  works: 'works',
  authors: 'authors',
};

type PointServices = Pick<Services, 'reads' | 'pointCache'>;

/**
 * What GET answers for `key` in `family`. Errors of the key (400, 404) are thrown; a key that cannot
 * be one of its family is refused before the cache is read. The answer is cached under the key's
 * canonical path (`/v1/isbn/<ISBN-13>`, `/v1/books/<id>`): however a client spells an ISBN, the
 * cache and the sets of the entities it shows hold one short entry for it. `admission` (the
 * request's rate-limit decision, under way) settles first, whatever the answer.
 */
export async function pointAnswer(
  services: PointServices,
  requestId: string,
  family: PointFamily,
  key: string,
  admission: Promise<void> = Promise.resolve(),
): Promise<PointAnswer> {
  let canonical;
  try {
    canonical = CANONICAL[family](key);
  } catch (error) {
    await admission;
    throw error;
  }
  return services.pointCache.answer(recordPath(family, canonical), requestId, () => READS[family](services.reads, canonical), admission);
}

/** A found record's JSON text, and the survivor's id when the key was merged (followed as a client follows the 301). */
export interface Followed {
  text: string;
  mergedInto: string | null;
}

/** What GET answers for `key`, a merged id or ISBN followed to the survivor's own GET. */
export async function pointFollowing(services: PointServices, requestId: string, family: PointFamily, key: string): Promise<Followed> {
  const survivorFamily = SURVIVOR_FAMILY[family];
  const { answer, mergedInto } = await followMerges(key, await pointAnswer(services, requestId, family, key), ({ mergedInto: id }) =>
    pointAnswer(services, requestId, survivorFamily, id),
  );
  return { text: answer.text, mergedInto };
}

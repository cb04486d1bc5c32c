import { z } from 'zod/v4';
import type { EntityKind } from '../domain/ids.js';
import { MAX_REDIRECT_HOPS, olKeyKind, type OlKind } from '../domain/openlibrary.js';
import { quoted } from '../domain/text.js';
import { badRequest, gone, notFound } from '../errors.js';
import { recordPath, type PointFamily } from './lookups.js';
import { openLibraryKey, survivorOf } from '../stores/postgres/openlibraryKeys.js';
import type { Queryable } from '../stores/postgres/pool.js';

/**
 * `GET /v1/openlibrary/:key`: the catalogue's record for an Open Library key (OL…M an edition, OL…W
 * a work, OL…A an author), as the URL of our record. A key Open Library redirected lands where its
 * target does; a key Open Library deleted, or a record deleted here, is a 410, never a live record.
 */

const FAMILY: Record<OlKind, { kind: EntityKind; path: Exclude<PointFamily, 'isbn'> }> = {
  edition: { kind: 'book', path: 'books' },
  work: { kind: 'work', path: 'works' },
  author: { kind: 'author', path: 'authors' },
};

/** The body of GET /v1/openlibrary/{key}'s 301: our record for the key. */
export const openLibraryTarget = z
  .object({ id: z.string(), location: z.string() })
  .meta({ id: 'OpenLibraryTarget', example: { id: 'bk_5n1x7q0c2r9a', location: '/v1/books/bk_5n1x7q0c2r9a' } });

export type OpenLibraryTarget = z.output<typeof openLibraryTarget>;

export async function resolveOpenLibraryKey(db: Queryable, asked: string): Promise<OpenLibraryTarget> {
  const kind = olKeyKind(asked);
  if (!kind) throw badRequest(`invalid Open Library key: ${quoted(asked)} is not of the form OL7353617M, OL45804W or OL23919A`);
  let key = asked;
  for (let hop = 0; hop <= MAX_REDIRECT_HOPS; hop++) {
    const row = await openLibraryKey(db, key);
    if (!row) throw notFound(`no record with Open Library key ${asked}`);
    if (row.state === 'redirect' && row.redirect_to) {
      key = row.redirect_to;
      continue;
    }
    if (row.state === 'delete' || !row.entity_id) throw gone(`Open Library deleted ${key}; the catalogue no longer has it`);
    const { kind: entity, path } = FAMILY[kind];
    const survivor = await survivorOf(db, entity, row.entity_id);
    if (!survivor) throw notFound(`no record with Open Library key ${asked}`);
    if (survivor.deleted)
      throw gone(
        `${entity} ${survivor.id} (Open Library ${asked}) was deleted: its source withdrew the record, so it is no longer in the catalogue`,
      );
    return { id: survivor.id, location: recordPath(path, survivor.id) };
  }
  throw notFound(`Open Library key ${asked} redirects more than ${MAX_REDIRECT_HOPS} times`);
}

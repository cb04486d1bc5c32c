import { hash } from 'node:crypto';
import type { OlAuthor, OlEdition, OlWork } from '../../../src/domain/openlibrary.js';
import { workKind, type WorkKind } from '../../../src/domain/titles.js';

/**
 * How Open Library's records are keyed in the catalogue, shared by the record path (apply.ts) and
 * the first load (firstLoad.ts, stage.ts): the identity keys of its books, works and authors, and
 * the digest that tells whether a revision changes what a record maps to.
 */

export const bookSourceKey = (key: string): string => `openlibrary:${key}`;
export const olNameKey = (key: string): string => `ol:${key}`;
export const olWorkKey = (key: string): string => `ol:${key}`;
// The work of an edition that names none: its own, keyed by the edition.
export const ownWorkKey = (key: string): string => `ol-edition:${key}`;

/**
 * What a record maps to, as openlibrary_records keeps it: the first 64 bits of its md5, a signed
 * bigint in decimal. One-shot hashing: a Hash object per record cost a bulk load more than the md5.
 */
export const digestOf = (mapped: OlAuthor | OlWork | OlEdition): string =>
  hash('md5', JSON.stringify(mapped), 'buffer').readBigInt64BE(0).toString();

/**
 * The kind of a work Open Library names (or of one made for an edition) from the title and subtitle
 * it is written with: Open Library titles carry no series number. The digest needs no kind of its
 * own: the title and subtitle it derives from are in it.
 */
export const olWorkKind = (named: { title: string; subtitle: string | null }): WorkKind =>
  workKind({ title: named.title, subtitle: named.subtitle, seriesNumber: null });

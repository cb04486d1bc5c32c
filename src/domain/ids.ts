import { randomBytes } from 'node:crypto';

/** The three kinds of catalogue entity; each has its own id prefix so an id shows what it names. */
export type EntityKind = 'book' | 'work' | 'author';

export const ENTITY_KINDS: readonly EntityKind[] = ['book', 'work', 'author'];

const PREFIX: Record<EntityKind, string> = { book: 'bk', work: 'wk', author: 'au' };

/** The prefix of the ids of a kind (`bk` of `bk_5n1x7q0c2r9a`), for SQL that makes ids with new_entity_id. */
export const idPrefix = (kind: EntityKind): string => PREFIX[kind];

// Crockford's base32: URL-safe, case-insensitive to read aloud, no I/L/O/U to confuse.
const ALPHABET = '0123456789abcdefghjkmnpqrstvwxyz';
const BODY_LENGTH = 12; // 60 random bits: collisions are negligible for any catalogue size

/** A new opaque, URL-safe, stable id such as `bk_5n1x7q0c2r9a`. */
export function newId(kind: EntityKind): string {
  const bytes = randomBytes(BODY_LENGTH);
  let body = '';
  for (const byte of bytes) body += ALPHABET[byte & 31];
  return `${PREFIX[kind]}_${body}`;
}

const SHAPE = new RegExp(`^(bk|wk|au)_[${ALPHABET}]{${BODY_LENGTH}}$`);

/** The kind an id names, or null when the text is not an id of this service. */
export function kindOfId(id: string): EntityKind | null {
  const match = SHAPE.exec(id);
  if (!match) return null;
  return (Object.keys(PREFIX) as EntityKind[]).find((kind) => PREFIX[kind] === match[1]) ?? null;
}

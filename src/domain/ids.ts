import { randomFillSync } from 'node:crypto';

// PostgreSQL stores each id as a 64-bit key (migration 060: public_id and entity_key convert at the
// boundary); everything in TypeScript, and everything a client sees, is the public form made here.

/** The three kinds of catalogue entity; each has its own id prefix so an id shows what it names. */
export type EntityKind = 'book' | 'work' | 'author';

export const ENTITY_KINDS: readonly EntityKind[] = ['book', 'work', 'author'];

const PREFIX: Record<EntityKind, string> = { book: 'bk', work: 'wk', author: 'au' };

/** The prefix of the ids of a kind (`bk` of `bk_5n1x7q0c2r9a`), for SQL that makes keys with new_entity_key. */
export const idPrefix = (kind: EntityKind): string => PREFIX[kind];

// Crockford's base32: URL-safe, case-insensitive to read aloud, no I/L/O/U to confuse.
const ALPHABET = '0123456789abcdefghjkmnpqrstvwxyz';
const BODY_LENGTH = 12; // 60 random bits: collisions are negligible for any catalogue size

// Random bytes are drawn from the system's generator a few hundred ids' worth at a time: a call per id
// cost a bulk load more than anything else it does per record.
const RANDOM = Buffer.alloc(BODY_LENGTH * 256);
let randomAt = RANDOM.length;

/** A new opaque, URL-safe, stable id such as `bk_5n1x7q0c2r9a`. */
export function newId(kind: EntityKind): string {
  if (randomAt === RANDOM.length) {
    randomFillSync(RANDOM);
    randomAt = 0;
  }
  let body = '';
  for (const end = randomAt + BODY_LENGTH; randomAt < end; randomAt++) body += ALPHABET[RANDOM[randomAt]! & 31];
  return `${PREFIX[kind]}_${body}`;
}

const SHAPE = new RegExp(`^(bk|wk|au)_[${ALPHABET}]{${BODY_LENGTH}}$`);

/** The kind an id names, or null when the text is not an id of this service. */
export function kindOfId(id: string): EntityKind | null {
  const match = SHAPE.exec(id);
  if (!match) return null;
  return (Object.keys(PREFIX) as EntityKind[]).find((kind) => PREFIX[kind] === match[1]) ?? null;
}

import type { Queryable } from './pool.js';

export interface ApiKeyRow {
  kid: string;
  name: string;
  secretHash: string;
  createdAt: Date;
  revokedAt: Date | null;
  /** The web origins whose pages may use the key; empty: server-side only. */
  origins: string[];
}

interface Row {
  kid: string;
  name: string;
  secret_hash: string;
  created_at: Date;
  revoked_at: Date | null;
  origins: string[];
}

const toApiKey = (row: Row): ApiKeyRow => ({
  kid: row.kid,
  name: row.name,
  secretHash: row.secret_hash,
  createdAt: row.created_at,
  revokedAt: row.revoked_at,
  origins: row.origins,
});

export async function insertApiKey(
  db: Queryable,
  kid: string,
  name: string,
  secretHash: string,
  origins: readonly string[] = [],
): Promise<void> {
  await db.query('insert into api_keys (kid, name, secret_hash, origins) values ($1, $2, $3, $4)', [kid, name, secretHash, origins]);
}

/** Sets the origins of a key (none: server-side only); returns false when no such key exists. */
export async function setApiKeyOrigins(db: Queryable, kid: string, origins: readonly string[]): Promise<boolean> {
  const { rowCount } = await db.query('update api_keys set origins = $2 where kid = $1', [kid, origins]);
  return rowCount === 1;
}

/** Replaces a key's stored hash, unless another instance replaced it first. */
export async function replaceSecretHash(db: Queryable, kid: string, from: string, to: string): Promise<void> {
  await db.query('update api_keys set secret_hash = $3 where kid = $1 and secret_hash = $2', [kid, from, to]);
}

export async function findApiKey(db: Queryable, kid: string): Promise<ApiKeyRow | null> {
  const { rows } = await db.query<Row>('select * from api_keys where kid = $1', [kid]);
  return rows[0] ? toApiKey(rows[0]) : null;
}

export async function listApiKeys(db: Queryable): Promise<ApiKeyRow[]> {
  const { rows } = await db.query<Row>('select * from api_keys order by created_at, kid');
  return rows.map(toApiKey);
}

/** Marks a key revoked; returns false when no such key exists. Revoking twice keeps the first time. */
export async function revokeApiKey(db: Queryable, kid: string): Promise<boolean> {
  const { rowCount } = await db.query('update api_keys set revoked_at = coalesce(revoked_at, now()) where kid = $1', [kid]);
  return rowCount === 1;
}

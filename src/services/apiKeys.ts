import { generateApiKey, hashSecret } from '../domain/apiKey.js';
import { insertApiKey } from '../stores/postgres/apiKeys.js';
import type { Queryable } from '../stores/postgres/pool.js';

/** Issues a key: only the scrypt hash of its secret is stored, so the returned key is shown once. */
export async function issueApiKey(db: Queryable, name: string): Promise<{ kid: string; key: string }> {
  const { kid, secret, key } = generateApiKey();
  await insertApiKey(db, kid, name, await hashSecret(secret));
  return { kid, key };
}

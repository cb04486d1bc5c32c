import { generateApiKey, hashSecret, webOrigin } from '../domain/apiKey.js';
import { insertApiKey, setApiKeyOrigins } from '../stores/postgres/apiKeys.js';
import type { Queryable } from '../stores/postgres/pool.js';

/** The origins as a key stores them: each a web origin, each once; an error naming the first that is none. */
export function keyOrigins(texts: readonly string[]): string[] {
  return [
    ...new Set(
      texts.map((text) => {
        const origin = webOrigin(text);
        if (origin === null) throw new Error(`not a web origin: "${text}" (expected scheme://host[:port], e.g. https://shelf.example)`);
        return origin;
      }),
    ),
  ];
}

/**
 * Issues a key: only a hash of its secret is stored (hashSecret), so the returned key is shown once.
 * `origins`: the web origins whose pages may use it (CORS); none for a server-side key.
 */
export async function issueApiKey(db: Queryable, name: string, origins: readonly string[] = []): Promise<{ kid: string; key: string }> {
  const { kid, secret, key } = generateApiKey();
  await insertApiKey(db, kid, name, hashSecret(secret), keyOrigins(origins));
  return { kid, key };
}

/** Replaces the origins of key `kid` (none: server-side only); false when there is no such key. */
export const changeKeyOrigins = (db: Queryable, kid: string, origins: readonly string[]): Promise<boolean> =>
  setApiKeyOrigins(db, kid, keyOrigins(origins));

import { hash, randomBytes, scrypt as scryptCallback, timingSafeEqual, type BinaryLike, type ScryptOptions } from 'node:crypto';

/** API keys look like `svc_live_<kid>_<secret>`: the kid names the key, the secret proves it. */

const PREFIX = 'svc_live_';
const KEY_SHAPE = /^svc_live_([0-9a-z]{8,32})_([0-9A-Za-z]{32,128})$/;
const ALPHABET = '0123456789abcdefghjkmnpqrstvwxyz';

export interface ParsedKey {
  kid: string;
  secret: string;
}

export function parseApiKey(text: string): ParsedKey | null {
  const match = KEY_SHAPE.exec(text);
  return match ? { kid: match[1]!, secret: match[2]! } : null;
}

function randomText(length: number): string {
  let text = '';
  for (const byte of randomBytes(length)) text += ALPHABET[byte & 31];
  return text;
}

/** A new key: a 60-bit kid and a 260-bit secret (52 base32 characters). */
export function generateApiKey(): ParsedKey & { key: string } {
  const kid = randomText(12);
  const secret = randomText(52);
  return { kid, secret, key: `${PREFIX}${kid}_${secret}` };
}

const scrypt = (password: BinaryLike, salt: BinaryLike, length: number, options: ScryptOptions) =>
  new Promise<Buffer>((resolve, reject) =>
    scryptCallback(password, salt, length, options, (error, derived) => (error ? reject(error) : resolve(derived))),
  );

/**
 * The stored form of a secret: `sha256$<digest>`, the digest in base64. A slow hash (scrypt, bcrypt)
 * protects what a person chose; this secret is 260 random bits, which no guessing reaches, and a
 * slow hash would only make each failed attempt cost the server a key derivation.
 */
export function hashSecret(secret: string): string {
  return `sha256$${hash('sha256', secret, 'base64')}`;
}

/** A stored form from before SHA-256: `scrypt$N$r$p$salt$hash`. Slow to check; replaced by hashSecret's on first use. */
export const isScryptHash = (stored: string): boolean => stored.startsWith('scrypt$');

/** Whether `secret` is the one `stored` was made from, compared in constant time; an unknown scheme never matches. */
export async function secretMatches(secret: string, stored: string): Promise<boolean> {
  const [scheme, ...parts] = stored.split('$');
  if (scheme === 'sha256') return sameBytes(hash('sha256', secret, 'buffer'), Buffer.from(parts[0] ?? '', 'base64'));
  if (scheme !== 'scrypt') return false;
  const [n, r, p, salt, digest] = parts;
  if (!salt || !digest) return false;
  const expected = Buffer.from(digest, 'base64');
  return sameBytes(
    await scrypt(secret, Buffer.from(salt, 'base64'), expected.length, { N: Number(n), r: Number(r), p: Number(p) }),
    expected,
  );
}

const sameBytes = (a: Buffer, b: Buffer): boolean => a.length === b.length && timingSafeEqual(a, b);

/**
 * A web origin a key may be used from, as browsers send it in `Origin`: `https://shelf.example` or
 * `http://localhost:5173`, scheme and host in lower case, no path. Null for anything else.
 */
export function webOrigin(text: string): string | null {
  let url: URL;
  try {
    url = new URL(text.trim());
  } catch {
    return null;
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') return null;
  // Only an origin: a path, query, fragment or credentials would never match what a browser sends.
  if (url.username || url.password || url.search || url.hash || !['', '/'].includes(url.pathname)) return null;
  return url.origin;
}

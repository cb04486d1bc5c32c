import { hash, timingSafeEqual } from 'node:crypto';
import { parseApiKey, secretMatches } from '../domain/apiKey.js';
import { isUnavailable } from '../errors.js';
import { findApiKey, type ApiKeyRow } from '../stores/postgres/apiKeys.js';
import type { Queryable } from '../stores/postgres/pool.js';

export type Verdict = { ok: true; kid: string; origins: readonly string[] } | { ok: false; reason: 'malformed' | 'invalid' | 'revoked' };

interface KnownKey {
  row: ApiKeyRow | null;
  fetchedAt: number;
  /** SHA-256 of the last secret that passed scrypt, so repeat calls skip the slow hash. */
  verifiedDigest: Buffer | null;
  refreshing: Promise<void> | null;
  /** Why the last refresh failed, while it keeps failing. */
  failure: unknown;
}

// A key row older than this is refreshed in the background; older than MAX_AGE_MS, before answering.
// Together they bound how long a revoked key keeps working on a running instance (under 5 s), as
// long as the instance can read PostgreSQL: while it is away, a key the instance knows keeps working.
const REFRESH_AFTER_MS = 1_000;
const MAX_AGE_MS = 3_000;

const digest = (secret: string): Buffer => hash('sha256', secret, 'buffer');

/**
 * Verifies API keys against their scrypt hashes. A verified secret is remembered by digest, so the
 * hot path costs one SHA-256 and a constant-time compare, not a key-derivation per request.
 */
export class Authenticator {
  private readonly known = new Map<string, KnownKey>();

  constructor(
    private readonly db: Queryable,
    private readonly now: () => number = Date.now,
  ) {}

  async verify(key: string): Promise<Verdict> {
    const parsed = parseApiKey(key);
    if (!parsed) return { ok: false, reason: 'malformed' };
    const entry = this.freshEntry(parsed.kid) ?? (await this.staleEntry(parsed.kid));
    const row = entry.row;
    if (!row) return { ok: false, reason: 'invalid' };
    const presented = digest(parsed.secret);
    const remembered = entry.verifiedDigest !== null && timingSafeEqual(entry.verifiedDigest, presented);
    if (!remembered) {
      if (!(await secretMatches(parsed.secret, row.secretHash))) return { ok: false, reason: 'invalid' };
      entry.verifiedDigest = presented;
    }
    // Only a holder of the secret learns that the key was revoked.
    return row.revokedAt ? { ok: false, reason: 'revoked' } : { ok: true, kid: parsed.kid, origins: row.origins };
  }

  /** The remembered entry when it needs no refresh: the common case, answered without waiting. */
  private freshEntry(kid: string): KnownKey | undefined {
    const entry = this.known.get(kid);
    return entry && this.now() - entry.fetchedAt <= REFRESH_AFTER_MS ? entry : undefined;
  }

  /** A new entry or one past REFRESH_AFTER_MS: refreshed in the background, or waited for past MAX_AGE_MS. */
  private async staleEntry(kid: string): Promise<KnownKey> {
    let entry = this.known.get(kid);
    if (!entry) {
      entry = { row: null, fetchedAt: 0, verifiedDigest: null, refreshing: null, failure: null };
      this.known.set(kid, entry);
    }
    entry.refreshing ??= this.refresh(kid, entry);
    if (this.now() - entry.fetchedAt > MAX_AGE_MS) {
      await entry.refreshing;
      // Without a fresh row, fail closed, unless PostgreSQL is away and the key was known before: no
      // revocation can be made meanwhile that this instance could have read.
      if (this.now() - entry.fetchedAt > MAX_AGE_MS && !(isUnavailable(entry.failure) && entry.row)) {
        if (!entry.row) this.known.delete(kid);
        throw isUnavailable(entry.failure) ? entry.failure : new Error('API key store unreachable', { cause: entry.failure });
      }
    }
    // Unknown kids are not kept: a flood of made-up kids must not grow this map.
    if (!entry.row) this.known.delete(kid);
    return entry;
  }

  /** Never rejects: a failed refresh leaves the entry stale, and `staleEntry` decides what that means. */
  private async refresh(kid: string, entry: KnownKey): Promise<void> {
    try {
      const row = await findApiKey(this.db, kid);
      if (row?.secretHash !== entry.row?.secretHash) entry.verifiedDigest = null;
      entry.row = row;
      entry.fetchedAt = this.now();
      entry.failure = null;
    } catch (error) {
      // Kept for `staleEntry` to decide: the old row stays until MAX_AGE_MS, and past it while PostgreSQL is away.
      entry.failure = error;
    } finally {
      entry.refreshing = null;
    }
  }
}

import { hash, timingSafeEqual } from 'node:crypto';
import { hashSecret, isScryptHash, parseApiKey, secretMatches } from '../domain/apiKey.js';
import { isUnavailable } from '../errors.js';
import { findApiKey, replaceSecretHash, type ApiKeyRow } from '../stores/postgres/apiKeys.js';
import type { Queryable } from '../stores/postgres/pool.js';

export type Verdict = { ok: true; kid: string; origins: readonly string[] } | { ok: false; reason: 'malformed' | 'invalid' | 'revoked' };

interface KnownKey {
  /** Null for a kid PostgreSQL does not hold: remembered too, so that it costs what a known kid costs. */
  row: ApiKeyRow | null;
  /** When PostgreSQL last answered for this kid. */
  fetchedAt: number;
  refreshing: Promise<void> | null;
  /** Why the last refresh failed, while it keeps failing. */
  failure: unknown;
  /** The last scrypt check of an old hash: which secret it hashed, when it ended (Infinity while under way), and its answer. */
  slowCheck: { digest: Buffer; endedAt: number; matched: Promise<boolean> } | null;
}

// A key row older than this is refreshed in the background; older than MAX_AGE_MS, before answering.
// Together they bound how long a revoked key keeps working on a running instance (under 5 s), as
// long as the instance can read PostgreSQL; while it is away, a key keeps working for the outage
// grace after PostgreSQL last confirmed it (KEY_OUTAGE_GRACE_S), then answers 503.
const REFRESH_AFTER_MS = 1_000;
const MAX_AGE_MS = 3_000;
// Kids remembered at most: made-up kids beyond it push out the oldest made-up ones, never a real key.
const MAX_REMEMBERED = 10_000;
// One scrypt at a time per kid, and this long between them: guesses at an old hash cannot keep the CPU busy.
const SLOW_CHECK_EVERY_MS = 1_000;
// What an unknown kid's secret is compared with: the work of a wrong secret for a known kid.
const NO_KEY_HASH = hashSecret('');

const digest = (secret: string): Buffer => hash('sha256', secret, 'buffer');

/**
 * Verifies API keys against their stored hashes (SHA-256: see hashSecret). Every well-formed key
 * costs one SHA-256 and a constant-time compare, whether its kid exists or not, so neither the time
 * nor the answer tells which kids exist. Hashes from before SHA-256 (scrypt) are checked at most
 * once a second per kid and replaced on their first success.
 */
export class Authenticator {
  private readonly known = new Map<string, KnownKey>();

  constructor(
    private readonly db: Queryable,
    private readonly outageGraceMs: number,
    private readonly now: () => number = Date.now,
  ) {}

  async verify(key: string): Promise<Verdict> {
    const parsed = parseApiKey(key);
    if (!parsed) return { ok: false, reason: 'malformed' };
    const entry = this.freshEntry(parsed.kid) ?? (await this.staleEntry(parsed.kid));
    const row = entry.row;
    const matches =
      row && isScryptHash(row.secretHash)
        ? await this.scryptMatches(entry, row, parsed.secret)
        : await secretMatches(parsed.secret, row?.secretHash ?? NO_KEY_HASH);
    if (!row || !matches) return { ok: false, reason: 'invalid' };
    // Only a holder of the secret learns that the key was revoked.
    return row.revokedAt ? { ok: false, reason: 'revoked' } : { ok: true, kid: parsed.kid, origins: row.origins };
  }

  /**
   * An old scrypt hash: one check at a time per kid, SLOW_CHECK_EVERY_MS apart. Meanwhile the secret under check
   * shares its answer and any other is refused unhashed. A match replaces the stored hash with SHA-256.
   */
  private async scryptMatches(entry: KnownKey, row: ApiKeyRow, secret: string): Promise<boolean> {
    const presented = digest(secret);
    const last = entry.slowCheck;
    if (last && this.now() - last.endedAt < SLOW_CHECK_EVERY_MS) return timingSafeEqual(last.digest, presented) && last.matched;
    const matched = secretMatches(secret, row.secretHash);
    const check = { digest: presented, endedAt: Infinity, matched };
    entry.slowCheck = check;
    const found = await matched.finally(() => {
      check.endedAt = this.now();
    });
    if (!found) return false;
    const secretHash = hashSecret(secret);
    // Not waited for by the request: if the write fails (PostgreSQL away), the next use writes it.
    replaceSecretHash(this.db, row.kid, row.secretHash, secretHash).catch(() => undefined);
    entry.row = { ...row, secretHash };
    return true;
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
      entry = { row: null, fetchedAt: 0, refreshing: null, failure: null, slowCheck: null };
      this.remember(kid, entry);
    }
    entry.refreshing ??= this.refresh(kid, entry);
    if (this.now() - entry.fetchedAt > MAX_AGE_MS) {
      await entry.refreshing;
      // Without a fresh row, fail closed, unless PostgreSQL is away and confirmed the key within the
      // grace: a revocation made meanwhile cannot be read, so how long a key outlives one is bounded.
      const age = this.now() - entry.fetchedAt;
      if (age > MAX_AGE_MS && !(isUnavailable(entry.failure) && entry.row && age <= this.outageGraceMs)) {
        throw isUnavailable(entry.failure) ? entry.failure : new Error('API key store unreachable', { cause: entry.failure });
      }
    }
    return entry;
  }

  /** Adds an entry; past MAX_REMEMBERED, the oldest entry of an unknown kid makes room. */
  private remember(kid: string, entry: KnownKey): void {
    if (this.known.size >= MAX_REMEMBERED) {
      for (const [oldKid, old] of this.known)
        if (!old.row && !old.refreshing) {
          this.known.delete(oldKid);
          break;
        }
    }
    this.known.set(kid, entry);
  }

  /** Never rejects: a failed refresh leaves the entry stale, and `staleEntry` decides what that means. */
  private async refresh(kid: string, entry: KnownKey): Promise<void> {
    try {
      const row = await findApiKey(this.db, kid);
      if (row?.secretHash !== entry.row?.secretHash) entry.slowCheck = null;
      entry.row = row;
      entry.fetchedAt = this.now();
      entry.failure = null;
    } catch (error) {
      // Kept for `staleEntry` to decide: the old row stays until MAX_AGE_MS, and past it within the outage grace.
      entry.failure = error;
    } finally {
      entry.refreshing = null;
    }
  }
}

import type { JWK } from 'jose';
import { QUOTE_TOKEN_LIFETIME_SECONDS } from './claims.ts';

/** One signing key as stored: the private half never leaves the store, the public one is published. */
export interface StoredKey {
  kid: string;
  privateJwk: JWK;
  publicJwk: JWK;
  createdAt: number;
  /** When a newer key replaced it for signing; it still verifies until its last token expires. */
  retiredAt?: number;
}

export interface KeyRing {
  keys: StoredKey[];
}

/** Clock skew allowed between the process that signed and the one that verifies. */
export const KEY_RETENTION_LEEWAY_MS = 60_000;
/** How long a retired key keeps verifying: a quote token's lifetime plus leeway. */
export const QUOTE_KEY_RETENTION_MS = QUOTE_TOKEN_LIFETIME_SECONDS * 1000 + KEY_RETENTION_LEEWAY_MS;

/** The key new tokens are signed with: the newest one not retired. */
export const activeKey = (ring: KeyRing): StoredKey | undefined =>
  ring.keys.filter((k) => k.retiredAt === undefined).sort((a, b) => b.createdAt - a.createdAt)[0];

/**
 * A retired key is kept while something it signed may still need verifying: a quote token for
 * its lifetime (the default); an audit checkpoint for ever (retention Infinity).
 */
const stillNeeded = (k: StoredKey, nowMs: number, retentionMs: number) =>
  k.retiredAt === undefined || k.retiredAt + retentionMs > nowMs;

/** Keys that verify now: the active one and those retired less than `retentionMs` ago. */
export const verifyingKeys = (
  ring: KeyRing,
  nowMs: number,
  retentionMs = QUOTE_KEY_RETENTION_MS,
): StoredKey[] => ring.keys.filter((k) => stillNeeded(k, nowMs, retentionMs));

/**
 * Rotation: `fresh` signs from now on, the previous active key is retired (kept for
 * verification until its tokens expire), keys no token can need any more are dropped.
 */
export function rotateRing(
  ring: KeyRing,
  fresh: StoredKey,
  nowMs: number,
  retentionMs = QUOTE_KEY_RETENTION_MS,
): KeyRing {
  const keys = ring.keys
    .map((k) => (k.retiredAt === undefined ? { ...k, retiredAt: nowMs } : k))
    .filter((k) => stillNeeded(k, nowMs, retentionMs));
  return { keys: [...keys, fresh] };
}

/** Public JWKS entries: what /.well-known/jwks.json serves. */
export const publicJwks = (
  ring: KeyRing,
  nowMs: number,
  retentionMs = QUOTE_KEY_RETENTION_MS,
): { keys: JWK[] } => ({
  keys: verifyingKeys(ring, nowMs, retentionMs).map((k) => ({
    ...k.publicJwk,
    kid: k.kid,
    alg: 'ES256',
    use: 'sig',
  })),
});

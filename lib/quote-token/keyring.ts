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
const RETENTION_MS = QUOTE_TOKEN_LIFETIME_SECONDS * 1000 + KEY_RETENTION_LEEWAY_MS;

/** The key new tokens are signed with: the newest one not retired. */
export const activeKey = (ring: KeyRing): StoredKey | undefined =>
  ring.keys.filter((k) => k.retiredAt === undefined).sort((a, b) => b.createdAt - a.createdAt)[0];

/** A retired key is kept while a token it signed can still be unexpired. */
const stillNeeded = (k: StoredKey, nowMs: number) =>
  k.retiredAt === undefined || k.retiredAt + RETENTION_MS > nowMs;

/** Keys that verify tokens now: the active one and those retired less than a token lifetime ago. */
export const verifyingKeys = (ring: KeyRing, nowMs: number): StoredKey[] =>
  ring.keys.filter((k) => stillNeeded(k, nowMs));

/**
 * Rotation: `fresh` signs from now on, the previous active key is retired (kept for
 * verification until its tokens expire), keys no token can need any more are dropped.
 */
export function rotateRing(ring: KeyRing, fresh: StoredKey, nowMs: number): KeyRing {
  const keys = ring.keys
    .map((k) => (k.retiredAt === undefined ? { ...k, retiredAt: nowMs } : k))
    .filter((k) => stillNeeded(k, nowMs));
  return { keys: [...keys, fresh] };
}

/** Public JWKS entries: what /.well-known/jwks.json serves. */
export const publicJwks = (ring: KeyRing, nowMs: number): { keys: JWK[] } => ({
  keys: verifyingKeys(ring, nowMs).map((k) => ({ ...k.publicJwk, kid: k.kid, alg: 'ES256', use: 'sig' })),
});

import type { JWK } from 'jose';
import { QUOTE_TOKEN_LIFETIME_SECONDS } from './claims.ts';

/** One signing key as stored: the private half never leaves the store, the public one is published. */
export interface StoredKey {
  kid: string;
  privateJwk: JWK;
  publicJwk: JWK;
  createdAt: number;
  /**
   * When it starts signing (absent: at once). Until then it is *pending*: published and
   * verifying but not signing, so every replica learns it before any replica signs with it.
   */
  signsFrom?: number;
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

const signsFrom = (k: StoredKey) => k.signsFrom ?? k.createdAt;

/** The key new tokens are signed with at `nowMs`: the newest one that has started signing and is not retired. */
export const activeKey = (ring: KeyRing, nowMs: number): StoredKey | undefined =>
  ring.keys
    .filter((k) => signsFrom(k) <= nowMs && (k.retiredAt === undefined || k.retiredAt > nowMs))
    .sort((a, b) => signsFrom(b) - signsFrom(a) || b.createdAt - a.createdAt)[0];

/** The next instant after `nowMs` at which the signing key changes by itself (a pending key starts). */
export const nextSigningChange = (ring: KeyRing, nowMs: number): number =>
  Math.min(
    Number.POSITIVE_INFINITY,
    ...ring.keys
      .flatMap((k) => [signsFrom(k), k.retiredAt ?? Number.POSITIVE_INFINITY])
      .filter((t) => t > nowMs),
  );

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
 * Rotation: `fresh` is published at once and signs from `nowMs + publishForMs` (pending until
 * then); the keys signing or pending before it retire at that instant (kept for verification
 * until their tokens expire); keys no token can need any more are dropped. With a publishing
 * period longer than the time the ring takes to reach every replica, no replica ever receives a
 * token signed with a key it does not know yet.
 */
export function rotateRing(
  ring: KeyRing,
  fresh: StoredKey,
  nowMs: number,
  retentionMs = QUOTE_KEY_RETENTION_MS,
  publishForMs = 0,
): KeyRing {
  const startsAt = nowMs + publishForMs;
  const keys = ring.keys
    .map((k) => (k.retiredAt === undefined ? { ...k, retiredAt: startsAt } : k))
    .filter((k) => stillNeeded(k, nowMs, retentionMs));
  return { keys: [...keys, publishForMs > 0 ? { ...fresh, signsFrom: startsAt } : fresh] };
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

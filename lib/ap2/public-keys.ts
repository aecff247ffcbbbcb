import { createPublicKey, type JsonWebKey, type KeyObject } from 'node:crypto';
import { LRUCache } from 'lru-cache';

/**
 * Public keys parsed from JWKs, kept once parsed. A completion with an AP2 mandate verifies three
 * signatures (the platform's over the mandate, the user's key binding, ours inside the checkout)
 * and importing each JWK cost more than verifying with it: in the completion's CPU profile
 * (`node --cpu-prof` over bench/tools/ucp-signing-cost.ts), the JWK imports took 17 % of the time,
 * the three ECDSA verifications 12 %. A platform's keys and a user's holder key recur across its
 * completions, and ours across all of them. Keyed by the public members alone (a private `d`
 * never reaches the cache), bounded.
 */
const parsed = new LRUCache<string, KeyObject>({ max: 2048 });

/**
 * The members that make a public key, by its type (RFC 7518 §6, RFC 8037 §2): only these are
 * read and kept as its identity, so a member another type uses (an `n` beside an EC key's `x`
 * and `y`, which the import ignores) neither makes a second entry nor a long one. A key that
 * names none of these types keeps every member and is refused as createPublicKey refuses it.
 */
const PUBLIC: Readonly<Record<string, readonly string[]>> = {
  EC: ['kty', 'crv', 'x', 'y'],
  OKP: ['kty', 'crv', 'x'],
  RSA: ['kty', 'n', 'e'],
};
const ANY = ['kty', 'crv', 'x', 'y', 'n', 'e'];

/** The JWK's public key; throws as createPublicKey does for one that is not a key. */
export function publicKeyOf(jwk: Readonly<Record<string, unknown>>): KeyObject {
  const members = PUBLIC[String(jwk.kty)] ?? ANY;
  const pub: Record<string, unknown> = {};
  for (const m of members) if (jwk[m] !== undefined) pub[m] = jwk[m];
  const id = JSON.stringify(members.map((m) => pub[m] ?? null));
  let key = parsed.get(id);
  if (!key) {
    key = createPublicKey({ key: pub as JsonWebKey, format: 'jwk' });
    parsed.set(id, key);
  }
  return key;
}

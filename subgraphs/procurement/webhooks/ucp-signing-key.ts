import type { KeyObject } from 'node:crypto';
import { join } from 'node:path';
import type { JWK } from 'jose';
import type { Clock } from '../../../lib/clock.ts';
import { systemClock } from '../../../lib/clock.ts';
import type { Config } from '../../../lib/config.ts';
import { FileQuoteKeyStore } from '../../../lib/quote-token/key-store.ts';

/**
 * The business's key for UCP order webhooks (docs/ucp-webhooks.md). UCP signs with ECDSA P-256
 * (signatures.md: "ES256 (required)", "Signers SHOULD use P-256"), keys are JWKs with a `kid`
 * published in the business profile's `signing_keys`. Kept like this system's other ES256 keys
 * (the quote-token and audit-checkpoint rings): a JSON key ring readable by its owner only,
 * created with one key on first use, `kid` the key's RFC 7638 thumbprint, shared by every
 * process that reads the same file (set UCP_SIGNING_KEYS_FILE on a shared secret volume when
 * procurement and gateway processes run apart; DATA_DIR/keys/ucp-signing.json otherwise).
 */

/** A retired key stays in signing_keys this long: signatures.md's rotation grace period ("minimum 7 days"). */
export const UCP_KEY_RETENTION_MS = 7 * 86_400_000;

export type UcpKeyConfig = Pick<Config, 'UCP_SIGNING_KEYS_FILE' | 'DATA_DIR'>;

export const ucpSigningKeysFile = (config: UcpKeyConfig): string =>
  config.UCP_SIGNING_KEYS_FILE ?? join(config.DATA_DIR, 'keys', 'ucp-signing.json');

/** One store per file and process: the signer and the profile read the same ring. */
const opened = new Map<string, Promise<FileQuoteKeyStore>>();

/** The key ring (opened once per file; created with one key when the file does not exist). */
export function ucpSigningKeys(config: UcpKeyConfig, clock: Clock = systemClock): Promise<FileQuoteKeyStore> {
  const file = ucpSigningKeysFile(config);
  let store = opened.get(file);
  if (!store) {
    store = FileQuoteKeyStore.open(file, clock, { retentionMs: UCP_KEY_RETENTION_MS });
    // A failed open is not cached: the next call tries again.
    store.catch(() => opened.delete(file));
    opened.set(file, store);
  }
  return store;
}

/**
 * The public keys for the business profile's `signing_keys` (discovery/profile_schema.json
 * `signing_key`): every key that signs or may still have signed a webhook in the last 7 days, as
 * `{kid, kty: "EC", crv: "P-256", x, y, use: "sig", alg: "ES256"}`.
 */
export async function ucpPublicJwks(config: UcpKeyConfig, clock?: Clock): Promise<JWK[]> {
  return (await fresh(config, clock)).jwks().keys;
}

/**
 * The key that signs a webhook now. Webhooks and profile reads are rare next to quote tokens, so
 * each looks at the file first (a stat; the ring is re-read only when it changed): a rotation made
 * by another process is used from the next attempt on, not some seconds later.
 */
export async function ucpSigningKey(
  config: UcpKeyConfig,
  clock?: Clock,
): Promise<{ kid: string; key: KeyObject }> {
  return (await fresh(config, clock)).signingKey();
}

/**
 * The keys of the UCP request path, where every answer is signed (RFC 9421) and, with AP2, every
 * checkout too: the ring as this process holds it, re-read when it changed at most every 5 s
 * (FileQuoteKeyStore's own reload), and at once when asked for a kid it does not hold (a key
 * another process rotated in and already signs with). `fresh()`'s stat before each signature was
 * a synchronous call on the request thread, several a checkout flow (docs/ap2.md, "Not done yet").
 */
export function ucpRequestKeys(config: UcpKeyConfig, clock?: Clock) {
  const ring = () => ucpSigningKeys(config, clock);
  return {
    signingKey: async (): Promise<{ kid: string; key: KeyObject }> => (await ring()).signingKey(),
    /** Every key still verifying; with `kid`, the ring re-read first if it does not hold it. */
    verifyingKeys: async (kid?: string): Promise<JWK[]> => {
      const r = await ring();
      if (kid !== undefined) await r.verificationKey(kid);
      return r.jwks().keys;
    },
  };
}

async function fresh(config: UcpKeyConfig, clock?: Clock): Promise<FileQuoteKeyStore> {
  const ring = await ucpSigningKeys(config, clock);
  await ring.reload();
  return ring;
}

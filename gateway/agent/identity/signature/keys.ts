import { createPublicKey, type JsonWebKey, type KeyObject } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createVerifier, type Verifier } from 'http-message-signatures';
import { calculateJwkThumbprint, type JWK } from 'jose';
import { z } from 'zod';
import { parseSpiffeId } from '../../../../lib/auth/spiffe.ts';

import type { SignatureAlgorithm } from '../../../../lib/http-signature/sign.ts';

/** The RFC 9421 algorithms an agent key may sign with (Web Bot Auth: Ed25519; ES256 for P-256 keys). */
export type { SignatureAlgorithm };

/** One registered public key: whose it is, what it signs with, and how to check a signature. */
export interface AgentKey {
  /** RFC 7638 JWK SHA-256 thumbprint, base64url: the Web Bot Auth `keyid`. */
  readonly keyid: string;
  readonly spiffeId: string;
  readonly alg: SignatureAlgorithm;
  readonly verify: Verifier;
}

export type AgentKeyRegistry = ReadonlyMap<string, AgentKey>;

export class SignatureKeysError extends Error {
  override name = 'SignatureKeysError';
}

const b64url = z.string().regex(/^[A-Za-z0-9_-]+$/, 'must be base64url');
const ed25519 = z.object({ kty: z.literal('OKP'), crv: z.literal('Ed25519'), x: b64url });
const p256 = z.object({ kty: z.literal('EC'), crv: z.literal('P-256'), x: b64url, y: b64url });
const jwk = z
  .object({ d: z.undefined({ message: 'is a private key (d): register the public key only' }) })
  .passthrough()
  .pipe(z.union([ed25519.passthrough(), p256.passthrough()]));
const file = z.record(z.string(), z.object({ keys: z.array(jwk).min(1) }));

const ALG_OF = { OKP: 'ed25519', EC: 'ecdsa-p256-sha256' } as const;
/** A JWK's own `alg`, when it states one, must agree with its curve. */
const JOSE_ALG = { OKP: ['EdDSA', 'Ed25519'], EC: ['ES256'] } as const;

/**
 * Reads the registry once at start-up: `{ "<SPIFFE ID>": { "keys": [<public JWK>, …] }, … }`.
 * A file that does not hold exactly that stops the process with a message naming the entry:
 * a key silently skipped would turn into 401s nobody can explain.
 */
export async function loadAgentKeys(path: string | undefined): Promise<AgentKeyRegistry> {
  const registry = new Map<string, AgentKey>();
  if (!path) return registry;
  let raw: unknown;
  try {
    raw = JSON.parse(readFileSync(path, 'utf8'));
  } catch (err) {
    throw new SignatureKeysError(
      `AGENT_SIGNATURE_KEYS: cannot read ${path} as JSON (${(err as Error).message})`,
    );
  }
  const parsed = file.safeParse(raw);
  if (!parsed.success) {
    const i = parsed.error.issues[0];
    throw new SignatureKeysError(
      `AGENT_SIGNATURE_KEYS: ${i?.path.join('.') ?? ''}: ${i?.message ?? 'invalid'}`,
    );
  }
  for (const [id, set] of Object.entries(parsed.data)) {
    const spiffe = parseSpiffeId(id);
    if (!spiffe.ok)
      throw new SignatureKeysError(`AGENT_SIGNATURE_KEYS: ${id} is not a SPIFFE ID (${spiffe.reason})`);
    for (const [n, k] of set.keys.entries()) {
      const where = `AGENT_SIGNATURE_KEYS: ${id} key ${n}`;
      const stated = (k as { alg?: unknown }).alg;
      if (stated !== undefined && !(JOSE_ALG[k.kty] as readonly unknown[]).includes(stated))
        throw new SignatureKeysError(`${where}: alg ${String(stated)} does not match a ${k.crv} key`);
      let key: KeyObject;
      try {
        key = createPublicKey({ key: k as JsonWebKey, format: 'jwk' });
      } catch (err) {
        throw new SignatureKeysError(`${where}: not a valid ${k.crv} public key (${(err as Error).message})`);
      }
      const keyid = await calculateJwkThumbprint(k as JWK, 'sha256');
      const taken = registry.get(keyid);
      if (taken)
        throw new SignatureKeysError(`${where}: the same key is already registered for ${taken.spiffeId}`);
      const alg = ALG_OF[k.kty];
      registry.set(keyid, { keyid, spiffeId: spiffe.value.id, alg, verify: createVerifier(key, alg) });
    }
  }
  return registry;
}

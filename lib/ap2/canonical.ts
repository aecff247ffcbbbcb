import { createHash } from 'node:crypto';
import { createRequire } from 'node:module';

/**
 * RFC 8785 (JCS) for AP2 (ap2-mandates.md, "Canonicalization"): mandates are kept as evidence and
 * verified later by parties that may have re-serialized the JSON, so the signed bytes are the
 * canonical form of the logical content, never the bytes that were sent. The `canonicalize`
 * package is the RFC's reference implementation (its author's); it throws on what JSON cannot
 * carry (a non-finite number, a BigInt), and answers undefined for undefined. It is CommonJS
 * (`module.exports = serialize`) typed as an ES default export, which NodeNext reads as the
 * module object: required, so node, vitest and tsc agree on what is called.
 */
const canonicalize = createRequire(import.meta.url)('canonicalize') as (value: unknown) => string | undefined;

/** The JCS bytes of a JSON value. */
export function jcs(value: unknown): Buffer {
  const text = canonicalize(value);
  if (text === undefined) throw new TypeError('JCS: the value has no JSON form');
  return Buffer.from(text, 'utf8');
}

/** A checkout as the business signs it: every member but `ap2` ("exclude `ap2` … entirely"). */
export function withoutAp2(checkout: Record<string, unknown>): Record<string, unknown> {
  const { ap2: _ap2, ...rest } = checkout;
  return rest;
}

/** SHA-256 of the UTF-8 bytes of a string, base64url (a mandate's identity in the replay guard and the evidence). */
export const sha256b64url = (s: string | Buffer): string =>
  createHash('sha256').update(s).digest('base64url');

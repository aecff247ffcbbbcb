import { createHash } from 'node:crypto';
import { createRequire } from 'node:module';
import type { configure as Configure } from 'safe-stable-stringify';

/**
 * RFC 8785 (JCS) for AP2 (ap2-mandates.md, "Canonicalization"): mandates are kept as evidence and
 * verified later by parties that may have re-serialized the JSON, so the signed bytes are the
 * canonical form of the logical content, never the bytes that were sent.
 *
 * JCS of a JSON value is ECMAScript's JSON.stringify with every object's members sorted by their
 * names' UTF-16 code units (RFC 8785 §3.2: its numbers and strings are JSON.stringify's). That is
 * what `safe-stable-stringify` writes with `deterministic` (its sort compares names with `>`, code
 * unit by code unit; numbers are `String(n)`, strings JSON.stringify's escapes), and with
 * `strict` and `circularValue: Error` it throws on what JSON cannot carry (a non-finite number, a
 * BigInt, a function, a cycle), as RFC 8785 asks. It replaced the `canonicalize` package (the
 * RFC's reference code) on the request path: on the bench's checkout (1.4 kB of JCS) canonicalize
 * allocated ~49 kB a call and took 32–160 µs, this ~18 kB and 24 µs (in process, young
 * generation 256 MB, median of 8 batches of 50; issue 50's "garbage per AP2 flow", four JCS a
 * flow). test/ap2/canonical.test.ts holds it byte-equal to canonicalize over random JSON (any
 * Unicode, lone surrogates, numeric member names, RFC 8785's number examples); the tests check
 * our signatures with jose over canonicalize's bytes. Required (CommonJS), as node, vitest and
 * tsc then agree on what is called.
 */
const configure = (createRequire(import.meta.url)('safe-stable-stringify') as { configure: typeof Configure })
  .configure;
const canonicalize = configure({
  deterministic: true,
  strict: true,
  circularValue: Error,
  bigint: false,
}) as (value: unknown) => string | undefined;

/** The JCS text of a JSON value (the signing payload is its UTF-8 bytes). */
export function jcsText(value: unknown): string {
  const text = canonicalize(value);
  if (text === undefined) throw new TypeError('JCS: the value has no JSON form');
  return text;
}

/** The JCS bytes of a JSON value. */
export const jcs = (value: unknown): Buffer => Buffer.from(jcsText(value), 'utf8');

/** A checkout as the business signs it: every member but `ap2` ("exclude `ap2` … entirely"). */
export function withoutAp2(checkout: Record<string, unknown>): Record<string, unknown> {
  const { ap2: _ap2, ...rest } = checkout;
  return rest;
}

/** SHA-256 of the UTF-8 bytes of a string, base64url (a mandate's identity in the replay guard and the evidence). */
export const sha256b64url = (s: string | Buffer): string =>
  createHash('sha256').update(s).digest('base64url');

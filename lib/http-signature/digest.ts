import { createHash, timingSafeEqual } from 'node:crypto';
import { parseDictionary } from 'structured-headers';

/** RFC 9530 algorithms accepted in Content-Digest (the two the IANA registry calls standard). */
const ALGORITHMS = { 'sha-256': 'sha256', 'sha-512': 'sha512' } as const;
type DigestAlgorithm = keyof typeof ALGORITHMS;

/** What a signed Content-Digest promises about the body: one or more digests to match. */
export type ExpectedDigest = readonly { readonly alg: DigestAlgorithm; readonly value: Buffer }[];

/**
 * Reads a Content-Digest field (a structured dictionary of byte sequences). Unknown algorithms
 * are ignored as RFC 9530 allows, but at least one of sha-256 / sha-512 must be there; every
 * known one present must match the body (an attacker cannot pair a right digest with a wrong one).
 */
export function parseContentDigest(
  field: string,
): { ok: true; expected: ExpectedDigest } | { ok: false; reason: string } {
  let dict: ReturnType<typeof parseDictionary>;
  try {
    dict = parseDictionary(field);
  } catch {
    return { ok: false, reason: 'Content-Digest is not a structured dictionary' };
  }
  const expected: { alg: DigestAlgorithm; value: Buffer }[] = [];
  for (const [name, member] of dict) {
    if (!(name in ALGORITHMS)) continue;
    const bytes = member[0];
    if (!(bytes instanceof ArrayBuffer))
      return { ok: false, reason: `Content-Digest ${name} is not a byte sequence` };
    expected.push({ alg: name as DigestAlgorithm, value: Buffer.from(bytes) });
  }
  if (expected.length === 0) return { ok: false, reason: 'Content-Digest has no sha-256 or sha-512 digest' };
  return { ok: true, expected };
}

/** True when every expected digest is the digest of exactly these bytes. */
export function bodyMatches(expected: ExpectedDigest, body: Buffer): boolean {
  return expected.every(({ alg, value }) => {
    const actual = createHash(ALGORITHMS[alg]).update(body).digest();
    return actual.length === value.length && timingSafeEqual(actual, value);
  });
}

/** The Content-Digest field a signer sends for a body (scripts/sign-request.ts, the UCP order webhooks, tests). */
export const contentDigest = (body: Buffer | string, alg: DigestAlgorithm = 'sha-256'): string =>
  `${alg}=:${createHash(ALGORITHMS[alg]).update(body).digest('base64')}:`;

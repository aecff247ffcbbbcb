/**
 * The parsed public keys of lib/ap2/public-keys.ts: one KeyObject per public key whatever else
 * the JWK carries (kid, alg, a private `d`), never one key for another, and a JWK that is not a
 * key refused as createPublicKey refuses it.
 */
import { generateKeyPairSync } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { publicKeyOf } from '../../lib/ap2/public-keys.ts';

const jwkOf = () =>
  generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey.export({ format: 'jwk' }) as Record<
    string,
    unknown
  >;

describe('publicKeyOf', () => {
  it('parses a key once: the same public key with another kid, alg or its private part is the same object', () => {
    const full = jwkOf();
    const { d: _d, ...pub } = full;
    const first = publicKeyOf({ ...pub, kid: 'a' });
    expect(first.type).toBe('public');
    expect(publicKeyOf({ ...pub, kid: 'b', alg: 'ES256' })).toBe(first);
    expect(publicKeyOf(full)).toBe(first);
    expect(first.export({ format: 'jwk' })).toEqual({ kty: 'EC', crv: 'P-256', x: pub.x, y: pub.y });
  });

  it("keys an EC key by its own members: another type's member beside them (an RSA n) is not read", () => {
    const { d: _d, ...pub } = jwkOf();
    const first = publicKeyOf(pub);
    const padded = { ...pub, n: 'A'.repeat(200_000), e: 'AQAB' };
    expect(publicKeyOf(padded)).toBe(first);
  });

  it('never answers one key for another', () => {
    const a = publicKeyOf(jwkOf());
    const b = publicKeyOf(jwkOf());
    expect(a).not.toBe(b);
    expect(a.equals(b)).toBe(false);
  });

  it.each([
    ['no kty', { crv: 'P-256', x: 'AA', y: 'AA' }],
    ['a point off the curve', { kty: 'EC', crv: 'P-256', x: 'AAAA', y: 'AAAA' }],
    ['an unknown curve', { kty: 'EC', crv: 'P-999', x: 'AA', y: 'AA' }],
  ])('refuses %s', (_name, jwk) => {
    expect(() => publicKeyOf(jwk)).toThrow();
  });
});

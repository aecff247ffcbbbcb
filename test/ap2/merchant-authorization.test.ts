/**
 * The business's detached JWS over a checkout (lib/ap2/merchant-authorization.ts), as
 * properties over random checkouts (fast-check): it verifies with the public key whatever the
 * member order (JCS), never with another key, and no longer after any member changes or is
 * added; `ap2` itself is outside the signature. Checked independently with jose's compactVerify
 * over canonicalize's bytes, and refusals of a forged header (alg none, HS256, an unknown kid).
 */
import { generateKeyPairSync } from 'node:crypto';
import { createRequire } from 'node:module';
import fc from 'fast-check';
import { compactVerify, exportJWK, type JWK } from 'jose';
import { describe, expect, it } from 'vitest';
import { es256Sign } from '../../lib/ap2/ecdsa.ts';
import {
  signMerchantAuthorization,
  verifyMerchantAuthorization,
} from '../../lib/ap2/merchant-authorization.ts';

const canonicalize = createRequire(import.meta.url)('canonicalize') as (v: unknown) => string;
const pair = () => generateKeyPairSync('ec', { namedCurve: 'P-256' });
const ours = pair();
const theirs = pair();
const jwkOf = async (k: typeof ours, kid: string): Promise<JWK> => ({
  ...(await exportJWK(k.publicKey)),
  kid,
  alg: 'ES256',
});
const KEYS = [await jwkOf(ours, 'merchant-1')];
const sign = (c: Record<string, unknown>) =>
  signMerchantAuthorization(c, { kid: 'merchant-1', key: ours.privateKey });
const withSig = (c: Record<string, unknown>, jws: string) => ({ ...c, ap2: { merchant_authorization: jws } });

/** A checkout-like object: JSON members of any kind (no `ap2`, which the signature leaves out). */
const checkout = fc
  .dictionary(
    fc.string({ minLength: 1, maxLength: 8 }).filter((k) => k !== 'ap2' && k !== '__proto__'),
    fc.jsonValue({ maxDepth: 3 }),
    { minKeys: 1, maxKeys: 8 },
  )
  .map((d) => ({ id: 'cs_1', ...d }));

const reversed = (c: Record<string, unknown>) => Object.fromEntries(Object.entries(c).reverse());

describe('ap2.merchant_authorization (detached JWS over JCS)', () => {
  it('asks a key ring given as a function for the kid its header names', async () => {
    const c = { id: 'cs_1', total: 100 };
    const asked: string[] = [];
    const ring = async (kid: string) => {
      asked.push(kid);
      return KEYS;
    };
    expect(await verifyMerchantAuthorization(withSig(c, await sign(c)), ring)).toEqual({
      ok: true,
      kid: 'merchant-1',
    });
    expect(asked).toEqual(['merchant-1']);
  });

  it('verifies whatever the member order, with our key only; jose agrees over the JCS bytes', async () => {
    await fc.assert(
      fc.asyncProperty(checkout, async (c) => {
        const jws = await sign(c);
        expect(jws).toMatch(/^[A-Za-z0-9_-]+\.\.[A-Za-z0-9_-]+$/);
        expect((await verifyMerchantAuthorization(withSig(reversed(c), jws), KEYS)).ok).toBe(true);
        expect(
          (await verifyMerchantAuthorization(withSig(c, jws), [await jwkOf(theirs, 'merchant-1')])).ok,
        ).toBe(false);
        const [h, , s] = jws.split('.');
        const payload = Buffer.from(canonicalize(c)).toString('base64url');
        await expect(compactVerify(`${h}.${payload}.${s}`, ours.publicKey)).resolves.toBeTruthy();
      }),
      { numRuns: 60 },
    );
  });

  it('no longer verifies once any member changes or one is added; ap2 is not signed', async () => {
    await fc.assert(
      fc.asyncProperty(
        checkout,
        fc.string({ minLength: 1, maxLength: 8 }),
        fc.jsonValue({ maxDepth: 2 }),
        async (c, k, v) => {
          fc.pre(k !== 'ap2' && k !== '__proto__');
          const changed = { ...c, [k]: v };
          fc.pre(canonicalize(changed) !== canonicalize(c));
          const jws = await sign(c);
          expect((await verifyMerchantAuthorization(withSig(changed, jws), KEYS)).ok).toBe(false);
          const extra = { ...withSig(c, jws), ap2: { merchant_authorization: jws, checkout_mandate: 'x' } };
          expect((await verifyMerchantAuthorization(extra, KEYS)).ok).toBe(true);
        },
      ),
      { numRuns: 60 },
    );
  });

  it.each([
    ['alg none', { alg: 'none', kid: 'merchant-1' }],
    ['HS256 (an HMAC with the public key)', { alg: 'HS256', kid: 'merchant-1' }],
    ['an unknown kid', { alg: 'ES256', kid: 'someone' }],
    ['no kid', { alg: 'ES256' }],
  ])('refuses a header with %s', async (_what, header) => {
    const c = { id: 'cs_1', totals: [{ type: 'total', amount: 100 }] };
    const [, , s] = (await sign(c)).split('.');
    const h = Buffer.from(JSON.stringify(header)).toString('base64url');
    const r = await verifyMerchantAuthorization(withSig(c, `${h}..${s}`), KEYS);
    expect(r.ok).toBe(false);
  });

  it.each([
    ['crit', { crit: ['exp'], exp: 1 }],
    ['b64: false (RFC 7797)', { b64: false, crit: ['b64'] }],
    ['b64: true', { b64: true }],
  ])('refuses a correctly signed header that asks for %s (RFC 7515 §4.1.11)', async (_what, extra) => {
    const c = { id: 'cs_1', totals: [{ type: 'total', amount: 100 }] };
    const signedWith = (header: Record<string, unknown>) => {
      const h = Buffer.from(JSON.stringify(header)).toString('base64url');
      const payload = Buffer.from(canonicalize(c)).toString('base64url');
      return `${h}..${es256Sign(`${h}.${payload}`, ours.privateKey)}`;
    };
    const plain = { alg: 'ES256', kid: 'merchant-1' };
    // The same signing without the extension verifies: the refusal is the header's alone.
    expect(await verifyMerchantAuthorization(withSig(c, signedWith(plain)), KEYS)).toMatchObject({
      ok: true,
    });
    expect(
      await verifyMerchantAuthorization(withSig(c, signedWith({ ...plain, ...extra })), KEYS),
    ).toMatchObject({ ok: false, missing: false, reason: expect.stringMatching(/crit, b64/) });
  });

  it('tells a missing signature from a bad one', async () => {
    const c = { id: 'cs_1' };
    expect(await verifyMerchantAuthorization(c, KEYS)).toMatchObject({ ok: false, missing: true });
    expect(await verifyMerchantAuthorization(withSig(c, 'a.b.c'), KEYS)).toMatchObject({
      ok: false,
      missing: false,
    });
  });
});

/**
 * lib/http-signature/sign.ts's signHttpResponse writes the common response signature itself
 * (issue 50's allocation pass) and leaves the rest to http-message-signatures. Against the
 * library, over random statuses, bodies, content types, key ids and labels, both key kinds: the
 * Content-Digest and the Signature-Input are the library's byte for byte (the signature base is
 * then the same text), and the Signature verifies with the library's verifyMessage (ECDSA and
 * Ed25519 signatures are checked, not compared: ECDSA's are randomized). What the direct path
 * does not write (a derived component other than @status, a parameter other than created and
 * keyid, a key id that needs escaping, a value with surrounding space) still gets the
 * library's signature.
 */
import { generateKeyPairSync, type KeyObject } from 'node:crypto';
import fc from 'fast-check';
import { createVerifier, httpbis } from 'http-message-signatures';
import { describe, expect, it } from 'vitest';
import {
  algorithmOf,
  type HttpResponseSignature,
  signHttpResponse,
  signHttpResponseWithLibrary,
} from '../../lib/http-signature/sign.ts';

const keys = {
  ec: generateKeyPairSync('ec', { namedCurve: 'P-256' }),
  ed: generateKeyPairSync('ed25519'),
};

async function verifies(
  headers: Record<string, string>,
  status: number,
  extra: Record<string, string>,
  pub: KeyObject,
  alg: ReturnType<typeof algorithmOf>,
) {
  return httpbis.verifyMessage(
    // Any created time of the generated ones (the property's times run to 2033).
    {
      keyLookup: async () => ({ id: 'k', algs: [alg], verify: createVerifier(pub, alg) }),
      notAfter: 2_100_000_000,
    },
    { status, headers: { ...extra, ...headers } },
  );
}

describe('signHttpResponse written directly', () => {
  it('writes what the library writes, and its signature verifies with the library', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom('ec', 'ed') as fc.Arbitrary<'ec' | 'ed'>,
        fc.integer({ min: 100, max: 599 }),
        fc.oneof(fc.constant(''), fc.string({ unit: 'binary', maxLength: 300 })),
        fc.constantFrom('application/json', 'application/problem+json; charset=utf-8', 'text/plain'),
        fc.stringMatching(/^[A-Za-z0-9._:-]{1,24}$/),
        fc.constantFrom('sig1', 'sig', 'ucp-business'),
        fc.integer({ min: 1_600_000_000, max: 2_000_000_000 }),
        async (kind, status, body, type, kid, label, created) => {
          const { privateKey, publicKey } = keys[kind];
          const hasBody = body.length > 0;
          const headers: Record<string, string> = hasBody ? { 'content-type': type } : {};
          const m: HttpResponseSignature = {
            status,
            headers,
            ...(hasBody ? { body } : {}),
            privateKey,
            keyid: kid,
            components: ['@status', ...(hasBody ? ['content-digest', 'content-type'] : [])],
            params: ['created', 'keyid'],
            paramValues: { created: new Date(created * 1000) },
            label,
          };
          const direct = await signHttpResponse(m);
          const library = await signHttpResponseWithLibrary(m);
          expect(direct['content-digest']).toBe(library['content-digest']);
          expect(direct['signature-input']).toBe(library['signature-input']);
          expect(direct.signature).toMatch(new RegExp(`^${label}=:[A-Za-z0-9+/]+=*:$`));
          const extra = headers;
          expect(await verifies(direct, status, extra, publicKey, algorithmOf(privateKey))).toBe(true);
          // The same headers on another status do not verify: @status is covered.
          expect(
            await verifies(direct, status === 200 ? 201 : 200, extra, publicKey, algorithmOf(privateKey)),
          ).toBe(false);
        },
      ),
      { numRuns: 60 },
    );
  });

  it.each([
    ['a key id that needs escaping', { keyid: 'k"1\\x' }],
    [
      'a parameter it does not write',
      // The fixed created time kept: two signatures a second apart would each read the clock.
      {
        params: ['created', 'keyid', 'alg'],
        paramValues: { created: new Date(1_767_225_600_000), alg: 'ecdsa-p256-sha256' },
      },
    ],
    ['a value with surrounding space', { headers: { 'content-type': ' application/json ' } }],
  ])('leaves %s to the library, whose signature verifies', async (_what, bent) => {
    const m: HttpResponseSignature = {
      status: 200,
      headers: { 'content-type': 'application/json' },
      body: '{"a":1}',
      privateKey: keys.ec.privateKey,
      keyid: 'k1',
      components: ['@status', 'content-digest', 'content-type'],
      params: ['created', 'keyid'],
      paramValues: { created: new Date(1_767_225_600_000) },
      ...bent,
    };
    const out = await signHttpResponse(m);
    const library = await signHttpResponseWithLibrary(m);
    expect(out['signature-input']).toBe(library['signature-input']);
    expect(await verifies(out, 200, m.headers, keys.ec.publicKey, 'ecdsa-p256-sha256')).toBe(true);
  });
});

/**
 * Each checkout version's signature made once (gateway/agent/ucp/ap2.ts signedCheckoutText and
 * the completion's signedHere; issue 50's allocation pass): the body is the checkout's JSON with
 * `ap2.merchant_authorization` as its last member, and the signature verifies independently
 * (jose over canonicalize's bytes); the same checkout again keeps its signature (ES256 is
 * randomized: an equal string is a reused one), anything else is signed afresh; a completion
 * whose mandate carries the checkout signed here at the session's version is accepted without
 * rendering the checkout again, and every other mandate takes the full check, so the refusals
 * stay what they were. In process: a real mandate (@sd-jwt, the tests' maker), the memory
 * idempotency store.
 */
import { generateKeyPairSync } from 'node:crypto';
import { createRequire } from 'node:module';
import { compactVerify, exportJWK } from 'jose';
import { describe, expect, it, vi } from 'vitest';
import { memoryIdempotencyStore } from '../../gateway/agent/idempotency/memory.ts';
import {
  type Ap2Parts,
  signedCheckouts,
  signedCheckoutText,
  verifyCompletion,
} from '../../gateway/agent/ucp/ap2.ts';
import type { PlatformProfile } from '../../gateway/agent/ucp/platform-profile.ts';
import { AP2 } from '../../gateway/agent/ucp/profile.ts';
import { ManualClock } from '../../lib/clock.ts';
import type { CheckoutSession } from '../../subgraphs/procurement/checkout/session.ts';
import { makeMandate } from './support/mandate.ts';

const canonicalize = createRequire(import.meta.url)('canonicalize') as (v: unknown) => string;
const pair = () => generateKeyPairSync('ec', { namedCurve: 'P-256' });
const business = pair();
const rotated = pair();
const platform = pair();
const holder = pair();
const AUDIENCE = 'https://shop.example/.well-known/ucp';
const jwk = (k: ReturnType<typeof pair>, kid: string) => ({
  ...(k.publicKey.export({ format: 'jwk' }) as Record<string, unknown>),
  kid,
  alg: 'ES256',
  use: 'sig',
});
const ID = 'cs_0123456789abcdef0123456789abcdef';
const checkoutOf = (id: string, amount: number, status = 'ready_for_complete') => ({
  ucp: { version: '2026-04-08', status: 'success' },
  id,
  status,
  currency: 'USD',
  line_items: [{ id: 'li_0', item: { id: 'SKU-1', price: amount }, quantity: 1 }],
  totals: [{ type: 'total', amount }],
});
const profile = {
  url: 'https://platform.example/profile.json',
  signingKeys: [jwk(platform, 'platform-1')],
} as unknown as PlatformProfile;
const mandateOf = (signed: Record<string, unknown>) =>
  makeMandate(signed, {
    key: platform.privateKey,
    kid: 'platform-1',
    holder: holder.privateKey,
    audience: AUDIENCE,
  });

/** A completion carrying `mandate` for `at`, checked against `current` with this platform's profile. */
const completeWith = (
  mandate: string,
  at: Parameters<typeof verifyCompletion>[1],
  current: Parameters<typeof verifyCompletion>[2],
  p: Ap2Parts,
) => verifyCompletion({ ap2: { checkout_mandate: mandate } }, at, current, profile, p);

function partsWith(o: { kid?: string; verifying?: string[] } = {}) {
  const signer = o.kid === 'business-2' ? rotated : business;
  const parts: Ap2Parts = {
    clock: new ManualClock(Date.now()),
    signingKey: async () => ({ kid: o.kid ?? 'business-1', key: signer.privateKey }),
    verifyingKeys: async () =>
      [jwk(business, 'business-1'), jwk(rotated, 'business-2')].filter(
        (k) => !o.verifying || o.verifying.includes(String(k.kid)),
      ),
    audience: AUDIENCE,
    used: memoryIdempotencyStore({ ttlMs: 86_400_000, inFlightMs: 30_000 }),
    maxAgeS: 3600,
    signed: signedCheckouts(),
  };
  return parts;
}
const session = (id: string, version: number) =>
  ({ id, version, extensions: [AP2] }) as unknown as CheckoutSession;
const jwsOf = (text: string) =>
  (JSON.parse(text) as { ap2: { merchant_authorization: string } }).ap2.merchant_authorization;

/** The detached JWS checked by jose over canonicalize's bytes of the body without `ap2`. */
async function verifiesIndependently(text: string, key = business.publicKey) {
  const { ap2, ...rest } = JSON.parse(text) as Record<string, unknown> & {
    ap2: { merchant_authorization: string };
  };
  const [header, , signature] = ap2.merchant_authorization.split('.');
  const payload = Buffer.from(canonicalize(rest)).toString('base64url');
  await compactVerify(`${header}.${payload}.${signature}`, await exportJWK(key).then((k) => k));
}

describe('a checkout version signed once', () => {
  it('sends the checkout with ap2 last, signed as jose and canonicalize check it, and keeps the signature while the checkout is the same', async () => {
    const p = partsWith();
    const c = checkoutOf(ID, 1299);
    const text = await signedCheckoutText(c, session(ID, 3), p);
    expect(text).toBe(JSON.stringify({ ...c, ap2: { merchant_authorization: jwsOf(text) } }));
    await verifiesIndependently(text);
    // Read again: the same bytes, the same signature (not made again).
    expect(await signedCheckoutText(checkoutOf(ID, 1299), session(ID, 3), p)).toBe(text);
    // Another checkout of the session (another status): signed afresh, and valid.
    const completed = await signedCheckoutText(checkoutOf(ID, 1299, 'completed'), session(ID, 4), p);
    expect(jwsOf(completed)).not.toBe(jwsOf(text));
    await verifiesIndependently(completed);
    // The same checkout of another session is that session's own signature.
    const other = await signedCheckoutText(checkoutOf(ID.replace('0123', '9999'), 1299), session('x', 1), p);
    expect(jwsOf(other)).not.toBe(jwsOf(text));
  });

  it('signs again with the key that signs now once the ring rotated', async () => {
    const p = partsWith();
    const first = await signedCheckoutText(checkoutOf(ID, 1299), session(ID, 3), p);
    const q = { ...partsWith({ kid: 'business-2' }), signed: p.signed };
    const after = await signedCheckoutText(checkoutOf(ID, 1299), session(ID, 3), q);
    expect(jwsOf(after)).not.toBe(jwsOf(first));
    await verifiesIndependently(after, rotated.publicKey);
  });
});

describe('a completion over the checkout signed here', () => {
  it('accepts the mandate without rendering the checkout again while the session is at that version', async () => {
    const p = partsWith();
    const c = checkoutOf(ID, 1299);
    const mandate = await mandateOf(JSON.parse(await signedCheckoutText(c, session(ID, 3), p)));
    const current = vi.fn(() => c);
    const v = await completeWith(mandate, session(ID, 3), current, p);
    expect(v.ok).toBe(true);
    expect(v.ok && v.authorization.merchantKid).toBe('business-1');
    expect(current).not.toHaveBeenCalled();
  });

  it('accepts without rendering again after an update that left the checkout as it was (a later version, the same text)', async () => {
    const p = partsWith();
    const c = checkoutOf(ID, 1299);
    const first = await signedCheckoutText(c, session(ID, 3), p);
    // The update bumped the version; the checkout it shows is the same bytes, the same signature.
    const again = await signedCheckoutText(checkoutOf(ID, 1299), session(ID, 4), p);
    expect(again).toBe(first);
    const mandate = await mandateOf(JSON.parse(again));
    const current = vi.fn(() => c);
    const v = await completeWith(mandate, session(ID, 4), current, p);
    expect(v.ok).toBe(true);
    expect(current).not.toHaveBeenCalled();
    if (v.ok) await v.release();
    // A read that raced the update (the session read at version 3) does not take that back.
    await signedCheckoutText(checkoutOf(ID, 1299), session(ID, 3), p);
    expect(p.signed?.get(ID)?.version).toBe(4);
    // Re-priced at version 5: the same mandate is stale, and refused by its terms.
    await signedCheckoutText(checkoutOf(ID, 1499), session(ID, 5), p);
    expect(await completeWith(mandate, session(ID, 5), () => checkoutOf(ID, 1499), p)).toMatchObject({
      ok: false,
      error: {
        status: 403,
        body: { code: 'mandate_scope_mismatch', content: expect.stringMatching(/differs/) },
      },
    });
  });

  it('checks in full once the session moved on: the same terms pass, other terms are refused', async () => {
    const p = partsWith();
    const mandate = await mandateOf(
      JSON.parse(await signedCheckoutText(checkoutOf(ID, 1299), session(ID, 3), p)),
    );
    const same = vi.fn(() => checkoutOf(ID, 1299));
    const ok = await completeWith(mandate, session(ID, 4), same, p);
    expect(ok.ok).toBe(true);
    expect(same).toHaveBeenCalled();
    if (ok.ok) await ok.release();
    const repriced = await completeWith(mandate, session(ID, 4), () => checkoutOf(ID, 1499), p);
    expect(repriced).toMatchObject({
      ok: false,
      error: { status: 403, body: { code: 'mandate_scope_mismatch' } },
    });
  });

  it('refuses an edited total under our signature, a signature moved to another session, and a key no longer ours', async () => {
    const p = partsWith();
    const text = await signedCheckoutText(checkoutOf(ID, 1299), session(ID, 3), p);
    const signed = JSON.parse(text) as Record<string, unknown>;
    const edited = await mandateOf({ ...signed, totals: [{ type: 'total', amount: 1 }] });
    expect(await completeWith(edited, session(ID, 3), () => checkoutOf(ID, 1299), p)).toMatchObject({
      ok: false,
      error: { body: { code: 'merchant_authorization_invalid' } },
    });
    const other = ID.replace('0123', '7777');
    await signedCheckoutText(checkoutOf(other, 1299), session(other, 3), p);
    const moved = await makeMandate(
      { ...checkoutOf(other, 1299), ap2: signed.ap2 },
      { key: platform.privateKey, kid: 'platform-1', holder: holder.privateKey, audience: AUDIENCE },
    );
    expect(await completeWith(moved, session(other, 3), () => checkoutOf(other, 1299), p)).toMatchObject({
      ok: false,
      error: { body: { code: 'merchant_authorization_invalid' } },
    });
    const retired = { ...partsWith({ verifying: ['business-2'] }), signed: p.signed };
    const mandate = await mandateOf(signed);
    expect(await completeWith(mandate, session(ID, 3), () => checkoutOf(ID, 1299), retired)).toMatchObject({
      ok: false,
      error: { body: { code: 'merchant_authorization_invalid' } },
    });
  });
});

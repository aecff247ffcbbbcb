/**
 * The mandate's claim while its completion runs (docs/ap2.md, "Used once"): verifyCompletion
 * (gateway/agent/ucp/ap2.ts) claims a verified mandate by its SHA-256 in the idempotency store,
 * so a second presentation while the claim holds is refused (403 mandate_scope_mismatch); the
 * claim lapses after IDEMPOTENCY_IN_FLIGHT_MS (a completion that never finished, its process
 * killed, does not hold the mandate for ever), and `release()` frees it at once. In process: a
 * real mandate (@sd-jwt, tests' maker), our real signature inside it, the memory idempotency
 * store (the one a gateway without a database uses) and a clock moved by hand.
 */
import { generateKeyPairSync } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { memoryIdempotencyStore } from '../../gateway/agent/idempotency/memory.ts';
import type { IdempotencyTimes } from '../../gateway/agent/idempotency/store.ts';
import { verifyCompletion, withMerchantAuthorization } from '../../gateway/agent/ucp/ap2.ts';
import type { PlatformProfile } from '../../gateway/agent/ucp/platform-profile.ts';
import { AP2 } from '../../gateway/agent/ucp/profile.ts';
import { ManualClock } from '../../lib/clock.ts';
import type { CheckoutSession } from '../../subgraphs/procurement/checkout/session.ts';
import { makeMandate } from './support/mandate.ts';

const pair = () => generateKeyPairSync('ec', { namedCurve: 'P-256' });
const business = pair();
const platform = pair();
const holder = pair();
const AUDIENCE = 'https://shop.example/.well-known/ucp';
const TIMES: IdempotencyTimes = { ttlMs: 86_400_000, inFlightMs: 30_000 };
const jwk = (k: ReturnType<typeof pair>, kid: string) => ({
  ...(k.publicKey.export({ format: 'jwk' }) as Record<string, unknown>),
  kid,
  alg: 'ES256',
  use: 'sig',
});

async function setup() {
  const clock = new ManualClock(Date.now());
  const parts = {
    clock,
    signingKey: async () => ({ kid: 'business-1', key: business.privateKey }),
    verifyingKeys: async () => [jwk(business, 'business-1')],
    audience: AUDIENCE,
    used: memoryIdempotencyStore(TIMES),
    maxAgeS: 3600,
  };
  const checkout = {
    id: 'cs_0123456789abcdef0123456789abcdef',
    status: 'ready_for_complete',
    currency: 'USD',
    line_items: [{ id: 'li_0', item: { id: 'SKU-1', price: 1299 }, quantity: 1 }],
    totals: [{ type: 'total', amount: 1299 }],
  };
  const signed = await withMerchantAuthorization(checkout, parts);
  const mandate = await makeMandate(signed, {
    key: platform.privateKey,
    kid: 'platform-1',
    holder: holder.privateKey,
    audience: AUDIENCE,
  });
  const session = { id: checkout.id, extensions: [AP2], version: 3 } as unknown as CheckoutSession;
  const profile = {
    url: 'https://platform.example/profile.json',
    signingKeys: [jwk(platform, 'platform-1')],
  };
  const present = () =>
    verifyCompletion(
      { ap2: { checkout_mandate: mandate } },
      session,
      () => signed,
      profile as unknown as PlatformProfile,
      parts,
    );
  return { clock, present };
}

describe('an AP2 mandate’s claim during its completion', () => {
  it('refuses a second presentation while the claim holds, and takes it again once it lapses', async () => {
    const { clock, present } = await setup();
    const first = await present();
    expect(first.ok).toBe(true);
    const again = await present();
    expect(again).toMatchObject({
      ok: false,
      error: { status: 403, body: { code: 'mandate_scope_mismatch' } },
    });
    expect(again.ok ? '' : again.error.body.content).toMatch(/already presented/);
    clock.advance(TIMES.inFlightMs - 1);
    expect((await present()).ok).toBe(false);
    clock.advance(1);
    expect((await present()).ok).toBe(true);
  });

  it('is free again at once when released (the completion did not take the session)', async () => {
    const { present } = await setup();
    const first = await present();
    if (!first.ok) throw new Error(first.reason);
    await first.release();
    expect((await present()).ok).toBe(true);
  });
});

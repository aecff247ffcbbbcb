import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { base64url, exportJWK, generateKeyPair, SignJWT } from 'jose';
import { describe, expect, it } from 'vitest';
import { ManualClock } from '../../lib/clock.ts';
import {
  type CartInput,
  cartHash,
  createQuoteTokens,
  FileQuoteKeyStore,
  QUOTE_TOKEN_LIFETIME_SECONDS,
  type QuoteFacts,
} from '../../lib/quote-token/index.ts';

const config = {
  QUOTE_TOKEN_ISSUER: 'https://edge.test',
  QUOTE_TOKEN_AUDIENCE: 'payment',
  DATA_DIR: '/unused',
};

const cart: CartInput = {
  lines: [
    { sku: 'SKU-ABC-000002', quantity: 3 },
    { sku: 'SKU-ABC-000001', quantity: 1 },
  ],
  currency: 'USD',
  region: 'US',
  customerSegment: 'VIP',
  customerId: 'cust-1',
  coupons: ['SPRING'],
};

const facts: QuoteFacts = {
  currency: 'USD',
  lines: [
    {
      sku: 'SKU-ABC-000001',
      quantity: 1,
      basePrice: 19.99,
      unitPrice: 18.99,
      appliedModifiers: ['VIP_SEGMENT_DISCOUNT'],
      source: 'live',
      lineTotal: 18.99,
      discount: 0,
      total: 18.99,
    },
  ],
  totals: { subtotal: 18.99, discountTotal: 0, total: 18.99 },
  promotions: [],
  promotionsEvaluated: true,
};

async function setup() {
  const clock = new ManualClock();
  const file = join(mkdtempSync(join(tmpdir(), 'ac-qt-')), 'keys.json');
  const store = await FileQuoteKeyStore.open(file, clock);
  return { clock, file, store, tokens: createQuoteTokens(config, store, clock) };
}

const part = (token: string, i: number) => token.split('.')[i] ?? '';
const json = (s: string) => JSON.parse(new TextDecoder().decode(base64url.decode(s)));
const encode = (o: unknown) => base64url.encode(JSON.stringify(o));

describe('canonical cart hash', () => {
  it('does not depend on the order of lines or coupons, nor on repeated coupons', () => {
    const shuffled: CartInput = {
      ...cart,
      lines: [...cart.lines].reverse(),
      coupons: ['SPRING', 'SPRING'],
    };
    expect(cartHash(shuffled)).toBe(cartHash(cart));
  });

  it('changes with any quantity, sku, currency, region, segment, customer or coupon', () => {
    const variants: CartInput[] = [
      {
        ...cart,
        lines: [
          { sku: 'SKU-ABC-000002', quantity: 4 },
          { sku: 'SKU-ABC-000001', quantity: 1 },
        ],
      },
      {
        ...cart,
        lines: [
          { sku: 'SKU-ABC-000003', quantity: 3 },
          { sku: 'SKU-ABC-000001', quantity: 1 },
        ],
      },
      { ...cart, currency: 'EUR' },
      { ...cart, region: 'EU' },
      { ...cart, customerSegment: undefined },
      { ...cart, customerId: 'cust-2' },
      { ...cart, coupons: [] },
    ];
    const hashes = new Set([cartHash(cart), ...variants.map(cartHash)]);
    expect(hashes.size).toBe(variants.length + 1);
  });

  it('is invariant under any permutation of distinct lines (property)', () => {
    const line = fc.record({
      sku: fc.stringMatching(/^SKU-[A-Z]{3}-\d{6}$/),
      quantity: fc.integer({ min: 1, max: 100 }),
    });
    fc.assert(
      fc.property(fc.uniqueArray(line, { selector: (l) => l.sku, minLength: 1, maxLength: 20 }), (lines) => {
        const a = { ...cart, lines };
        const b = { ...cart, lines: [...lines].sort(() => Math.random() - 0.5) };
        return cartHash(a) === cartHash(b);
      }),
    );
  });
});

describe('quote tokens', () => {
  it('carries iss, aud, iat, exp 15 minutes later, jti, the priced lines, totals and the cart hash', async () => {
    const { tokens, clock, store } = await setup();
    const { token, expiresAt } = await tokens.issue(cart, facts);
    const header = json(part(token, 0));
    expect(header).toEqual({ alg: 'ES256', typ: 'quote+jwt', kid: store.signingKey().kid });
    const claims = json(part(token, 1));
    expect(claims).toMatchObject({
      iss: 'https://edge.test',
      aud: 'payment',
      iat: clock.now() / 1000,
      exp: clock.now() / 1000 + 900,
      cart_hash: cartHash(cart),
      lines: facts.lines,
      totals: facts.totals,
    });
    expect(claims.jti).toMatch(/^[0-9a-f-]{36}$/);
    expect(expiresAt).toBe(new Date(clock.now() + 900_000).toISOString());
    const verified = await tokens.verify(token, cart);
    expect(verified).toMatchObject({ valid: true, claims: { cart_hash: cartHash(cart) } });
  });

  it('gives two quotes of the same cart different ids and signatures', async () => {
    const { tokens } = await setup();
    const a = await tokens.issue(cart, facts);
    const b = await tokens.issue(cart, facts);
    expect(a.claims.jti).not.toBe(b.claims.jti);
    expect(part(a.token, 2)).not.toBe(part(b.token, 2));
  });

  it('verifies until the last second of its 15 minutes and is refused as expired after', async () => {
    const { tokens, clock } = await setup();
    const { token } = await tokens.issue(cart, facts);
    clock.advance(QUOTE_TOKEN_LIFETIME_SECONDS * 1000 - 1000);
    expect((await tokens.verify(token, cart)).valid).toBe(true);
    clock.advance(1000);
    expect(await tokens.verify(token, cart)).toMatchObject({ valid: false, reason: 'expired' });
  });

  it('refuses a token dated more than a minute in the future', async () => {
    const { tokens, clock } = await setup();
    clock.advance(2 * 60_000);
    const { token } = await tokens.issue(cart, facts);
    clock.advance(-2 * 60_000);
    expect(await tokens.verify(token, cart)).toMatchObject({ valid: false, reason: 'not_yet_valid' });
    clock.advance(60_000);
    expect((await tokens.verify(token, cart)).valid).toBe(true);
  });

  it('refuses a token whose payload was altered (a lower price) as a bad signature', async () => {
    const { tokens } = await setup();
    const { token } = await tokens.issue(cart, facts);
    const claims = json(part(token, 1));
    claims.totals.total = 0.01;
    const tampered = [part(token, 0), encode(claims), part(token, 2)].join('.');
    expect(await tokens.verify(tampered, cart)).toMatchObject({ valid: false, reason: 'bad_signature' });
  });

  it('refuses a token re-signed with another key under our kid', async () => {
    const { tokens, store } = await setup();
    const { claims } = await tokens.issue(cart, facts);
    const { privateKey } = await generateKeyPair('ES256');
    const forged = await new SignJWT({ ...claims, totals: { ...claims.totals, total: 1 } })
      .setProtectedHeader({ alg: 'ES256', typ: 'quote+jwt', kid: store.signingKey().kid })
      .sign(privateKey);
    expect(await tokens.verify(forged, cart)).toMatchObject({ valid: false, reason: 'bad_signature' });
  });

  it('refuses alg "none"', async () => {
    const { tokens, store } = await setup();
    const { claims } = await tokens.issue(cart, facts);
    const none = `${encode({ alg: 'none', typ: 'quote+jwt', kid: store.signingKey().kid })}.${encode(claims)}.`;
    expect(await tokens.verify(none, cart)).toMatchObject({ valid: false, reason: 'alg_none' });
  });

  it('refuses HS256 signed with the published public key (HS/ES confusion)', async () => {
    const { tokens, store } = await setup();
    const { claims } = await tokens.issue(cart, facts);
    const publicJwk = store.jwks().keys[0];
    const secret = new TextEncoder().encode(JSON.stringify(publicJwk));
    const confused = await new SignJWT({ ...claims })
      .setProtectedHeader({ alg: 'HS256', typ: 'quote+jwt', kid: store.signingKey().kid })
      .sign(secret);
    const result = await tokens.verify(confused, cart);
    expect(result).toMatchObject({ valid: false, reason: 'alg_not_allowed' });
    expect(result.valid === false && result.detail).toMatch(/ES256/);
  });

  it('refuses an unknown kid and a missing kid', async () => {
    const { tokens } = await setup();
    const other = await setup();
    const { token } = await other.tokens.issue(cart, facts);
    expect(await tokens.verify(token, cart)).toMatchObject({ valid: false, reason: 'unknown_kid' });
    const { privateKey } = await generateKeyPair('ES256');
    const noKid = await new SignJWT({ ...facts })
      .setProtectedHeader({ alg: 'ES256', typ: 'quote+jwt' })
      .sign(privateKey);
    expect(await tokens.verify(noKid, cart)).toMatchObject({ valid: false, reason: 'missing_kid' });
  });

  it('refuses a token for another audience, from another issuer, or of another type', async () => {
    const { store, clock, tokens } = await setup();
    const forOthers = createQuoteTokens({ ...config, QUOTE_TOKEN_AUDIENCE: 'shipping' }, store, clock);
    const fromOthers = createQuoteTokens({ ...config, QUOTE_TOKEN_ISSUER: 'https://evil' }, store, clock);
    const a = await forOthers.issue(cart, facts);
    const b = await fromOthers.issue(cart, facts);
    expect(await tokens.verify(a.token, cart)).toMatchObject({ valid: false, reason: 'wrong_audience' });
    expect(await tokens.verify(b.token, cart)).toMatchObject({ valid: false, reason: 'wrong_issuer' });
    const { kid, key } = store.signingKey();
    const callerLike = await new SignJWT({ ...a.claims, aud: 'payment', iss: config.QUOTE_TOKEN_ISSUER })
      .setProtectedHeader({ alg: 'ES256', typ: 'JWT', kid })
      .sign(key);
    expect(await tokens.verify(callerLike, cart)).toMatchObject({ valid: false, reason: 'wrong_type' });
  });

  it('refuses a valid token presented with another cart', async () => {
    const { tokens } = await setup();
    const { token } = await tokens.issue(cart, facts);
    const other = { ...cart, lines: [{ sku: 'SKU-ABC-000001', quantity: 100 }] };
    expect(await tokens.verify(token, other)).toMatchObject({ valid: false, reason: 'cart_mismatch' });
  });

  it('refuses garbage as malformed', async () => {
    const { tokens } = await setup();
    for (const junk of ['', 'abc', 'a.b.c', `${encode({ alg: 'ES256' })}`]) {
      expect(await tokens.verify(junk, cart)).toMatchObject({ valid: false, reason: 'malformed' });
    }
  });
});

describe('quote-token keys', () => {
  it('keeps the key across restarts (same file, same kid)', async () => {
    const { file, store, clock } = await setup();
    const again = await FileQuoteKeyStore.open(file, clock);
    expect(again.signingKey().kid).toBe(store.signingKey().kid);
  });

  it('after rotation signs with the new key and still verifies tokens of the old one until they expire', async () => {
    const { tokens, store, clock } = await setup();
    const old = await tokens.issue(cart, facts);
    const oldKid = store.signingKey().kid;
    clock.advance(60_000);
    const newKid = await store.rotate();
    expect(newKid).not.toBe(oldKid);
    const fresh = await tokens.issue(cart, facts);
    expect(json(part(fresh.token, 0)).kid).toBe(newKid);
    expect(
      store
        .jwks()
        .keys.map((k) => k.kid)
        .sort(),
    ).toEqual([oldKid, newKid].sort());
    expect((await tokens.verify(old.token, cart)).valid).toBe(true);
    expect((await tokens.verify(fresh.token, cart)).valid).toBe(true);
    // Once no token of the old key can be unexpired, the key is no longer published.
    clock.advance(QUOTE_TOKEN_LIFETIME_SECONDS * 1000 + 60_000);
    expect(store.jwks().keys.map((k) => k.kid)).toEqual([newKid]);
    expect(await tokens.verify(old.token, cart)).toMatchObject({ valid: false, reason: 'unknown_kid' });
  });

  it('a second process sharing the key file verifies tokens signed after a rotation it has not seen', async () => {
    const { file, store, clock, tokens } = await setup();
    const replica = await FileQuoteKeyStore.open(file, clock);
    const replicaTokens = createQuoteTokens(config, replica, clock);
    await store.rotate();
    const { token } = await tokens.issue(cart, facts);
    expect((await replicaTokens.verify(token, cart)).valid).toBe(true);
  });

  it('with a publishing period: the new key is published and verifies at once, signs only when the period ends', async () => {
    const { file, store, clock, tokens } = await setup();
    // A replica that has read the ring before the rotation and does not re-read it for a while.
    const replica = await FileQuoteKeyStore.open(file, clock);
    const replicaTokens = createQuoteTokens(config, replica, clock);
    const oldKid = store.signingKey().kid;
    const newKid = await store.rotate(120_000);
    // Pending: published (so replicas and payment learn it) but the old key still signs.
    expect(store.signingKey().kid).toBe(oldKid);
    expect(store.jwks().keys.map((k) => k.kid)).toContain(newKid);
    clock.advance(10_000);
    await replica.reload();
    const beforeSwitch = await replicaTokens.issue(cart, facts);
    expect(json(part(beforeSwitch.token, 0)).kid).toBe(oldKid);
    clock.advance(110_000);
    // The period is over: both processes sign with the new key without another file change.
    expect(store.signingKey().kid).toBe(newKid);
    expect(replica.signingKey().kid).toBe(newKid);
    const after = await tokens.issue(cart, facts);
    expect((await replicaTokens.verify(after.token, cart)).valid).toBe(true);
    expect((await tokens.verify(beforeSwitch.token, cart)).valid).toBe(true);
    // The old key retired when the new one started: it stays published for one token lifetime.
    clock.advance(QUOTE_TOKEN_LIFETIME_SECONDS * 1000 + 60_001);
    expect(store.jwks().keys.map((k) => k.kid)).toEqual([newKid]);
  });

  it('rotating again while a key is pending retires the pending key before it ever signs', async () => {
    const { store, clock } = await setup();
    const oldKid = store.signingKey().kid;
    const pending = await store.rotate(120_000);
    const last = await store.rotate(60_000);
    expect(store.signingKey().kid).toBe(oldKid);
    clock.advance(60_000);
    expect(store.signingKey().kid).toBe(last);
    clock.advance(120_000);
    expect(store.signingKey().kid).toBe(last);
    expect(store.jwks().keys.map((k) => k.kid)).toContain(pending);
  });

  it('publishes only public EC P-256 keys, with kid, alg and use', async () => {
    const { store } = await setup();
    const [key, ...rest] = store.jwks().keys;
    expect(rest).toEqual([]);
    expect(key).toMatchObject({
      kty: 'EC',
      crv: 'P-256',
      alg: 'ES256',
      use: 'sig',
      kid: store.signingKey().kid,
    });
    expect(key).not.toHaveProperty('d');
    const { publicKey } = await generateKeyPair('ES256', { extractable: true });
    expect(Object.keys(key ?? {}).sort()).toEqual(
      [...Object.keys(await exportJWK(publicKey)), 'kid', 'alg', 'use'].sort(),
    );
  });
});

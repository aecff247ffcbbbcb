import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { createGuard, type Guard } from '../../gateway/edge/quote/resilience.ts';
import { type CartQuote, createQuoteService, DEFAULT_SEGMENT } from '../../gateway/edge/quote/service.ts';
import { ManualClock } from '../../lib/clock.ts';
import { Problem } from '../../lib/problem.ts';
import { type CartInput, createQuoteTokens, FileQuoteKeyStore } from '../../lib/quote-token/index.ts';
import { catalogOf, fakePorts, livePrice } from './fakes.ts';

const entries = catalogOf(10);
const cart: CartInput = {
  lines: entries.map((e, i) => ({ sku: e.sku, quantity: i + 1 })),
  currency: 'USD',
  region: 'US',
};

async function setup(opts: { failures?: number } = {}) {
  const clock = new ManualClock();
  const store = await FileQuoteKeyStore.open(join(mkdtempSync(join(tmpdir(), 'ac-qc-')), 'k.json'), clock);
  const tokens = createQuoteTokens(
    { QUOTE_TOKEN_ISSUER: 'https://edge.test', QUOTE_TOKEN_AUDIENCE: 'payment', DATA_DIR: '/unused' },
    store,
    clock,
  );
  const fake = fakePorts(entries);
  const guard = (name: string): Guard =>
    createGuard(name, { timeoutMs: 30, failures: opts.failures ?? 1000, halfOpenAfterMs: 60_000 });
  const guards = {
    catalog: guard('catalog'),
    cache: guard('cache'),
    pricing: guard('pricing'),
    promotions: guard('promotions'),
  };
  const service = createQuoteService({ ports: fake.ports, guards, tokens });
  return { ...fake, service, tokens, guards };
}

const sources = (q: CartQuote) => q.lines.map((l) => l.source);

describe('cart quote composition', () => {
  it('prices every miss in one pricing call, then serves the cached prices', async () => {
    const { service, state, keyText } = await setup();
    const first = await service.quote(cart);
    expect(state.pricingCalls).toHaveLength(1);
    expect(state.pricingCalls[0]?.map((c) => c.sku)).toEqual(cart.lines.map((l) => l.sku));
    expect(state.pricingCalls[0]?.[0]).toMatchObject({
      region: 'US',
      customerSegment: DEFAULT_SEGMENT,
      inventoryLevel: 50,
    });
    expect(sources(first)).toEqual(Array(10).fill('live'));
    // The pricing service filled its cache; the next quote reads it and calls pricing for nothing.
    for (const c of state.pricingCalls[0] ?? []) state.fresh.set(keyText(c), livePrice(c, 0));
    state.pricingCalls.length = 0;
    const second = await service.quote(cart);
    expect(state.pricingCalls).toHaveLength(0);
    expect(sources(second)).toEqual(Array(10).fill('cache'));
    expect(second.degraded).toBe(false);
  });

  it('asks pricing only for the lines the cache misses', async () => {
    const { service, state, keyText } = await setup();
    const cached = cart.lines
      .slice(0, 7)
      .map((l) => ({ sku: l.sku, region: 'US', customerSegment: DEFAULT_SEGMENT }));
    for (const k of cached)
      state.fresh.set(keyText(k), livePrice({ ...k, currency: 'USD', inventoryLevel: 1 }, 1));
    const q = await service.quote(cart);
    expect(state.pricingCalls[0]?.map((c) => c.sku)).toEqual(cart.lines.slice(7).map((l) => l.sku));
    expect(sources(q)).toEqual([...Array(7).fill('cache'), ...Array(3).fill('live')]);
  });

  it('treats a cached price in another currency as a miss (the cache key has no currency)', async () => {
    const { service, state, keyText } = await setup();
    const k = { sku: entries[0]?.sku ?? '', region: 'US', customerSegment: DEFAULT_SEGMENT };
    state.fresh.set(keyText(k), livePrice({ ...k, currency: 'EUR', inventoryLevel: 1 }, 99));
    const q = await service.quote(cart);
    expect(q.lines[0]).toMatchObject({ source: 'live', basePrice: 10 });
  });

  it('with pricing down answers 200 from the last-known price, else the static base price, marking each line', async () => {
    const { service, state } = await setup();
    await service.quote({ ...cart, lines: cart.lines.slice(0, 4) }); // pricing remembers 4 last-known prices
    state.pricing = 'fail';
    const q = await service.quote(cart);
    expect(sources(q)).toEqual([...Array(4).fill('last_known'), ...Array(6).fill('static')]);
    expect(q.lines[0]).toMatchObject({
      basePrice: 10,
      unitPrice: 11,
      appliedModifiers: ['SCARCITY_SURCHARGE_15'],
    });
    expect(q.lines[9]).toMatchObject({ basePrice: 19, unitPrice: 19, appliedModifiers: [], lineTotal: 190 });
    expect(q.degraded).toBe(true);
  });

  it('gives up on a pricing call that hangs past its timeout and falls back', async () => {
    const { service, state } = await setup();
    state.pricing = 'hang';
    const q = await service.quote(cart);
    expect(sources(q)).toEqual(Array(10).fill('static'));
  });

  it('opens the pricing breaker after consecutive failures, then stops calling pricing', async () => {
    const { service, state, guards } = await setup({ failures: 3 });
    await service.quote(cart);
    state.pricing = 'fail';
    for (let i = 0; i < 3; i++) await service.quote(cart);
    expect(state.pricingCalls).toHaveLength(4);
    expect(guards.pricing.isOpen()).toBe(true);
    const q = await service.quote(cart);
    expect(state.pricingCalls).toHaveLength(4);
    expect(sources(q)).toEqual(Array(10).fill('last_known'));
  });

  it('does not open the promotions breaker on refused baskets: other carts keep their discounts', async () => {
    const { service, state, guards } = await setup({ failures: 3 });
    state.percentOff = 10;
    state.promotions = 'refuse';
    for (let i = 0; i < 5; i++) {
      const refused = await service.quote(cart);
      expect(refused.promotions.status).toBe('unavailable');
    }
    expect(guards.promotions.isOpen()).toBe(false);
    state.promotions = 'ok';
    const q = await service.quote(cart);
    expect(q.discountTotal).toBeGreaterThan(0);
    // real failures still open it
    state.promotions = 'fail';
    for (let i = 0; i < 3; i++) await service.quote(cart);
    expect(guards.promotions.isOpen()).toBe(true);
  });

  it('with the cache down asks pricing for every line and still answers', async () => {
    const { service, state } = await setup();
    state.cache = 'fail';
    const q = await service.quote(cart);
    expect(state.pricingCalls[0]).toHaveLength(10);
    expect(sources(q)).toEqual(Array(10).fill('live'));
  });

  it('with the cache and pricing down answers from static prices', async () => {
    const { service, state } = await setup();
    state.cache = 'hang';
    state.pricing = 'fail';
    const q = await service.quote(cart);
    expect(sources(q)).toEqual(Array(10).fill('static'));
    expect(q.subtotal).toBe(cart.lines.reduce((n, l, i) => n + l.quantity * (10 + i), 0));
  });

  it('applies promotions to the priced lines and adds up exactly', async () => {
    const { service, state } = await setup();
    state.percentOff = 10;
    const q = await service.quote(cart);
    expect(state.baskets[0]?.lines[0]).toMatchObject({
      sku: entries[0]?.sku,
      category: 'tools',
      quantity: 1,
      unitPrice: 11,
    });
    expect(q.promotions.status).toBe('evaluated');
    expect(q.promotions.applied[0]).toMatchObject({ promotionId: 'P-OFF' });
    const cents = (n: number) => Math.round(n * 100);
    expect(q.lines.reduce((n, l) => n + cents(l.lineTotal), 0)).toBe(cents(q.subtotal));
    expect(q.lines.reduce((n, l) => n + cents(l.discount), 0)).toBe(cents(q.discountTotal));
    expect(cents(q.total)).toBe(cents(q.subtotal) - cents(q.discountTotal));
    expect(q.discountTotal).toBeGreaterThan(0);
  });

  it('with promotions down answers without discounts and says so', async () => {
    const { service, state } = await setup();
    state.percentOff = 10;
    state.promotions = 'fail';
    const q = await service.quote(cart);
    expect(q.promotions).toEqual({ status: 'unavailable', applied: [], notApplied: [], coupons: [] });
    expect(q.discountTotal).toBe(0);
    expect(q.total).toBe(q.subtotal);
    expect(q.degraded).toBe(true);
    expect(sources(q)).toEqual(Array(10).fill('live'));
  });

  it('signs a token whose claims match the reply and the cart', async () => {
    const { service, tokens } = await setup();
    const q = await service.quote(cart);
    const v = await tokens.verify(q.quoteToken, { ...cart, lines: [...cart.lines].reverse() });
    expect(v.valid).toBe(true);
    if (!v.valid) return;
    expect(v.claims.cart_hash).toBe(q.id);
    expect(v.claims.totals).toEqual({ subtotal: q.subtotal, discountTotal: q.discountTotal, total: q.total });
    expect(v.claims.lines.map((l) => [l.sku, l.unitPrice, l.source])).toEqual(
      q.lines.map((l) => [l.sku, l.unitPrice, l.source]),
    );
  });

  it('refuses unknown SKUs with 422 naming each line', async () => {
    const { service } = await setup();
    const bad = { ...cart, lines: [cart.lines[0], { sku: 'SKU-NOP-000001', quantity: 1 }] } as CartInput;
    const err = await service.quote(bad).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(Problem);
    expect((err as Problem).body).toMatchObject({
      status: 422,
      errors: [{ pointer: '/line/1', message: 'SKU-NOP-000001 is not in the catalog' }],
    });
  });

  it('answers 503 only when the catalog itself cannot be read (no static price exists)', async () => {
    const { service, state } = await setup();
    state.catalog = 'fail';
    const err = await service.quote(cart).catch((e: unknown) => e);
    expect((err as Problem).status).toBe(503);
  });
});

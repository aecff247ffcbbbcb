import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestSystem } from '../../harness/system.ts';
import { ManualClock } from '../../lib/clock.ts';
import { type Cart, cents, getQuote, startQuoteSystem, tenLines, verify } from './support.ts';

const QUOTE = `query Quote($input: CartQuoteInput!) {
  cartQuote(input: $input) {
    id currency subtotal
    lines { sku category quantity basePrice unitPrice lineTotal appliedModifiers source }
    promotions { applied { promotionId name amount allocations { sku amount } } notApplied { promotionId reason } discountTotal total }
    quoteToken
  }
}`;

interface GqlQuote {
  cartQuote: {
    id: string;
    subtotal: number;
    lines: { sku: string; category: string; unitPrice: number; lineTotal: number; source: string }[];
    promotions: { applied: { promotionId: string; amount: number }[]; discountTotal: number; total: number };
    quoteToken: string;
  };
}

const clock = new ManualClock(Date.now());
let sys: TestSystem;
/** Payment's caller token. */
let payment: string;
const cart: Cart = {
  lines: tenLines().map(({ sku, quantity }) => ({ sku, quantity })),
  currency: 'USD',
  region: 'US',
  customerId: 'cust-7',
};

beforeAll(async () => {
  ({ sys, payment } = await startQuoteSystem(clock));
});
afterAll(() => sys?.close());

describe('GraphQL cart quote with a quote token', () => {
  it('answers 10 lines with prices, the promotion and a token, in two subgraph fetches', async () => {
    const before = await sys.subgraphRequests();
    const res = await sys.gql(QUOTE, { variables: { input: cart } });
    expect(res.errors).toBeUndefined();
    // Prices in one batch (pricing), then promotions and the token (one _entities fetch).
    expect((await sys.subgraphRequests()) - before).toBe(2);
    const q = (res.data as unknown as GqlQuote).cartQuote;
    expect(q.lines).toHaveLength(10);
    const cheapestTool = Math.min(...q.lines.filter((l) => l.category === 'tools').map((l) => l.unitPrice));
    expect(q.promotions.applied).toEqual([
      expect.objectContaining({ promotionId: 'PROMO-TOOLS-3', amount: cheapestTool }),
    ]);
    expect(cents(q.promotions.total)).toBe(cents(q.subtotal) - cents(q.promotions.discountTotal));

    const v = await verify(sys.url, payment, q.quoteToken, cart);
    expect(v.body).toMatchObject({
      valid: true,
      claims: {
        totals: {
          subtotal: q.subtotal,
          discountTotal: q.promotions.discountTotal,
          total: q.promotions.total,
        },
        promotions: [{ promotionId: 'PROMO-TOOLS-3', amount: cheapestTool }],
        promotionsEvaluated: true,
        // the quote's id is the token's cart hash, as in the REST quote
        cart_hash: q.id,
      },
    });
    const claimed = (v.body.claims as { lines: { sku: string; unitPrice: number; source: string }[] }).lines;
    expect(claimed.map((l) => [l.sku, l.unitPrice, l.source])).toEqual(
      q.lines.map((l) => [l.sku, l.unitPrice, l.source.toLowerCase()]),
    );
  });

  it.each([
    ['the same SKU twice', [cart.lines[0], cart.lines[0]], '/lines/1/sku'],
    ['a quantity over 999', [{ sku: cart.lines[0]?.sku, quantity: 20_000 }], '/lines/0/quantity'],
  ])('refuses %s as BAD_USER_INPUT, as the REST quote answers 422', async (_label, lines, pointer) => {
    const res = await sys.gql(QUOTE, { variables: { input: { ...cart, lines } } });
    expect(res.errors?.[0]?.extensions?.code).toBe('BAD_USER_INPUT');
    expect(JSON.stringify(res.errors)).toContain(pointer);
  });

  it('evaluates the promotions once for both the promotions field and the token', async () => {
    const engine = (
      sys.local.promotions as unknown as { api: { evaluate: (...a: unknown[]) => Promise<unknown> } }
    ).api;
    const original = engine.evaluate;
    let calls = 0;
    engine.evaluate = (...args: unknown[]) => {
      calls++;
      return original.apply(engine, args);
    };
    try {
      const res = await sys.gql(QUOTE, { variables: { input: cart } });
      expect(res.errors).toBeUndefined();
      expect(calls).toBe(1);
    } finally {
      engine.evaluate = original;
    }
  });

  it('signs the same cart hash as the REST quote, so either token verifies against the cart', async () => {
    const rest = await getQuote(sys.url, cart);
    const res = await sys.gql(QUOTE, { variables: { input: { ...cart, lines: [...cart.lines].reverse() } } });
    const gqlToken = (res.data as unknown as GqlQuote).cartQuote.quoteToken;
    expect((await verify(sys.url, payment, rest.body.quoteToken, cart)).body.valid).toBe(true);
    expect((await verify(sys.url, payment, gqlToken, cart)).body.valid).toBe(true);
    expect(
      (await verify(sys.url, payment, gqlToken, { ...cart, customerId: 'someone-else' })).body,
    ).toMatchObject({
      valid: false,
      reason: 'cart_mismatch',
    });
  });

  it('expires the GraphQL token after 15 minutes', async () => {
    const res = await sys.gql(QUOTE, { variables: { input: cart } });
    const token = (res.data as unknown as GqlQuote).cartQuote.quoteToken;
    clock.advance(15 * 60_000);
    try {
      expect((await verify(sys.url, payment, token, cart)).body).toMatchObject({
        valid: false,
        reason: 'expired',
      });
    } finally {
      clock.advance(-15 * 60_000);
    }
  });
});

/**
 * Money as exact decimals over GraphQL (issue 21 part 2): every Decimal twin prints its Float
 * field's amount exactly, Decimal inputs are taken and refused exactly, and a cart quote's
 * Decimal figures equal GET /cart/quote's for the same cart, for any cart.
 */
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestSystem } from '../../harness/system.ts';
import { ManualClock } from '../../lib/clock.ts';
import { CATALOG, type Cart, getQuote, startQuoteSystem, tenLines } from './support.ts';

const QUOTE = `query Quote($input: CartQuoteInput!) {
  cartQuote(input: $input) {
    subtotal subtotalDecimal
    lines { sku quantity basePrice basePriceDecimal unitPrice unitPriceDecimal lineTotal lineTotalDecimal }
    promotions {
      subtotal subtotalDecimal discountTotal discountTotalDecimal total totalDecimal
      applied { amount amountDecimal allocations { amount amountDecimal } }
      lines { lineTotal lineTotalDecimal discount discountDecimal total totalDecimal }
    }
  }
}`;

interface Quote {
  subtotalDecimal: string;
  lines: Record<string, number | string>[];
  promotions: {
    subtotalDecimal: string;
    discountTotalDecimal: string;
    totalDecimal: string;
    applied: (Record<string, number | string> & { allocations: Record<string, number | string>[] })[];
    lines: Record<string, number | string>[];
  };
}

const PRICED = `query Priced($input: CartQuoteInput!) {
  cartQuote(input: $input) { lines { basePriceDecimal unitPriceDecimal lineTotal lineTotalDecimal } }
}`;

const SET_PRICE = `mutation ($input: SetBasePriceInput!) {
  setBasePrice(input: $input) { sku currency amount amountDecimal }
}`;

/** Exact decimal text → integer hundredths of a cent (enough for any 2-decimal amount). */
const units = (text: string): bigint => {
  const [whole = '0', frac = ''] = text.replace('-', '').split('.');
  const v = BigInt(whole) * 10_000n + BigInt(frac.padEnd(4, '0'));
  return text.startsWith('-') ? -v : v;
};

/** Every pair `x` / `xDecimal` of an object tree: the Decimal must be the Float's exact text. */
function twins(value: unknown, path = ''): [string, number, string][] {
  if (Array.isArray(value)) return value.flatMap((v, i) => twins(v, `${path}[${i}]`));
  if (!value || typeof value !== 'object') return [];
  const o = value as Record<string, unknown>;
  return Object.entries(o).flatMap(([k, v]) =>
    k.endsWith('Decimal') && typeof o[k.slice(0, -7)] === 'number'
      ? [[`${path}.${k}`, o[k.slice(0, -7)] as number, v as string] as [string, number, string]]
      : twins(v, `${path}.${k}`),
  );
}

const clock = new ManualClock(Date.now());
let sys: TestSystem;
let admin: string;
const usd = CATALOG.filter((p) => p.prices.USD !== undefined);

beforeAll(async () => {
  ({ sys } = await startQuoteSystem(clock));
  admin = await sys.token(['pricing:admin']);
});
afterAll(() => sys?.close());

const quote = async (cart: Cart): Promise<Quote> => {
  const res = await sys.gql(QUOTE, { variables: { input: cart } });
  expect(res.errors, JSON.stringify(res.errors)).toBeUndefined();
  return (res.data as { cartQuote: Quote }).cartQuote;
};

describe('Decimal money fields over GraphQL', () => {
  it('prints every Decimal twin of a cart quote as its Float field’s exact text', async () => {
    const lines = tenLines().map(({ sku, quantity }) => ({ sku, quantity }));
    const q = await quote({ lines, currency: 'USD', region: 'US', customerId: 'cust-d' });
    const pairs = twins(q);
    // 10 lines × 3 (pricing) + 10 × 3 (promotion lines) + 4 totals + the tools discount and its allocation.
    expect(pairs.length).toBeGreaterThanOrEqual(66);
    for (const [path, float, decimal] of pairs) {
      expect(typeof decimal, path).toBe('string');
      expect(decimal, path).toBe(String(float));
    }
    expect(q.promotions.applied).toHaveLength(1);
  });

  it('adds 0.10 and 0.20 to exactly 0.3, where doubles give 0.30000000000000004', async () => {
    // Stock between the scarcity and overstock thresholds: no modifier, the unit price is the base.
    const [a, b] = usd.filter((p) => p.inventoryLevel >= 10 && p.inventoryLevel <= 500).slice(20, 22);
    for (const [p, amount] of [
      [a, '0.10'],
      [b, '0.20'],
    ] as const) {
      const res = await sys.gql(SET_PRICE, {
        token: admin,
        variables: { input: { sku: p?.sku, currency: 'USD', amountDecimal: amount } },
      });
      expect(res.errors).toBeUndefined();
      expect(res.data?.setBasePrice).toMatchObject({ amountDecimal: amount.replace(/0$/, '') });
    }
    // A region and segment without modifiers, so the unit prices are the base prices.
    const cart: Cart = {
      lines: [
        { sku: a?.sku as string, quantity: 1 },
        { sku: b?.sku as string, quantity: 1 },
      ],
      currency: 'USD',
      region: 'EU',
    };
    const q = await quote(cart);
    const exact = q.lines.reduce((s, l) => s + units(l.lineTotalDecimal as string), 0n);
    expect(units(q.subtotalDecimal)).toBe(exact);
    expect(String((q.lines[0]?.lineTotal as number) + (q.lines[1]?.lineTotal as number))).not.toBe(
      q.subtotalDecimal,
    );
    expect(q.lines.map((l) => l.unitPriceDecimal)).toEqual(['0.1', '0.2']);
    expect(q.subtotalDecimal).toBe('0.3');
    const rest = await getQuote(sys.url, cart);
    expect(String(rest.body.subtotal)).toBe(q.subtotalDecimal);
  });

  it('takes the largest base price exactly and refuses 1e-17 above it, or a Float that is not whole cents', async () => {
    const sku = usd[103]?.sku as string;
    const set = (input: Record<string, unknown>) =>
      sys.gql(SET_PRICE, { token: admin, variables: { input: { sku, currency: 'USD', ...input } } });
    const big = await set({ amountDecimal: '999999999999.99' });
    expect(big.data?.setBasePrice).toEqual({
      sku,
      currency: 'USD',
      amount: 999999999999.99,
      amountDecimal: '999999999999.99',
    });
    // Pricing alone: the promotions engine takes lines up to 10,000,000 (docs/promotions.md).
    const priced = await sys.gql(PRICED, {
      variables: { input: { lines: [{ sku, quantity: 7 }], currency: 'USD', region: 'EU' } },
    });
    const line = (priced.data as { cartQuote: Quote }).cartQuote.lines[0];
    expect(line?.basePriceDecimal).toBe('999999999999.99');
    expect(units(line?.lineTotalDecimal as string)).toBe(units(line?.unitPriceDecimal as string) * 7n);
    expect(line?.lineTotalDecimal).toBe(String(line?.lineTotal));

    const refused: [Record<string, unknown>, string][] = [
      [{ amountDecimal: '999999999999.99000000000000001' }, '/input/amountDecimal'],
      [{ amountDecimal: '12.345' }, '/input/amountDecimal'],
      [{ amount: 0.1 + 0.2 }, '/input/amount'],
      [{ amount: 12.345 }, '/input/amount'],
      [{ amount: 12.5, amountDecimal: '12.50' }, '/input/amountDecimal'],
      [{}, '/input/amountDecimal'],
    ];
    for (const [input, pointer] of refused) {
      const res = await set(input);
      expect(res.status, JSON.stringify(input)).toBe(200);
      const err = res.errors?.[0] as { extensions?: { code?: string; errors?: { pointer: string }[] } };
      expect(err?.extensions?.code, JSON.stringify(input)).toBe('BAD_USER_INPUT');
      expect(err?.extensions?.errors?.[0]?.pointer).toBe(pointer);
    }
    // Above the catalog's limit: the domain refuses it too.
    expect((await set({ amountDecimal: '1000000000000.00' })).errors?.[0]?.extensions?.code).toBe(
      'BAD_USER_INPUT',
    );
    // Nothing refused was stored: the price is still the largest one.
    const after = await sys.gql(PRICED, {
      variables: { input: { lines: [{ sku, quantity: 1 }], currency: 'USD', region: 'EU' } },
    });
    expect((after.data as { cartQuote: Quote }).cartQuote.lines[0]?.basePriceDecimal).toBe('999999999999.99');
    // The deprecated Float still works for whole cents.
    expect((await set({ amount: 12.5 })).data?.setBasePrice).toMatchObject({ amountDecimal: '12.5' });
  });

  it('evaluates a basket given in Decimal exactly as the same basket in Float, and refuses a third decimal', async () => {
    const q = `query($b: PricedBasketInput!) { evaluatePromotions(basket: $b) { subtotalDecimal discountTotalDecimal totalDecimal } }`;
    const lines = tenLines().map((l, i) => ({ ...l, unitPrice: 0.1 * (i + 1) }));
    const exactLines = lines.map(({ unitPrice, ...l }, i) => ({
      ...l,
      unitPriceDecimal: ((i + 1) / 10).toFixed(2),
    }));
    // 0.1 × 3 is 0.30000000000000004 as a double: the Float form of that line is refused.
    const float = await sys.gql(q, { variables: { b: { currency: 'USD', lines } } });
    expect(float.errors?.[0]?.extensions?.code).toBe('BAD_USER_INPUT');
    const decimal = await sys.gql(q, { variables: { b: { currency: 'USD', lines: exactLines } } });
    expect(decimal.errors).toBeUndefined();
    const subtotal = exactLines.reduce((s, l) => s + units(l.unitPriceDecimal) * BigInt(l.quantity), 0n);
    const evaluation = (decimal.data as { evaluatePromotions: { subtotalDecimal: string } })
      .evaluatePromotions;
    expect(units(evaluation.subtotalDecimal)).toBe(subtotal);
    const whole = lines.map((l) => ({ ...l, unitPrice: Math.round(l.unitPrice * 100) / 100 }));
    const same = await sys.gql(q, { variables: { b: { currency: 'USD', lines: whole } } });
    expect(same.data).toEqual(decimal.data);

    const third = await sys.gql(q, {
      variables: { b: { currency: 'USD', lines: [{ ...exactLines[0], unitPriceDecimal: '1.005' }] } },
    });
    const err = third.errors?.[0] as { extensions?: { code?: string; errors?: { pointer: string }[] } };
    expect(err?.extensions?.code).toBe('BAD_USER_INPUT');
    expect(err?.extensions?.errors?.[0]?.pointer).toBe('/lines/0/unitPriceDecimal');
  });

  it('takes a Decimal literal in the document as exactly as a variable (graphql-jit inlines literals)', async () => {
    const sku = usd[104]?.sku as string;
    const literal = await sys.gql(
      `mutation { setBasePrice(input: { sku: "${sku}", currency: "USD", amountDecimal: "21.50" }) { amountDecimal } }`,
      { token: admin },
    );
    expect(literal.errors).toBeUndefined();
    expect(literal.data?.setBasePrice).toEqual({ amountDecimal: '21.5' });
    const unquoted = await sys.gql(
      `mutation { setBasePrice(input: { sku: "${sku}", currency: "USD", amountDecimal: 19.99 }) { amountDecimal } }`,
      { token: admin },
    );
    expect(unquoted.data?.setBasePrice).toEqual({ amountDecimal: '19.99' });
    const third = await sys.gql(
      `{ evaluatePromotions(basket: { currency: "USD", lines: [{ sku: "A", category: "c", quantity: 1, unitPriceDecimal: "1.005" }] }) { total } }`,
    );
    const err = third.errors?.[0] as { extensions?: { code?: string; errors?: { pointer: string }[] } };
    expect(err?.extensions?.code).toBe('BAD_USER_INPUT');
    expect(err?.extensions?.errors?.[0]?.pointer).toBe('/lines/0/unitPriceDecimal');
  });

  it('gives every cart the same Decimal figures over GraphQL as GET /cart/quote (property)', async () => {
    const products = usd.slice(0, 60);
    const line = fc.record({
      sku: fc.constantFrom(...products.map((p) => p.sku)),
      quantity: fc.integer({ min: 1, max: 40 }),
    });
    const carts = fc.record({
      lines: fc.uniqueArray(line, { minLength: 1, maxLength: 12, selector: (l) => l.sku }),
      region: fc.constantFrom('US', 'EU'),
      customerSegment: fc.constantFrom(undefined, 'VIP', 'STANDARD'),
      customerId: fc.constantFrom(undefined, 'cust-p1', 'cust-p2'),
    });
    await fc.assert(
      fc.asyncProperty(carts, async (c) => {
        const cart: Cart = {
          lines: c.lines,
          currency: 'USD',
          region: c.region,
          ...(c.customerSegment ? { customerSegment: c.customerSegment } : {}),
          ...(c.customerId ? { customerId: c.customerId } : {}),
        };
        const g = await quote(cart);
        const r = (await getQuote(sys.url, cart)).body;
        const text = (n: number) => String(n);
        expect(g.subtotalDecimal).toBe(text(r.subtotal));
        expect(g.promotions.discountTotalDecimal).toBe(text(r.discountTotal));
        expect(g.promotions.totalDecimal).toBe(text(r.total));
        g.lines.forEach((l, i) => {
          const rl = r.lines[i];
          expect(l.basePriceDecimal).toBe(text(rl?.basePrice as number));
          expect(l.unitPriceDecimal).toBe(text(rl?.unitPrice as number));
          expect(l.lineTotalDecimal).toBe(text(rl?.lineTotal as number));
          expect(g.promotions.lines[i]?.discountDecimal).toBe(text(rl?.discount as number));
          expect(g.promotions.lines[i]?.totalDecimal).toBe(text(rl?.total as number));
        });
      }),
      { numRuns: 40 },
    );
  });
});

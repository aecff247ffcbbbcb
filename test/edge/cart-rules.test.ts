import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import YAML from 'yaml';
import { CART_LIMITS, cartHash, cartViolations } from '../../lib/quote-token/canonical-cart.ts';

const line = (sku: string, quantity = 1) => ({ sku, quantity });
const base = { currency: 'USD', region: 'EU' };
const skus = (n: number) =>
  Array.from({ length: n }, (_, i) => line(`SKU-ABC-${String(i).padStart(6, '0')}`));

describe('cart rules shared by the REST and GraphQL quotes', () => {
  it.each([
    ['no line', [], '/lines'],
    ['51 lines', skus(51), '/lines'],
    ['quantity 0', [line('SKU-ABC-000001', 0)], '/lines/0/quantity'],
    ['quantity 1000', [line('SKU-ABC-000001', 1000)], '/lines/0/quantity'],
    ['a fractional quantity', [line('SKU-ABC-000001', 1.5)], '/lines/0/quantity'],
    ['the same SKU twice', [line('SKU-ABC-000001'), line('SKU-ABC-000001', 2)], '/lines/1/sku'],
  ])('refuses %s', (_label, lines, pointer) => {
    expect(cartViolations({ ...base, lines }).map((v) => v.pointer)).toContain(pointer);
  });

  it('refuses more than the coupon limit and accepts a cart at every limit', () => {
    const coupons = Array.from({ length: CART_LIMITS.maxCoupons + 1 }, (_, i) => `C${i}`);
    expect(cartViolations({ ...base, lines: skus(1), coupons }).map((v) => v.pointer)).toEqual(['/coupons']);
    const atLimits = {
      ...base,
      lines: [...skus(49), line('SKU-ZZZ-000001', 999)],
      coupons: coupons.slice(1),
    };
    expect(cartViolations(atLimits)).toEqual([]);
  });

  it('states the same limits as the OpenAPI document of GET /cart/quote', () => {
    const doc = YAML.parse(readFileSync(new URL('../../schemas/openapi/edge.yaml', import.meta.url), 'utf8'));
    type Param = { name: string; schema: { maxItems: number } };
    // Shared parameters are references into components.parameters (the agent quote reuses them).
    const params = (doc.paths['/cart/quote'].get.parameters as ({ $ref: string } | Param)[]).map((p) =>
      '$ref' in p ? (doc.components.parameters[p.$ref.split('/').pop() as string] as Param) : p,
    );
    expect(params.find((p) => p.name === 'line')?.schema.maxItems).toBe(CART_LIMITS.maxLines);
    expect(params.find((p) => p.name === 'coupon')?.schema.maxItems).toBe(CART_LIMITS.maxCoupons);
  });

  it('hashes coupon spellings that promotions treats alike to the same cart', () => {
    const a = cartHash({ ...base, lines: skus(2), coupons: ['welcome10', 'SPRING'] });
    const b = cartHash({ ...base, lines: skus(2), coupons: [' SPRING', 'WELCOME10 ', 'Welcome10'] });
    expect(a).toBe(b);
    expect(cartHash({ ...base, lines: skus(2), coupons: ['WELCOME11'] })).not.toBe(a);
  });
});

import { describe, expect, it } from 'vitest';
import { RuleInvalid } from '../../subgraphs/promotions/domain/errors.ts';
import { compileRule } from '../../subgraphs/promotions/domain/rule.ts';
import { SAMPLE_RULES, SPEC_SAMPLE_RULE } from '../../subgraphs/promotions/store/seed.ts';
import { rule } from './support.ts';

const leaf = (fact: string, operator: string, value: unknown) => ({ all: [{ fact, operator, value }] });

/** The pointers a document is refused at (throws if it is accepted). */
function refusedAt(doc: unknown): string[] {
  try {
    compileRule(doc);
  } catch (err) {
    expect(err).toBeInstanceOf(RuleInvalid);
    return (err as RuleInvalid).errors.map((e) => e.pointer);
  }
  throw new Error('the rule was accepted');
}

describe('loading a rule document (format 2.1)', () => {
  it('accepts the spec sample and every seeded rule', () => {
    for (const doc of SAMPLE_RULES) expect(compileRule(doc).promotionId).toBe(doc.promotion_id);
  });

  it.each([
    ['an unknown version', { ...SPEC_SAMPLE_RULE, version: '3.0' }, ['/version']],
    ['a missing version', { ...SPEC_SAMPLE_RULE, version: undefined }, ['/version']],
    [
      'an unknown fact',
      rule({ promotion_id: 'X', conditions: leaf('cart.weight', 'equal', 1) }),
      ['/conditions/all/0/fact'],
    ],
    [
      'an unknown operator',
      rule({ promotion_id: 'X', conditions: leaf('cart.subtotal', 'between', 1) }),
      ['/conditions/all/0/operator'],
    ],
    [
      'an operator that does not fit the fact',
      rule({ promotion_id: 'X', conditions: leaf('cart.items', 'greater_than', 1) }),
      ['/conditions/all/0/operator'],
    ],
    [
      'a string where a number is needed',
      rule({ promotion_id: 'X', conditions: leaf('cart.total_quantity', 'greater_than_inclusive', '3') }),
      ['/conditions/all/0/value'],
    ],
    [
      'a number where a category is needed',
      rule({ promotion_id: 'X', conditions: leaf('cart.items', 'contains_category', 7) }),
      ['/conditions/all/0/value'],
    ],
    [
      'an amount with 3 decimals',
      rule({ promotion_id: 'X', conditions: leaf('cart.subtotal', 'greater_than', 9.999) }),
      ['/conditions/all/0/value'],
    ],
    [
      'a bad item inside an in-list',
      rule({ promotion_id: 'X', conditions: leaf('customer.segment', 'in', ['VIP', 3]) }),
      ['/conditions/all/0/value/1'],
    ],
    [
      'a condition missing its value',
      rule({ promotion_id: 'X', conditions: { all: [{ fact: 'cart.currency', operator: 'equal' }] } }),
      ['/conditions/all/0/value'],
    ],
    [
      'a nested bad leaf',
      rule({
        promotion_id: 'X',
        conditions: { any: [{ not: { fact: 'cart.foo', operator: 'equal', value: 1 } }] },
      }),
      ['/conditions/any/0/not/fact'],
    ],
    ['an empty any', rule({ promotion_id: 'X', conditions: { any: [] } }), ['/conditions/any']],
    [
      'an unknown action type',
      rule({ promotion_id: 'X', actions: [{ type: 'FREE_PONY', value: 1 }] }),
      ['/actions/0/type'],
    ],
    [
      'a percentage above 100',
      rule({ promotion_id: 'X', actions: [{ type: 'PERCENTAGE_DISCOUNT_CART', value: 101 }] }),
      ['/actions/0/value'],
    ],
    [
      'a percentage given as a string',
      rule({ promotion_id: 'X', actions: [{ type: 'PERCENTAGE_DISCOUNT_CART', value: '10' }] }),
      ['/actions/0/value'],
    ],
    [
      'an unknown action field',
      rule({
        promotion_id: 'X',
        actions: [{ type: 'PERCENTAGE_DISCOUNT_CART', value: 10, target_sku: 'A' }],
      }),
      ['/actions/0/target_sku'],
    ],
    [
      'a fixed amount without currency',
      rule({ promotion_id: 'X', actions: [{ type: 'FIXED_AMOUNT_DISCOUNT', value: 5 }] }),
      ['/actions/0/currency'],
    ],
    [
      'tiers out of order',
      rule({
        promotion_id: 'X',
        actions: [
          {
            type: 'QUANTITY_TIER_DISCOUNT',
            tiers: [
              { min_quantity: 10, value: 5 },
              { min_quantity: 5, value: 10 },
            ],
          },
        ],
      }),
      ['/actions/0/tiers/1/min_quantity'],
    ],
    ['no actions', rule({ promotion_id: 'X', actions: [] }), ['/actions']],
    ['a fractional priority', rule({ promotion_id: 'X', priority: 1.5 }), ['/priority']],
    ['an unknown status', { ...rule({ promotion_id: 'X' }), status: 'LIVE' }, ['/status']],
    ['a cap of 0', rule({ promotion_id: 'X', max_redemptions_per_user: 0 }), ['/max_redemptions_per_user']],
    ['an unknown top-level field', { ...rule({ promotion_id: 'X' }), discount: 5 }, ['/discount']],
    ['a malformed date', rule({ promotion_id: 'X', valid_from: '2026-13-01' }), ['/valid_from']],
    [
      'a window that ends before it starts',
      rule({ promotion_id: 'X', valid_from: '2026-02-01T00:00:00Z', valid_until: '2026-01-01T00:00:00Z' }),
      ['/valid_until'],
    ],
    ['a bad coupon code', rule({ promotion_id: 'X', coupon_codes: ['has space'] }), ['/coupon_codes/0']],
    ['a field name with a slash (escaped pointer)', { ...rule({ promotion_id: 'X' }), 'a/b': 1 }, ['/a~1b']],
  ])('refuses %s, pointing at the place', (_label, doc, pointers) => {
    expect(refusedAt(doc)).toEqual(pointers);
  });

  it('reports every problem of a document at once', () => {
    const pointers = refusedAt({
      version: '2.1',
      promotion_id: '',
      name: 'x',
      priority: 1,
      status: 'ACTIVE',
      conditions: leaf('nope', 'equal', 1),
      actions: [{ type: 'NOPE' }],
    });
    expect(pointers).toEqual(['/promotion_id', '/conditions/all/0/fact', '/actions/0/type']);
  });

  it.each([null, [], 'rule', 42])('refuses a document that is not an object: %j', (doc) => {
    expect(refusedAt(doc)).toEqual(['']);
  });

  it('writes a lone surrogate of a member name as \\udXXX text in the pointer, so the error is Unicode text', () => {
    const doc = {
      ...rule({
        promotion_id: 'X',
        conditions: { all: [{ fact: 'customer.segment', operator: 'equal', value: 'S' }] },
      }),
      'x\ud800/y': 1,
    };
    (doc.conditions as { all: Record<string, unknown>[] }).all.push({ 'k\udc00': 1 });
    let errors: readonly { pointer: string; message: string }[] = [];
    try {
      compileRule(doc);
    } catch (err) {
      errors = (err as RuleInvalid).errors;
    }
    // The unknown field, and the first text PostgreSQL refuses in document order.
    expect(errors).toContainEqual({ pointer: '/x\\ud800~1y', message: 'is not a known field' });
    expect(errors.filter((e) => /lone surrogate/.test(e.message)).map((e) => e.pointer)).toEqual([
      '/conditions/all/1/k\\udc00',
    ]);
    for (const e of errors) {
      expect(e.pointer).not.toMatch(/[\ud800-\udfff]/);
      expect(Buffer.from(`${e.pointer} ${e.message}`, 'utf8').toString('utf8')).toBe(
        `${e.pointer} ${e.message}`,
      );
    }
  });

  it('keeps a surrogate pair of a member name as written in the pointer', () => {
    expect(refusedAt({ ...rule({ promotion_id: 'X' }), 'k\u{1F600}': 1 })).toEqual(['/k\u{1F600}']);
  });
});

import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { promotionsContract } from '../../subgraphs/promotions/contract.ts';
import { toBasket } from '../../subgraphs/promotions/domain/basket.ts';
import { BasketInvalid, RuleInvalid } from '../../subgraphs/promotions/domain/errors.ts';
import { compileRule } from '../../subgraphs/promotions/domain/rule.ts';
import { SPEC_SAMPLE_RULE } from '../../subgraphs/promotions/store/seed.ts';

/** Mutates one place of a valid document: the kind of mistake an admin makes. */
const mutated = fc
  .tuple(
    fc.constantFrom(
      'version',
      'priority',
      'status',
      'conditions',
      'actions',
      'max_redemptions_per_user',
      'name',
    ),
    fc.oneof(
      fc.anything(),
      fc.constant(null),
      fc.constant([]),
      fc.constant({ all: [{}] }),
      fc.constant([{ type: 'X' }]),
    ),
  )
  .map(([key, value]) => ({ ...SPEC_SAMPLE_RULE, [key]: value }));

describe('bad input is refused with a typed error, never a crash', () => {
  it('compileRule: any JSON value compiles or is refused with RuleInvalid and pointers', () => {
    fc.assert(
      fc.property(fc.oneof(fc.jsonValue(), mutated), (doc) => {
        try {
          compileRule(doc);
        } catch (err) {
          expect(err).toBeInstanceOf(RuleInvalid);
          const errors = (err as RuleInvalid).errors;
          expect(errors.length).toBeGreaterThan(0);
          for (const e of errors) expect(e.pointer === '' || e.pointer.startsWith('/')).toBe(true);
        }
      }),
      { numRuns: 500 },
    );
  });

  it('a basket that passes the OpenAPI contract always converts (or is refused with BasketInvalid)', () => {
    const contract = promotionsContract();
    const line = fc.record(
      {
        sku: fc.string({ minLength: 1, maxLength: 64 }),
        category: fc.string({ minLength: 1, maxLength: 64 }),
        quantity: fc.integer({ min: -1, max: 10_001 }),
        unitPrice: fc.oneof(fc.double(), fc.string(), fc.integer()),
        lineTotal: fc.oneof(fc.double({ min: 0, max: 1e7 }), fc.stringMatching(/^\d{1,8}(\.\d{1,3})?$/)),
      },
      { requiredKeys: ['sku', 'category', 'quantity', 'unitPrice'] },
    );
    fc.assert(
      fc.property(
        fc.record({
          currency: fc.constantFrom('USD', 'usd', 'EURO'),
          lines: fc.array(line, { maxLength: 5 }),
        }),
        (body) => {
          if (!contract.pricedBasket(body)) return;
          try {
            const b = toBasket(body);
            expect(b.subtotalCents).toBeGreaterThanOrEqual(0);
          } catch (err) {
            expect(err).toBeInstanceOf(BasketInvalid);
          }
        },
      ),
      { numRuns: 500 },
    );
  });
});

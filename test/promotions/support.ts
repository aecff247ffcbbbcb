import type { PricedBasket, PricedLine, PromotionEvaluation } from '../../subgraphs/promotions/api.ts';
import { toBasket } from '../../subgraphs/promotions/domain/basket.ts';
import { type EvaluationContext, evaluate } from '../../subgraphs/promotions/domain/evaluate.ts';
import { compileRule, type RuleDocument } from '../../subgraphs/promotions/domain/rule.ts';
import { buildRuleset } from '../../subgraphs/promotions/domain/ruleset.ts';

/** A valid 2.1 rule document with the given fields replaced. */
export function rule(fields: Partial<RuleDocument> & { promotion_id: string }): RuleDocument {
  return {
    version: '2.1',
    name: fields.promotion_id,
    priority: 1,
    status: 'ACTIVE',
    conditions: { all: [] },
    actions: [{ type: 'PERCENTAGE_DISCOUNT_CART', value: 10 }],
    ...fields,
  };
}

export const line = (
  sku: string,
  category: string,
  quantity: number,
  unitPrice: number | string,
): PricedLine => ({
  sku,
  category,
  quantity,
  unitPrice,
});

export const basket = (lines: PricedLine[], extra: Partial<PricedBasket> = {}): PricedBasket => ({
  currency: 'USD',
  lines,
  ...extra,
});

export const NOW = Date.UTC(2026, 5, 1);

/** Compiles the rules and evaluates the basket: the pure core, no I/O. */
export function run(
  docs: RuleDocument[],
  input: PricedBasket,
  ctx: Partial<EvaluationContext> = {},
): PromotionEvaluation {
  return evaluate(buildRuleset(docs.map(compileRule)), toBasket(input), {
    now: NOW,
    redeemed: new Map(),
    ...ctx,
  });
}

/** Cents of a reply amount, for exact sums in assertions. */
export const cents = (amount: number): number => Math.round(amount * 100);

/**
 * Promotions: 1,000 active rules evaluated in process against a 50-line priced basket, beside
 * the same rules in json-rules-engine (the baseline, measured in the same run).
 *
 * The rules and basket are generated from a fixed seed. Each rule has two conditions under
 * `all` (a quarter of them: a condition and an `any` of a condition and a `not`), each drawn
 * evenly from seven kinds: a category of 100, a sku of 1,000, total quantity ≥ n, subtotal > x,
 * segment in a pair of 6, a coupon of 31 entered, currency USD or EUR; one action of the six
 * types (a third of them cart-wide); a tenth capped at one redemption. All are STACKABLE and
 * always valid: the heaviest case, every rule whose conditions hold runs its actions (a
 * STOP_AFTER, EXCLUSIVE or window would only let the engine do less than the baseline). The
 * basket holds 50 of the 1,000 skus and 26 of the 100 categories, a VIP customer, coupons
 * CODE1 and CODE2, in USD.
 *
 * With this seed the rule index (subgraphs/promotions/domain/rule-index.ts) leaves 141 rules
 * unindexed (no condition under `all` that names a key), and visits 323 of the 1,000 for this
 * basket; the 677 it skips each lack a sku, category, coupon, segment or currency that one of
 * their conditions requires. 139 rules' conditions hold, 65 give a discount (2,153 per-line
 * allocations: 45 of them are cart-wide), 74 find nothing eligible; 861 fail a condition.
 *
 * json-rules-engine only decides which rules hold; to give it the same job, the discounts of the
 * rules it fires are then computed with our compiled actions (generous to the baseline: no
 * explanations, no stacking rules beyond priority order). Our rows: the pure evaluation (the
 * explanations of the 935 rules that gave nothing are built only when `notApplied` is read, see
 * docs/promotions.md), the same with every explanation read, and the service's evaluate
 * (contract validation, redemption counts, evaluation) as the edge calls it in process.
 */
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { Engine } from 'json-rules-engine';
import { loadConfig } from '../../lib/config.ts';
import { createPlatform } from '../../lib/platform.ts';
import type { PricedBasket } from '../../subgraphs/promotions/api.ts';
import { toBasket } from '../../subgraphs/promotions/domain/basket.ts';
import { evaluate } from '../../subgraphs/promotions/domain/evaluate.ts';
import { compileRule, type RuleDocument } from '../../subgraphs/promotions/domain/rule.ts';
import { buildRuleset } from '../../subgraphs/promotions/domain/ruleset.ts';
import { createPromotionService } from '../../subgraphs/promotions/service.ts';
import type { Scenario } from '../harness.ts';

const GROUP = 'promotions';
const BASELINE = 'json-rules-engine, 1,000 rules, 50 lines';
const RULES = 1000;
const LINES = 50;

/** mulberry32: a small seeded PRNG, so every run measures the same rules. */
function prng(seed: number) {
  let a = seed;
  const next = () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  return { next, int: (lo: number, hi: number) => lo + Math.floor(next() * (hi - lo + 1)) };
}

const SEGMENTS = ['VIP', 'GOLD', 'SILVER', 'NEW', 'B2B', 'STAFF'];
const CATEGORIES = Array.from({ length: 100 }, (_, i) => `cat-${i}`);

export function generateRules(n: number): RuleDocument[] {
  const r = prng(42);
  const pick = <T>(xs: readonly T[]): T => xs[r.int(0, xs.length - 1)] as T;
  const leaf = () => {
    switch (r.int(0, 6)) {
      case 0:
        return { fact: 'cart.items', operator: 'contains_category', value: pick(CATEGORIES) };
      case 1:
        return { fact: 'cart.items', operator: 'contains_sku', value: `SKU-${r.int(0, 999)}` };
      case 2:
        return { fact: 'cart.total_quantity', operator: 'greater_than_inclusive', value: r.int(1, 400) };
      case 3:
        return { fact: 'cart.subtotal', operator: 'greater_than', value: r.int(10, 40_000) };
      case 4:
        return { fact: 'customer.segment', operator: 'in', value: [pick(SEGMENTS), pick(SEGMENTS)] };
      case 5:
        return { fact: 'coupon.codes', operator: 'contains', value: `CODE${r.int(0, 30)}` };
      default:
        return { fact: 'cart.currency', operator: 'equal', value: pick(['USD', 'EUR']) };
    }
  };
  const action = (): Record<string, unknown> => {
    switch (r.int(0, 5)) {
      case 0:
        return { type: 'PERCENTAGE_DISCOUNT_CHEAPEST_ITEM', value: 100, target_category: pick(CATEGORIES) };
      case 1:
        return {
          type: 'PERCENTAGE_DISCOUNT_CATEGORY',
          value: r.int(1, 30),
          target_category: pick(CATEGORIES),
        };
      case 2:
        return { type: 'PERCENTAGE_DISCOUNT_CART', value: r.int(1, 10) };
      case 3:
        return { type: 'FIXED_AMOUNT_DISCOUNT', value: r.int(1, 20), currency: 'USD' };
      case 4:
        return {
          type: 'BUY_X_GET_Y',
          buy_quantity: r.int(1, 3),
          get_quantity: 1,
          target_category: pick(CATEGORIES),
        };
      default:
        return {
          type: 'QUANTITY_TIER_DISCOUNT',
          target_category: pick(CATEGORIES),
          tiers: [
            { min_quantity: 3, value: 5 },
            { min_quantity: 10, value: 10 },
          ],
        };
    }
  };
  return Array.from({ length: n }, (_, i) => {
    const conditions =
      r.int(0, 3) === 0 ? { all: [leaf(), { any: [leaf(), { not: leaf() }] }] } : { all: [leaf(), leaf()] };
    return {
      version: '2.1',
      promotion_id: `BENCH-${i}`,
      name: `bench rule ${i}`,
      priority: r.int(1, 100),
      status: 'ACTIVE',
      conditions,
      actions: [action()],
      ...(r.int(0, 9) === 0 ? { max_redemptions_per_user: 1 } : {}),
    };
  });
}

export function generateBasket(): PricedBasket {
  const r = prng(7);
  return {
    currency: 'USD',
    customer: { id: 'bench-customer', segment: 'VIP' },
    coupons: ['CODE1', 'CODE2'],
    lines: Array.from({ length: LINES }, (_, i) => ({
      sku: `SKU-${i * 4}`,
      category: CATEGORIES[r.int(0, 29)] as string,
      quantity: r.int(1, 5),
      unitPrice: r.int(100, 20_000) / 100,
    })),
  };
}

/**
 * A full collection at the end of each row's setup, before it is warmed up and measured, so that no row pays for
 * collecting the previous row's garbage: json-rules-engine leaves an old generation full of it,
 * and measured right after it the pure evaluation's p99 was 1.4–1.8 ms instead of 0.6–0.7 ms.
 * (Benchmark hygiene, as mitata and benchmark.js do; Node exposes gc() only behind a flag,
 * which a new context picks up.)
 */
function collectGarbage(): void {
  setFlagsFromString('--expose-gc');
  (runInNewContext('gc') as () => void)();
}

const OPERATOR_NAMES: Record<string, string> = {
  equal: 'equal',
  not_equal: 'notEqual',
  in: 'in',
  not_in: 'notIn',
  less_than: 'lessThan',
  less_than_inclusive: 'lessThanInclusive',
  greater_than: 'greaterThan',
  greater_than_inclusive: 'greaterThanInclusive',
  contains_category: 'contains_category',
  contains_sku: 'contains_sku',
  contains: 'contains',
};

/** The same conditions in json-rules-engine's vocabulary (its operators are camelCase). */
function toJre(node: unknown): unknown {
  const o = node as Record<string, unknown>;
  if (Array.isArray(o.all)) return { all: o.all.map(toJre) };
  if (Array.isArray(o.any)) return { any: o.any.map(toJre) };
  if (o.not) return { not: toJre(o.not) };
  return { fact: o.fact, operator: OPERATOR_NAMES[o.operator as string], value: o.value };
}

async function jreSetup() {
  const docs = generateRules(RULES);
  const compiled = new Map(docs.map((d) => [d.promotion_id, compileRule(d)]));
  const engine = new Engine([], { allowUndefinedFacts: true });
  engine.addOperator('contains_category', (items: { category: string }[], v: string) =>
    items.some((l) => l.category === v),
  );
  engine.addOperator('contains_sku', (items: { sku: string }[], v: string) => items.some((l) => l.sku === v));
  for (const d of docs)
    engine.addRule({
      name: d.promotion_id,
      priority: d.priority,
      conditions: toJre(d.conditions) as never,
      event: { type: 'promotion', params: { id: d.promotion_id } },
    });
  const input = generateBasket();
  collectGarbage();
  return {
    async run() {
      const basket = toBasket(input);
      const facts = {
        'cart.items': input.lines,
        'cart.total_quantity': basket.totalQuantity,
        'cart.subtotal': basket.subtotalCents / 100,
        'cart.currency': input.currency,
        'customer.id': input.customer?.id,
        'customer.segment': input.customer?.segment,
        'coupon.codes': basket.coupons,
      };
      const { events } = await engine.run(facts);
      // Events arrive in priority order; apply the fired rules' actions on what is left.
      const remaining = basket.lines.map((l) => l.totalCents);
      const cut = basket.lines.map(() => 0);
      for (const e of events) {
        for (const action of compiled.get(String(e.params?.id))?.actions ?? []) {
          cut.fill(0);
          action.apply(basket, remaining, cut);
          for (let i = 0; i < cut.length; i++) remaining[i] = (remaining[i] ?? 0) - (cut[i] ?? 0);
        }
      }
      return remaining;
    },
  };
}

export const scenarios: Scenario[] = [
  {
    kind: 'fn',
    group: GROUP,
    name: BASELINE,
    iterations: 500,
    setup: jreSetup,
  },
  {
    kind: 'fn',
    group: GROUP,
    name: 'compiled rules, indexed (pure evaluate), 1,000 rules, 50 lines',
    baseline: BASELINE,
    iterations: 20_000,
    async setup() {
      const rules = buildRuleset(generateRules(RULES).map(compileRule));
      const input = generateBasket();
      const redeemed = new Map<string, number>();
      collectGarbage();
      return { run: () => evaluate(rules, toBasket(input), { now: Date.now(), redeemed }) };
    },
  },
  {
    kind: 'fn',
    group: GROUP,
    name: 'compiled rules, indexed, every explanation read (935 notApplied), 1,000 rules, 50 lines',
    baseline: BASELINE,
    iterations: 5_000,
    async setup() {
      const rules = buildRuleset(generateRules(RULES).map(compileRule));
      const input = generateBasket();
      const redeemed = new Map<string, number>();
      collectGarbage();
      return {
        run: () => evaluate(rules, toBasket(input), { now: Date.now(), redeemed }).notApplied.length,
      };
    },
  },
  {
    kind: 'fn',
    group: GROUP,
    name: 'PromotionService.evaluate (contract + cached redemption counts, embedded), 1,000 rules',
    baseline: BASELINE,
    iterations: 5_000,
    async setup() {
      const config = loadConfig({
        EMBEDDED_DB: 'memory',
        LOG_LEVEL: 'silent',
        DATA_DIR: '/tmp/ac-bench-promotions',
      });
      const platform = await createPlatform(config, { service: 'bench-promotions' });
      const engine = await createPromotionService(platform);
      for (const d of generateRules(RULES))
        await platform.db.query(
          'INSERT INTO promotion_rules (promotion_id, document, status) VALUES ($1, $2::jsonb, $3)',
          [d.promotion_id, JSON.stringify(d), d.status],
        );
      await engine.reload();
      const input = generateBasket();
      collectGarbage();
      return {
        run: () => engine.evaluate(input),
        async close() {
          await engine.close();
          await platform.close();
        },
      };
    },
  },
];

import type { RuleDocument } from '../domain/rule.ts';

/**
 * Sample rules seeded into a fresh store. The first is the spec's sample rule (the fields of its
 * "Promotion rule" table); the others show the remaining action types, a coupon and stacking.
 */
export const SPEC_SAMPLE_RULE: RuleDocument = {
  version: '2.1',
  promotion_id: 'PROMO-ELEC-3FOR2',
  name: 'Buy 3 items including electronics, cheapest electronics item free',
  priority: 10,
  status: 'ACTIVE',
  conditions: {
    all: [
      { fact: 'cart.items', operator: 'contains_category', value: 'electronics' },
      { fact: 'cart.total_quantity', operator: 'greater_than_inclusive', value: 3 },
    ],
  },
  actions: [{ type: 'PERCENTAGE_DISCOUNT_CHEAPEST_ITEM', value: 100.0, target_category: 'electronics' }],
  max_redemptions_per_user: 1,
};

export const SAMPLE_RULES: readonly RuleDocument[] = [
  SPEC_SAMPLE_RULE,
  {
    version: '2.1',
    promotion_id: 'WELCOME10',
    name: '10% off the cart with the coupon WELCOME10',
    priority: 5,
    status: 'ACTIVE',
    coupon_codes: ['WELCOME10'],
    conditions: { all: [{ fact: 'cart.subtotal', operator: 'greater_than_inclusive', value: 20 }] },
    actions: [{ type: 'PERCENTAGE_DISCOUNT_CART', value: 10 }],
    max_redemptions_per_user: 1,
  },
  {
    version: '2.1',
    promotion_id: 'VIP-TOOLS-15',
    name: 'VIP customers: 15% off tools',
    priority: 8,
    status: 'ACTIVE',
    conditions: {
      all: [
        { fact: 'customer.segment', operator: 'equal', value: 'VIP' },
        { fact: 'cart.items', operator: 'contains_category', value: 'tools' },
      ],
    },
    actions: [{ type: 'PERCENTAGE_DISCOUNT_CATEGORY', value: 15, target_category: 'tools' }],
  },
  {
    version: '2.1',
    promotion_id: 'TOYS-B2G1',
    name: 'Toys: buy 2, get 1 free',
    priority: 7,
    status: 'ACTIVE',
    conditions: { all: [{ fact: 'cart.items', operator: 'contains_category', value: 'toys' }] },
    actions: [{ type: 'BUY_X_GET_Y', buy_quantity: 2, get_quantity: 1, target_category: 'toys' }],
  },
  {
    version: '2.1',
    promotion_id: 'BULK-TIERS',
    name: 'Volume: 5% from 20 units, 10% from 50 units',
    priority: 1,
    status: 'ACTIVE',
    conditions: { all: [{ fact: 'cart.currency', operator: 'equal', value: 'USD' }] },
    actions: [
      {
        type: 'QUANTITY_TIER_DISCOUNT',
        tiers: [
          { min_quantity: 20, value: 5 },
          { min_quantity: 50, value: 10 },
        ],
      },
    ],
  },
  {
    version: '2.1',
    promotion_id: 'SAVE5-USD',
    name: '$5 off orders of $100 or more (coupon SAVE5, not combined with others)',
    priority: 20,
    status: 'ACTIVE',
    stacking: 'EXCLUSIVE',
    coupon_codes: ['SAVE5'],
    conditions: { all: [{ fact: 'cart.subtotal', operator: 'greater_than_inclusive', value: '100.00' }] },
    actions: [{ type: 'FIXED_AMOUNT_DISCOUNT', value: 5, currency: 'USD' }],
  },
];

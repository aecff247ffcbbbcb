/** The promotion the quote tests and benchmarks run with (the spec's sample rule), and how it is added. */
/** The spec's sample rule: 3 or more items with a `tools` item → the cheapest `tools` item free. */
export const TOOLS_RULE = {
  version: '2.1',
  promotion_id: 'PROMO-TOOLS-3',
  name: 'Cheapest tool free with 3 items',
  priority: 10,
  status: 'ACTIVE',
  conditions: {
    all: [
      { fact: 'cart.items', operator: 'contains_category', value: 'tools' },
      { fact: 'cart.total_quantity', operator: 'greater_than_inclusive', value: 3 },
    ],
  },
  actions: [{ type: 'PERCENTAGE_DISCOUNT_CHEAPEST_ITEM', value: 100.0, target_category: 'tools' }],
  max_redemptions_per_user: 1,
};

export const UPSERT_PROMOTION =
  'mutation ($rule: JSON!) { upsertPromotion(rule: $rule) { promotionId status } }';

import type { InjectOptions } from 'fastify';
import { GATEWAY_SECRET_HEADER } from '../../lib/auth/shared-secret.ts';

/** A priced basket of three lines, two of them tools: the sample rules' conditions are evaluated. */
const LINES = [
  { sku: 'WARM-UP-1', category: 'tools', quantity: 2, unitPrice: 12.5, lineTotal: 25 },
  { sku: 'WARM-UP-2', category: 'tools', quantity: 1, unitPrice: 7.25, lineTotal: 7.25 },
  { sku: 'WARM-UP-3', category: 'garden', quantity: 3, unitPrice: 4, lineTotal: 12 },
];

const ENTITIES = `query WarmUpPromotions($representations: [_Any!]!) {
  _entities(representations: $representations) {
    ... on CartQuote {
      promotions { discountTotal discountTotalDecimal total totalDecimal applied { promotionId name amount amountDecimal allocations { sku amount amountDecimal } } }
      quoteToken
    }
  }
}`;

/**
 * What the gateways send promotions most, for its warm-up before ready (lib/http/warm-up.ts):
 * the REST cart quote's evaluation (POST /v1/promotions/evaluate) and the GraphQL cart quote's
 * part (the CartQuote entity's promotions and signed quote token), on a made-up priced basket.
 * Read-only: nothing is redeemed or stored; the tokens signed are sent to no one.
 */
export function promotionsWarmUpRequests(secret: string): ((n: number) => InjectOptions)[] {
  const json = { 'content-type': 'application/json' };
  const rest = JSON.stringify({ currency: 'USD', customer: { id: 'warm-up' }, lines: LINES });
  const representation = {
    __typename: 'CartQuote',
    id: 'warm-up',
    currency: 'USD',
    region: 'US',
    customerSegment: null,
    customerId: 'warm-up',
    coupons: [],
    subtotal: 44.25,
    lines: LINES.map((l) => ({
      ...l,
      basePrice: l.unitPrice,
      appliedModifiers: [],
      source: 'LIVE',
    })),
  };
  const graphql = JSON.stringify({ query: ENTITIES, variables: { representations: [representation] } });
  return [
    () => ({ method: 'POST', url: '/v1/promotions/evaluate', headers: json, payload: rest }),
    () => ({
      method: 'POST',
      url: '/graphql',
      headers: { ...json, [GATEWAY_SECRET_HEADER]: secret },
      payload: graphql,
    }),
  ];
}

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startEmbedded, type TestSystem } from '../../harness/system.ts';
import { EventTypes } from '../../lib/events/cloudevent.ts';
import { promotionsContract } from '../../subgraphs/promotions/contract.ts';
import { SPEC_SAMPLE_RULE } from '../../subgraphs/promotions/store/seed.ts';
import { rule } from './support.ts';

// The system as `npm start` runs it (embedded topology, in-memory store), over HTTP.
describe('promotions over REST and GraphQL (embedded system)', () => {
  let sys: TestSystem;
  const contract = promotionsContract();
  const post = (path: string, body: unknown, headers: Record<string, string> = {}) =>
    fetch(`${sys.url}${path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...headers },
      body: typeof body === 'string' ? body : JSON.stringify(body),
    });

  beforeAll(async () => {
    sys = await startEmbedded();
  });
  afterAll(() => sys.close());

  it('evaluates the seeded spec sample on a fresh start, with a reply that matches the OpenAPI document', async () => {
    const res = await post('/v1/promotions/evaluate', {
      currency: 'USD',
      lines: [
        { sku: 'SKU-ELE-000001', category: 'electronics', quantity: 1, unitPrice: 19.99 },
        { sku: 'SKU-BOO-000001', category: 'books', quantity: 2, unitPrice: '8.50' },
      ],
    });
    expect(res.status).toBe(200);
    const body = (await res.json()) as { applied: { promotionId: string; amount: number }[] };
    expect(contract.promotionEvaluation(body), JSON.stringify(contract.promotionEvaluation.errors)).toBe(
      true,
    );
    expect(body.applied.map((a) => [a.promotionId, a.amount])).toContainEqual([
      SPEC_SAMPLE_RULE.promotion_id,
      19.99,
    ]);
  });

  it.each([
    ['an unknown field', { currency: 'USD', lines: [], extra: 1 }, '/extra'],
    ['a missing currency', { lines: [] }, '/currency'],
    [
      'a quantity of 0',
      { currency: 'USD', lines: [{ sku: 'A', category: 'c', quantity: 0, unitPrice: 1 }] },
      '/lines/0/quantity',
    ],
    [
      'a price with 3 decimals',
      { currency: 'USD', lines: [{ sku: 'A', category: 'c', quantity: 1, unitPrice: 1.005 }] },
      '/lines/0/unitPrice',
    ],
    [
      'a price string with letters',
      { currency: 'USD', lines: [{ sku: 'A', category: 'c', quantity: 1, unitPrice: '1e3' }] },
      '/lines/0/unitPrice',
    ],
    [
      'a negative price',
      { currency: 'USD', lines: [{ sku: 'A', category: 'c', quantity: 1, unitPrice: -1 }] },
      '/lines/0/unitPrice',
    ],
    ['a lower-case currency', { currency: 'usd', lines: [] }, '/currency'],
  ])('refuses %s with 422 problem+json pointing at the field', async (_label, body, pointer) => {
    const res = await post('/v1/promotions/evaluate', body);
    expect(res.status).toBe(422);
    expect(res.headers.get('content-type')).toContain('application/problem+json');
    const problem = (await res.json()) as { errors: { pointer: string }[] };
    expect(contract.problem(problem)).toBe(true);
    expect(problem.errors.map((e) => e.pointer)).toContain(pointer);
  });

  // Exact money (issue 13): the amount is read from the JSON text, not from its nearest double.
  const rawBasket = (price: string) =>
    `{"currency":"USD","lines":[{"sku":"SKU-ELE-000001","category":"electronics","quantity":1,"unitPrice":${price}}]}`;
  it.each([
    ['19.990000000000000001', 422],
    ['19.989999999999999999', 422],
    ['19.99', 200],
    ['19.990', 200],
    ['1.999e1', 200],
  ])('reads unitPrice %s exactly as written → %i', async (price, status) => {
    const res = await post('/v1/promotions/evaluate', rawBasket(price));
    expect(res.status).toBe(status);
    const body = (await res.json()) as { subtotal?: number; errors?: { pointer: string }[] };
    if (status === 422) expect(body.errors?.map((e) => e.pointer)).toContain('/lines/0/unitPrice');
    else expect(JSON.stringify(body)).toContain('19.99');
  });

  it('refuses a duplicate key (400) instead of keeping the last one', async () => {
    const res = await post('/v1/promotions/evaluate', '{"currency":"USD","currency":"EUR","lines":[]}');
    expect(res.status).toBe(400);
  });

  it('answers 400 problem+json to malformed JSON and 415 to another media type', async () => {
    const bad = await post('/v1/promotions/evaluate', '{"currency": ');
    expect(bad.status).toBe(400);
    expect(bad.headers.get('content-type')).toContain('application/problem+json');
    const text = await fetch(`${sys.url}/v1/promotions/evaluate`, {
      method: 'POST',
      headers: { 'content-type': 'text/plain' },
      body: 'hello',
    });
    expect(text.status).toBe(415);
  });

  it('records a redemption once per order: 201, then 200 on repeat, then 409 for another order over the cap', async () => {
    const token = await sys.token(['promotions:redeem'], 'order-service');
    const auth = { authorization: `Bearer ${token}` };
    const request = (orderId: string) => ({
      orderId,
      customerId: 'cust-rest',
      promotionIds: [SPEC_SAMPLE_RULE.promotion_id],
    });
    const first = await post('/v1/promotions/redemptions', request('ord-1'), auth);
    expect(first.status).toBe(201);
    expect(contract.redemptionResult(await first.json())).toBe(true);
    const again = await post('/v1/promotions/redemptions', request('ord-1'), auth);
    expect(again.status).toBe(200);
    expect(((await again.json()) as { status: string }).status).toBe('ALREADY_RECORDED');
    const other = await post('/v1/promotions/redemptions', request('ord-2'), auth);
    expect(other.status).toBe(409);
    expect(((await other.json()) as { promotionIds: string[] }).promotionIds).toEqual([
      SPEC_SAMPLE_RULE.promotion_id,
    ]);
  });

  it('releases a cancelled order over REST, so the customer may use the promotion again', async () => {
    const auth = { authorization: `Bearer ${await sys.token(['promotions:redeem'])}` };
    const request = (orderId: string) => ({
      orderId,
      customerId: 'cust-cancel',
      promotionIds: ['WELCOME10'],
    });
    expect((await post('/v1/promotions/redemptions', request('c-1'), auth)).status).toBe(201);
    expect(
      (await post('/v1/promotions/redemptions/release', { orderId: 'c-1', customerId: 'x' })).status,
    ).toBe(401);
    const released = await post(
      '/v1/promotions/redemptions/release',
      { orderId: 'c-1', customerId: 'cust-cancel' },
      auth,
    );
    expect(released.status).toBe(200);
    const body = await released.json();
    expect(contract.releaseResult(body)).toBe(true);
    expect(body).toMatchObject({ status: 'RELEASED', promotionIds: ['WELCOME10'] });
    expect((await post('/v1/promotions/redemptions', request('c-2'), auth)).status).toBe(201);
    const bad = await post('/v1/promotions/redemptions/release', { orderId: 'c-1' }, auth);
    expect(bad.status).toBe(422);
  });

  it('refuses redemptions without a token (401), without the role (403) and of unknown promotions (404)', async () => {
    const body = { orderId: 'ord-x', customerId: 'c', promotionIds: ['WELCOME10'] };
    expect((await post('/v1/promotions/redemptions', body)).status).toBe(401);
    const reader = await sys.token(['promotions:read']);
    expect(
      (await post('/v1/promotions/redemptions', body, { authorization: `Bearer ${reader}` })).status,
    ).toBe(403);
    const redeemer = await sys.token(['promotions:redeem']);
    const unknown = await post(
      '/v1/promotions/redemptions',
      { ...body, promotionIds: ['NO-SUCH-PROMO'] },
      { authorization: `Bearer ${redeemer}` },
    );
    expect(unknown.status).toBe(404);
  });

  it('changes rules only through the admin mutation, and the next evaluation uses the new rule', async () => {
    const doc = rule({
      promotion_id: 'API-TEST-20',
      priority: 500,
      stacking: 'STOP_AFTER',
      conditions: { all: [{ fact: 'customer.segment', operator: 'equal', value: 'API' }] },
      actions: [{ type: 'PERCENTAGE_DISCOUNT_CART', value: 20 }],
    });
    const mutation =
      'mutation($rule: JSON!) { upsertPromotion(rule: $rule) { promotionId revision status } }';
    const denied = await sys.gql(mutation, {
      token: await sys.token(['promotions:read']),
      variables: { rule: doc },
    });
    expect(denied.errors?.[0]?.extensions?.code).toBe('FORBIDDEN');

    const admin = await sys.token(['promotions:admin']);
    const ok = await sys.gql(mutation, { token: admin, variables: { rule: doc } });
    expect(ok.errors).toBeUndefined();
    expect(ok.data?.upsertPromotion).toMatchObject({ promotionId: 'API-TEST-20', status: 'ACTIVE' });

    const evaluation = await sys.gql(
      `query($b: PricedBasketInput!) { evaluatePromotions(basket: $b) { discountTotal total applied { promotionId amount } } }`,
      {
        variables: {
          b: {
            currency: 'USD',
            customer: { segment: 'API' },
            lines: [{ sku: 'S', category: 'misc', quantity: 1, unitPrice: 10 }],
          },
        },
      },
    );
    expect(evaluation.errors).toBeUndefined();
    expect(evaluation.data?.evaluatePromotions).toEqual({
      discountTotal: 2,
      total: 8,
      applied: [{ promotionId: 'API-TEST-20', amount: 2 }],
    });

    const off = await sys.gql(
      'mutation { setPromotionStatus(promotionId: "API-TEST-20", status: INACTIVE) { status revision } }',
      { token: admin },
    );
    expect(off.data?.setPromotionStatus).toEqual({ status: 'INACTIVE', revision: 2 });
  });

  it('announces a change with PromotionRulesChanged naming the admin who made it', async () => {
    const seen: { promotionId: string; changedBy: string | null; change: string }[] = [];
    const off = sys.platform.bus.subscribe(EventTypes.PromotionRulesChanged, (e) => {
      seen.push(e.data as (typeof seen)[number]);
    });
    try {
      const token = await sys.token(['promotions:admin'], 'alice-admin');
      const res = await sys.gql(
        'mutation { setPromotionStatus(promotionId: "BULK-TIERS", status: INACTIVE) { status } }',
        { token },
      );
      expect(res.errors).toBeUndefined();
      expect(seen).toContainEqual(
        expect.objectContaining({ promotionId: 'BULK-TIERS', changedBy: 'alice-admin', change: 'STATUS' }),
      );
    } finally {
      off();
    }
  });

  it('refuses an invalid rule with BAD_USER_INPUT and JSON pointers, and stores nothing', async () => {
    const admin = await sys.token(['promotions:admin']);
    const res = await sys.gql('mutation($rule: JSON!) { upsertPromotion(rule: $rule) { promotionId } }', {
      token: admin,
      variables: {
        rule: {
          ...rule({ promotion_id: 'BROKEN-1' }),
          conditions: { all: [{ fact: 'cart.weight', operator: 'equal', value: 1 }] },
        },
      },
    });
    const error = res.errors?.[0] as
      | { extensions?: { code?: string; errors?: { pointer: string }[] } }
      | undefined;
    expect(error?.extensions?.code).toBe('BAD_USER_INPUT');
    expect(error?.extensions?.errors?.map((e) => e.pointer)).toEqual(['/conditions/all/0/fact']);
    const read = await sys.gql('{ promotion(promotionId: "BROKEN-1") { promotionId } }', { token: admin });
    expect(read.data?.promotion).toBeNull();
  });

  it('evaluates the priced lines of a GraphQL cart quote (CartQuote.promotions, through the gateway)', async () => {
    const res = await sys.gql(
      `{ cartQuote(input: { currency: "USD", region: "US", lines: [
           { sku: "SKU-ELC-000001", quantity: 2 }, { sku: "SKU-BOK-000001", quantity: 1 } ] }) {
         subtotal lines { sku unitPrice lineTotal }
         promotions { subtotal discountTotal total applied { promotionId amount allocations { lineIndex amount } }
                      notApplied { promotionId reason } } } }`,
    );
    expect(res.errors).toBeUndefined();
    const quote = res.data?.cartQuote as {
      subtotal: number;
      lines: { sku: string; unitPrice: number }[];
      promotions: {
        subtotal: number;
        discountTotal: number;
        total: number;
        applied: {
          promotionId: string;
          amount: number;
          allocations: { lineIndex: number; amount: number }[];
        }[];
      };
    };
    expect(quote.promotions.subtotal).toBe(quote.subtotal);
    const sample = quote.promotions.applied.find((a) => a.promotionId === SPEC_SAMPLE_RULE.promotion_id);
    // 3 items including electronics: one electronics unit (line 0) is free.
    expect(sample).toEqual({
      promotionId: SPEC_SAMPLE_RULE.promotion_id,
      amount: quote.lines[0]?.unitPrice,
      allocations: [{ lineIndex: 0, amount: quote.lines[0]?.unitPrice }],
    });
    expect(Math.round(quote.promotions.total * 100)).toBe(
      Math.round(quote.subtotal * 100) - Math.round(quote.promotions.discountTotal * 100),
    );
  });

  it('records redemptions through the role-restricted GraphQL mutation too', async () => {
    const mutation = `mutation($input: RedeemPromotionsInput!) {
      redeemPromotions(input: $input) { status promotionIds limitReached } }`;
    const input = { orderId: 'gql-1', customerId: 'cust-gql', promotionIds: ['WELCOME10'] };
    const anonymous = await sys.gql(mutation, { variables: { input } });
    expect(anonymous.errors?.[0]?.extensions?.code).toBe('UNAUTHENTICATED');
    const token = await sys.token(['promotions:redeem']);
    const first = await sys.gql(mutation, { token, variables: { input } });
    expect(first.data?.redeemPromotions).toEqual({
      status: 'REDEEMED',
      promotionIds: ['WELCOME10'],
      limitReached: [],
    });
    const second = await sys.gql(mutation, { token, variables: { input: { ...input, orderId: 'gql-2' } } });
    expect(second.data?.redeemPromotions).toEqual({
      status: 'LIMIT_REACHED',
      promotionIds: [],
      limitReached: ['WELCOME10'],
    });
  });

  it('refuses a bad basket in GraphQL with BAD_USER_INPUT and pointers', async () => {
    const res = await sys.gql(
      `{ evaluatePromotions(basket: { currency: "USD", lines: [{ sku: "A", category: "c", quantity: 1, unitPrice: 1.005 }] }) { total } }`,
    );
    const error = res.errors?.[0] as
      | { extensions?: { code?: string; errors?: { pointer: string }[] } }
      | undefined;
    expect(error?.extensions?.code).toBe('BAD_USER_INPUT');
    expect(error?.extensions?.errors?.map((e) => e.pointer)).toEqual(['/lines/0/unitPrice']);
  });
});

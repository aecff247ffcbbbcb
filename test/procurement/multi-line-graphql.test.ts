/**
 * Checkout orders over the operators' GraphQL (role orders:read) on the embedded system, the way
 * the console reads orders: `lines`, `totalDecimal` and `checkoutSessionId` beside the fields of
 * before. A checkout order shows its priced lines; a /v2 order one line (sku × quantity) with
 * null amounts and a null total. The /v2 read-back of a checkout order is its total as budget.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startEmbedded, type TestSystem } from '../../harness/system.ts';
import type { UsdAmount } from '../../subgraphs/procurement/contract/types.ts';
import { checkoutRequest, type OrderLine } from '../../subgraphs/procurement/domain/purchase-order.ts';
import type { ProcurementModule } from '../../subgraphs/procurement/index.ts';

const AGENT = 'spiffe://example.org/ns/ai/sa/procurement-agent/graphql-lines';
const LINES: readonly OrderLine[] = [
  { sku: 'SKU-ABC-123456', quantity: 100, unitPrice: '19.99', discount: '0.33', lineTotal: '1998.67' },
  { sku: 'SKU-TOL-000001', quantity: 45, unitPrice: '99.50', discount: '12.10', lineTotal: '4465.40' },
  { sku: 'SKU-ELC-999999', quantity: 5, unitPrice: '20.00', discount: '0.00', lineTotal: '100.00' },
];
const TOTAL = '6564.07';

const ORDER = `query ($id: ID!) { purchaseOrder(orderId: $id) {
  orderId sku quantity allocatedBudget allocatedBudgetDecimal totalDecimal checkoutSessionId
  lines { sku quantity unitPriceDecimal discountDecimal lineTotalDecimal }
} }`;

let sys: TestSystem;
let api: ProcurementModule['api'];
beforeAll(async () => {
  sys = await startEmbedded();
  api = (sys.local.procurement as ProcurementModule).api;
});
afterAll(() => sys.close());

describe('PurchaseOrder.lines and totalDecimal over GraphQL', () => {
  it('reads a checkout order: its lines with exact amounts (trailing zeros kept), its total and session', async () => {
    const created = await api.place({
      request: checkoutRequest('agent-0000001', LINES, TOTAL),
      spiffeId: AGENT,
      traceId: 'gql',
      lines: LINES,
      total: TOTAL,
      checkoutSessionId: 'cs_01HV3P3ABC123',
    });
    const r = await sys.gql(ORDER, {
      token: await sys.token(['orders:read']),
      variables: { id: created.order_id },
    });
    expect(r.errors).toBeUndefined();
    expect(r.data?.purchaseOrder).toEqual({
      orderId: created.order_id,
      sku: 'SKU-ABC-123456',
      quantity: 150,
      allocatedBudget: 6564.07,
      allocatedBudgetDecimal: '6564.07',
      totalDecimal: '6564.07',
      checkoutSessionId: 'cs_01HV3P3ABC123',
      lines: LINES.map((l) => ({
        sku: l.sku,
        quantity: l.quantity,
        unitPriceDecimal: l.unitPrice,
        discountDecimal: l.discount,
        lineTotalDecimal: l.lineTotal,
      })),
    });
    // The agent's /v2 read-back is unchanged in shape: the total is the allocated budget.
    const read = await fetch(`${sys.url}/api/v2/procurement/orders/${created.order_id}`, {
      headers: { 'x-spiffe-id': AGENT },
    });
    expect(read.status).toBe(200);
    const text = await read.text();
    expect(text).toContain('"allocated_budget":6564.07,');
    expect(Object.keys(JSON.parse(text)).sort()).toEqual([
      'allocated_budget',
      'order_id',
      'processed_at',
      'status',
    ]);
  });

  it('reads a /v2 order as one line of its sku and quantity, amounts and total null', async () => {
    const created = await api.place({
      request: {
        agent_id: 'agent-0000001',
        sku: 'SKU-ABC-123456',
        quantity: 3,
        max_budget_usd: '99.9' as UsdAmount,
      },
      spiffeId: AGENT,
      traceId: 'gql',
    });
    const r = await sys.gql(ORDER, {
      token: await sys.token(['orders:read']),
      variables: { id: created.order_id },
    });
    expect(r.errors).toBeUndefined();
    expect(r.data?.purchaseOrder).toMatchObject({
      allocatedBudgetDecimal: '99.9',
      totalDecimal: null,
      checkoutSessionId: null,
      lines: [
        {
          sku: 'SKU-ABC-123456',
          quantity: 3,
          unitPriceDecimal: null,
          discountDecimal: null,
          lineTotalDecimal: null,
        },
      ],
    });
  });

  it('lists checkout orders with their lines in purchaseOrders, filtered by a SKU of any line', async () => {
    const r = await sys.gql(
      `query { purchaseOrders(spiffeId: "${AGENT}", sku: "SKU-TOL-000001") { orderId totalDecimal lines { sku lineTotalDecimal } } }`,
      { token: await sys.token(['orders:read']) },
    );
    expect(r.errors).toBeUndefined();
    const rows = r.data?.purchaseOrders as { totalDecimal: string; lines: { sku: string }[] }[];
    expect(rows).toHaveLength(1);
    expect(rows[0]?.totalDecimal).toBe(TOTAL);
    expect(rows[0]?.lines.map((l) => l.sku)).toEqual(LINES.map((l) => l.sku));
  });

  it('keeps the lines behind the orders:read role', async () => {
    const r = await sys.gql(ORDER, {
      token: await sys.token(['promotions:admin']),
      variables: { id: 'ord_x' },
    });
    expect(r.errors?.[0]?.extensions?.code).toBe('FORBIDDEN');
  });
});

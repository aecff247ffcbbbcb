/**
 * Checkout orders in the distributed topology: the gateway's HTTP order port carries lines,
 * total and checkout session to the procurement process's internal route, which checks them
 * strictly (malformed ones are 400/422, never 500) before the domain does. First against the
 * internal routes in this process (real HTTP, PGlite), then against a real procurement process
 * on Postgres, as an operator runs it.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import Fastify, { type FastifyInstance } from 'fastify';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { httpOrders } from '../../gateway/agent/order/http.ts';
import { inProcessOrders } from '../../gateway/agent/order/in-process.ts';
import type { OrderPort } from '../../gateway/agent/order/order-port.ts';
import { type ServiceProcess, startProcess } from '../../harness/processes.ts';
import { freshPostgres, TEST_PGLITE, TEST_REDIS_URL, uniquePrefix } from '../../harness/services.ts';
import { ManualClock } from '../../lib/clock.ts';
import { type Db, migrate } from '../../lib/db/index.ts';
import { openPglite } from '../../lib/db/pglite.ts';
import { purchaseOrderRequestJson } from '../../subgraphs/procurement/contract/json.ts';
import {
  createOrderDomain,
  newOrderId,
  type OrderDomain,
} from '../../subgraphs/procurement/domain/order-domain.ts';
import {
  checkoutRequest,
  InvalidPlaceOrder,
  OrderIdConflict,
  type OrderLine,
  type PlaceOrder,
} from '../../subgraphs/procurement/domain/purchase-order.ts';
import {
  GATEWAY_SECRET_HEADER,
  INTERNAL_ORDERS_PATH,
  internalOrderRoutes,
} from '../../subgraphs/procurement/internal-http.ts';
import { orderMigrations } from '../../subgraphs/procurement/store/migrations.ts';
import { sqlOrderStore } from '../../subgraphs/procurement/store/sql.ts';

const AGENT = 'spiffe://example.org/ns/ai/sa/procurement-agent';
const AGENT_ID = 'agent-0000001';
const SECRET = 'test-gateway-secret-0123456789';

const LINES: readonly OrderLine[] = [
  { sku: 'SKU-ABC-123456', quantity: 100, unitPrice: '19.99', discount: '0.33', lineTotal: '1998.67' },
  { sku: 'SKU-TOL-000001', quantity: 45, unitPrice: '99.50', discount: '12.10', lineTotal: '4465.40' },
  { sku: 'SKU-ELC-999999', quantity: 5, unitPrice: '19.99', discount: '0.00', lineTotal: '99.95' },
];
const TOTAL = '6564.02';

const checkout = (over: Partial<PlaceOrder> = {}): PlaceOrder => ({
  request: checkoutRequest(AGENT_ID, LINES, TOTAL),
  spiffeId: AGENT,
  traceId: 'checkout-http',
  lines: LINES,
  total: TOTAL,
  checkoutSessionId: 'cs_01HV3P3ABC123',
  ...over,
});

describe('the internal route in this process (real HTTP, PGlite)', () => {
  let db: Db;
  let app: FastifyInstance;
  let domain: OrderDomain;
  let remote: OrderPort & { close(): Promise<void> };
  let local: OrderPort;
  let url: string;

  beforeAll(async () => {
    db = await openPglite(undefined, TEST_PGLITE);
    await migrate(db, orderMigrations);
    domain = createOrderDomain(sqlOrderStore(db), new ManualClock(1_767_225_600_000));
    app = Fastify();
    await app.register(
      internalOrderRoutes(domain, {
        GATEWAY_SHARED_SECRET: SECRET,
        SPIFFE_TRUST_DOMAINS: ['example.org'],
        ORDER_BODY_LIMIT_BYTES: 4096,
      }),
    );
    url = await app.listen({ port: 0, host: '127.0.0.1' });
    remote = httpOrders(url, SECRET, 2000);
    local = inProcessOrders(domain);
  });
  afterAll(async () => {
    await remote.close();
    await app.close();
    await db.close();
  });

  it('places a multi-line order over HTTP: the domain stores its lines, total and session', async () => {
    const orderId = newOrderId();
    const created = await remote.place(checkout({ orderId }));
    expect(created).toMatchObject({ status: 'APPROVED', order_id: orderId, allocated_budget: '6564.02' });
    expect(await domain.get(orderId)).toMatchObject({
      sku: 'SKU-ABC-123456',
      quantity: 150,
      lines: LINES,
      total: TOTAL,
      checkoutSessionId: 'cs_01HV3P3ABC123',
      traceId: 'checkout-http',
    });
    // Read back through either port: the /v2 response, allocated_budget = the total.
    expect(await remote.get(orderId)).toEqual(await local.get(orderId));
    expect((await remote.get(orderId))?.response.allocated_budget).toBe('6564.02');
  });

  it('takes a budget written as the total ("12.50") as the same amount', async () => {
    const lines = [
      { sku: 'SKU-ABC-123456', quantity: 2, unitPrice: '6.25', discount: '0.00', lineTotal: '12.50' },
    ];
    const cmd = checkout({
      lines,
      total: '12.50',
      request: { ...checkoutRequest(AGENT_ID, lines, '12.50'), max_budget_usd: '12.50' as never },
    });
    const created = await remote.place(cmd);
    expect(created.allocated_budget).toBe('12.5');
    expect((await domain.get(created.order_id))?.total).toBe('12.50');
  });

  it('is idempotent on the order id for the same lines and a conflict for other lines, as in process', async () => {
    const orderId = newOrderId();
    const first = await remote.place(checkout({ orderId }));
    expect(await remote.place(checkout({ orderId }))).toEqual(first);
    const other = [...LINES.slice(0, 2)];
    const changed = checkout({
      orderId,
      lines: other,
      total: '6464.07',
      request: checkoutRequest(AGENT_ID, other, '6464.07'),
    });
    await expect(remote.place(changed)).rejects.toThrow(OrderIdConflict);
    await expect(local.place(changed)).rejects.toThrow(OrderIdConflict);
  });

  it('answers InvalidPlaceOrder for lines that disagree with the request, as in process; nothing stored', async () => {
    for (const port of [remote, local]) {
      const orderId = newOrderId();
      await expect(port.place(checkout({ orderId, total: '6564.03' }))).rejects.toThrow(InvalidPlaceOrder);
      expect(await domain.get(orderId)).toBeNull();
    }
  });

  const post = async (body: unknown) => {
    const res = await fetch(`${url}${INTERNAL_ORDERS_PATH}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', [GATEWAY_SECRET_HEADER]: SECRET },
      body: typeof body === 'string' ? body : JSON.stringify(body),
    });
    return {
      status: res.status,
      json: (await res.json().catch(() => null)) as Record<string, unknown> | null,
    };
  };
  const wire = (over: Record<string, unknown> = {}) => ({
    request: purchaseOrderRequestJson(checkoutRequest(AGENT_ID, LINES, TOTAL)),
    spiffeId: AGENT,
    traceId: 't',
    lines: LINES,
    total: TOTAL,
    checkoutSessionId: 'cs_1',
    ...over,
  });
  const withLine = (patch: Record<string, unknown>) =>
    wire({ lines: [{ ...LINES[0], ...patch }, ...LINES.slice(1)] });

  const malformed: [string, unknown][] = [
    ['lines not an array', wire({ lines: { 0: LINES[0] } })],
    ['lines null', wire({ lines: null })],
    ['no lines', wire({ lines: [] })],
    ['51 lines', wire({ lines: Array.from({ length: 51 }, () => LINES[0]) })],
    ['a line that is not an object', wire({ lines: ['SKU-ABC-123456'] })],
    ['a line with an extra field', withLine({ tax: '0.00' })],
    [
      'a line without lineTotal',
      wire({ lines: [{ sku: 'SKU-ABC-123456', quantity: 1, unitPrice: '1.00', discount: '0.00' }] }),
    ],
    ['a quantity of 0', withLine({ quantity: 0 })],
    ['a quantity of 10001', withLine({ quantity: 10_001 })],
    ['a fractional quantity', withLine({ quantity: 1.5 })],
    ['a quantity as text', withLine({ quantity: '100' })],
    ['an amount as a number', withLine({ unitPrice: 19.99 })],
    ['an amount with one decimal', withLine({ unitPrice: '19.9' })],
    ['an amount with three decimals', withLine({ discount: '0.330' })],
    ['a negative amount', withLine({ discount: '-0.33' })],
    ['an amount with an exponent', withLine({ unitPrice: '1e2' })],
    ['an amount of ten digits', withLine({ unitPrice: '1000000000.00' })],
    ['a SKU the contract refuses', withLine({ sku: 'SKU-ABC-12345' })],
    ['a SKU with a trailing newline', withLine({ sku: 'SKU-ABC-123456\n' })],
    ['no total', wire({ total: undefined })],
    ['a total as a number', wire({ total: 6564.02 })],
    ['a total with a space', wire({ total: ' 6564.02' })],
    ['a total without lines', wire({ lines: undefined })],
    ['a session id with a space', wire({ checkoutSessionId: 'cs 1' })],
    ['a session id of 129 characters', wire({ checkoutSessionId: 'c'.repeat(129) })],
    ['a session id as a number', wire({ checkoutSessionId: 1 })],
    ['a request that is not JSON', wire({ request: '{' })],
    [
      'a request with a quantity above 500000',
      wire({
        request: purchaseOrderRequestJson({ ...checkoutRequest(AGENT_ID, LINES, TOTAL), quantity: 500_001 }),
      }),
    ],
    [
      'a request with a budget above 999999999.99',
      wire({
        request:
          '{"agent_id":"agent-0000001","sku":"SKU-ABC-123456","quantity":150,"max_budget_usd":1000000000}',
      }),
    ],
    [
      'a request with sub-cent budget',
      wire({
        request:
          '{"agent_id":"agent-0000001","sku":"SKU-ABC-123456","quantity":150,"max_budget_usd":6564.021}',
      }),
    ],
    ['a line total that is not unitPrice × quantity − discount', withLine({ lineTotal: '1998.66' })],
    ['a total that is not the sum', wire({ total: '6564.03' })],
    [
      "a request SKU other than the first line's",
      wire({
        request: purchaseOrderRequestJson({
          ...checkoutRequest(AGENT_ID, LINES, TOTAL),
          sku: 'SKU-TOL-000001',
        }),
      }),
    ],
    [
      'a request quantity other than the sum',
      wire({
        request: purchaseOrderRequestJson({ ...checkoutRequest(AGENT_ID, LINES, TOTAL), quantity: 151 }),
      }),
    ],
    ['a body that is not JSON', '{"lines": ['],
  ];
  it.each(malformed)('refuses %s with 400 or 422, never 500', async (_what, body) => {
    const r = await post(body);
    expect([400, 422], JSON.stringify(r.json)).toContain(r.status);
  });

  it('refuses any generated mutation of the lines with 4xx and never stores it (property)', async () => {
    const value = fc.oneof(
      fc.constant(null),
      fc.boolean(),
      fc.integer(),
      fc.double(),
      fc.string(),
      fc.stringMatching(/^-?\d{0,11}(\.\d{0,3})?$/),
      fc.array(fc.string(), { maxLength: 3 }),
    );
    const key = fc.constantFrom('sku', 'quantity', 'unitPrice', 'discount', 'lineTotal', 'extra');
    await fc.assert(
      fc.asyncProperty(fc.integer({ min: 0, max: 2 }), key, value, async (i, k, v) => {
        const lines = LINES.map((l, n) => (n === i ? { ...l, [k]: v } : l));
        fc.pre(JSON.stringify(lines) !== JSON.stringify(LINES));
        const orderId = newOrderId();
        const r = await post(wire({ lines, orderId }));
        expect([400, 422], JSON.stringify(r.json)).toContain(r.status);
        expect(await domain.get(orderId)).toBeNull();
      }),
      { numRuns: 150 },
    );
  });
});

describe('a real procurement process on Postgres', () => {
  let store: Awaited<ReturnType<typeof freshPostgres>>;
  let procurement: ServiceProcess;
  let remote: ReturnType<typeof httpOrders>;

  beforeAll(async () => {
    store = await freshPostgres('multiline-dist');
    procurement = await startProcess(
      'procurement',
      {
        DATABASE_URL: store.url,
        REDIS_URL: TEST_REDIS_URL,
        REDIS_KEY_PREFIX: uniquePrefix('multiline'),
        DATA_DIR: mkdtempSync(join(tmpdir(), 'ac-multiline-')),
        GATEWAY_SHARED_SECRET: SECRET,
      },
      90_000,
    );
    remote = httpOrders(procurement.url, SECRET, 5000);
  }, 120_000);
  afterAll(async () => {
    await remote?.close();
    await procurement?.stop();
    await store?.drop();
  });

  it('stores a multi-line order placed over the internal HTTP with its lines, exactly', async () => {
    const orderId = newOrderId();
    const created = await remote.place(checkout({ orderId }));
    expect(created).toMatchObject({ status: 'APPROVED', order_id: orderId, allocated_budget: '6564.02' });
    const client = new pg.Client({ connectionString: store.url });
    await client.connect();
    try {
      const { rows } = await client.query(
        'SELECT sku, quantity, allocated_budget::text AS budget, lines, total, checkout_session_id FROM purchase_orders WHERE order_id = $1',
        [orderId],
      );
      expect(rows).toEqual([
        {
          sku: 'SKU-ABC-123456',
          quantity: 150,
          budget: '6564.02',
          lines: LINES.map((l) => ({
            sku: l.sku,
            quantity: l.quantity,
            unit_price: l.unitPrice,
            discount: l.discount,
            line_total: l.lineTotal,
          })),
          total: TOTAL,
          checkout_session_id: 'cs_01HV3P3ABC123',
        },
      ]);
    } finally {
      await client.end();
    }
    // The domain's stored form over the internal read: the lines as placed.
    const res = await fetch(`${procurement.url}${INTERNAL_ORDERS_PATH}/${orderId}`, {
      headers: { [GATEWAY_SECRET_HEADER]: SECRET },
    });
    expect(await res.json()).toMatchObject({
      lines: LINES,
      total: TOTAL,
      checkoutSessionId: 'cs_01HV3P3ABC123',
    });
    await expect(remote.place(checkout({ orderId, checkoutSessionId: 'cs_other' }))).rejects.toThrow(
      OrderIdConflict,
    );
  });
});

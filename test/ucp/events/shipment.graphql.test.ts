/**
 * recordOrderShipment over GraphQL on the embedded system: the role, every refusal a clear
 * GraphQL error with a 4xx-class code (the field named), never a server error, also for random
 * input (fast-check).
 */
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startEmbedded, type TestSystem } from '../../../harness/system.ts';

const SHIP = `mutation($id: ID!, $t: String!, $c: String, $u: String, $l: [ShipmentLineInput!]) {
  recordOrderShipment(orderId: $id, trackingNumber: $t, carrier: $c, trackingUrl: $u, lines: $l) {
    orderId status shipments { trackingNumber carrier trackingUrl lines { line quantity } }
  }
}`;
const AGENT = 'spiffe://example.org/ns/ai/sa/procurement-agent/ucp-ship-gql';

let sys: TestSystem;
let ops: string;
let n = 0;

beforeAll(async () => {
  sys = await startEmbedded();
  ops = await sys.token(['orders:fulfill'], 'ops-ship');
}, 120_000);
afterAll(() => sys?.close());

/** A /v2 order of `quantity` units (one line, index 0). */
async function order(quantity = 3): Promise<string> {
  const res = await fetch(`${sys.url}/api/v2/procurement/orders`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-spiffe-id': AGENT },
    body: JSON.stringify({
      agent_id: `agent-ship-gql-${++n}`.padEnd(10, '0'),
      sku: 'SKU-ABC-000001',
      quantity,
      max_budget_usd: 100,
    }),
  });
  expect(res.status).toBe(201);
  return ((await res.json()) as { order_id: string }).order_id;
}

const ship = (variables: Record<string, unknown>, token = ops) => sys.gql(SHIP, { token, variables });
const codeOf = (r: Awaited<ReturnType<typeof ship>>) => {
  const e = r.errors?.[0]?.extensions as { code?: string; field?: string } | undefined;
  return [e?.code, e?.field] as const;
};

describe('recordOrderShipment', () => {
  it('needs the role orders:fulfill', async () => {
    const id = await order();
    expect(codeOf(await ship({ id, t: '1Z' }, await sys.token(['orders:approve'])))[0]).toBe('FORBIDDEN');
    expect(codeOf(await ship({ id, t: '1Z' }, ''))[0]).toBe('UNAUTHENTICATED');
  });

  it('ships in parts, then refuses a fully shipped order; the same tracking number is answered with the order', async () => {
    const id = await order(3);
    const first = await ship({ id, t: '1ZA', c: 'UPS', l: [{ line: 0, quantity: 1 }] });
    expect(first.errors).toBeUndefined();
    const rest = await ship({ id, t: '1ZB' });
    expect(
      (
        rest.data as { recordOrderShipment: { shipments: { lines: unknown[] }[] } }
      ).recordOrderShipment.shipments.map((s) => s.lines),
    ).toEqual([[{ line: 0, quantity: 1 }], [{ line: 0, quantity: 2 }]]);
    expect((await ship({ id, t: '1ZA' })).errors).toBeUndefined();
    expect(codeOf(await ship({ id, t: '1ZC' }))[0]).toBe('ORDER_NOT_SHIPPABLE');
  });

  it.each<[string, Record<string, unknown>, string, string | undefined]>([
    ['a malformed order id', { id: 'ord_x', t: '1Z' }, 'BAD_USER_INPUT', 'orderId'],
    ['an unknown order', { id: `ord_${'0'.repeat(32)}`, t: '1Z' }, 'NOT_FOUND', undefined],
    ['an empty tracking number', { t: '  ' }, 'BAD_USER_INPUT', 'trackingNumber'],
    ['a tracking number over 100 characters', { t: 'x'.repeat(101) }, 'BAD_USER_INPUT', 'trackingNumber'],
    ['a control character', { t: '1Z\u0007' }, 'BAD_USER_INPUT', 'trackingNumber'],
    [
      'a tracking URL that is not http(s)',
      { t: '1Z', u: 'ftp://x.example/t' },
      'BAD_USER_INPUT',
      'trackingUrl',
    ],
    ['no lines', { t: '1Z', l: [] }, 'BAD_USER_INPUT', 'lines'],
    [
      'a line the order does not have',
      { t: '1Z', l: [{ line: 1, quantity: 1 }] },
      'BAD_USER_INPUT',
      'lines[0].line',
    ],
    ['more than ordered', { t: '1Z', l: [{ line: 0, quantity: 4 }] }, 'BAD_USER_INPUT', 'lines[0].quantity'],
  ])('refuses %s (%s)', async (_w, vars, code, field) => {
    const id = 'id' in vars ? vars.id : await order(3);
    expect(codeOf(await ship({ ...vars, id }))).toEqual([code, field]);
  });

  it('answers random input with the order or a 4xx-class error, never a server error (fast-check)', async () => {
    const id = await order(100);
    await fc.assert(
      fc.asyncProperty(
        fc.string({ maxLength: 120 }),
        fc.option(fc.string({ maxLength: 40 }), { nil: null }),
        fc.option(fc.oneof(fc.webUrl(), fc.string({ maxLength: 60 })), { nil: null }),
        fc.option(
          fc.array(
            fc.record({ line: fc.integer({ min: -2, max: 3 }), quantity: fc.integer({ min: -1, max: 5 }) }),
            { maxLength: 3 },
          ),
          { nil: null },
        ),
        async (t, c, u, l) => {
          const r = await ship({ id, t, c, u, l });
          if (r.errors)
            expect(['BAD_USER_INPUT', 'ORDER_NOT_SHIPPABLE']).toContain(r.errors[0]?.extensions?.code);
          else
            expect((r.data as { recordOrderShipment: { orderId: string } }).recordOrderShipment.orderId).toBe(
              id,
            );
        },
      ),
      { numRuns: 60 },
    );
  });
});

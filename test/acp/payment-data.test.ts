/**
 * ACP's side of the order's evidence (issue 50; docs/acp.md, "Payment data kept with the order"):
 * ACP 2026-04-17 has no member for approval evidence in a completion's `payment_data`
 * (PaymentData is closed: handler_id, instrument, billing_address, purchase_order_number,
 * payment_terms, due_date, approval_required). What it does offer is kept with the order as the
 * platform gave it and returned by GET …/orders/{id}/authorization; a member the schema does not
 * know is refused by the bundle's schema, a payment_data over 4 KiB by this merchant.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startEmbedded, type TestSystem } from '../../harness/system.ts';
import { documented } from '../ap2/support/documented.ts';
import { acp, expectError, expectSession, issueKey } from './support/acp.ts';

let sys: TestSystem;
let n = 0;

beforeAll(async () => {
  sys = await startEmbedded({ SHED_QUOTE_BUDGET_MS: '0', SHED_ORDER_BUDGET_MS: '0', CATALOG_SIZE: '500' });
}, 120_000);
afterAll(() => sys?.close());

async function platform() {
  const spiffeId = `spiffe://example.org/ns/ai/sa/procurement-agent/acp-payment-data-${process.pid}-${++n}`;
  const { key } = await issueKey(sys, { spiffeId });
  const call = (method: 'GET' | 'POST', path: string, body?: unknown) =>
    acp(sys.url, key, method, path, body);
  const open = async () =>
    String(
      expectSession(
        await call('POST', '/checkout_sessions', {
          currency: 'usd',
          capabilities: {},
          line_items: [{ id: 'SKU-ABC-000001', quantity: 1 }],
        }),
        201,
      ).id,
    );
  return { spiffeId, call, open };
}

describe('ACP payment_data kept with the order', () => {
  it('returns the completion’s payment_data as given, approval_required included', async () => {
    const p = await platform();
    const id = await p.open();
    const given = {
      purchase_order_number: 'PO-ACP-EVIDENCE-1',
      payment_terms: 'net_60',
      due_date: '2026-12-31T00:00:00Z',
      approval_required: true,
      billing_address: {
        name: 'Accounts Payable',
        line_one: '1 Main Street',
        city: 'Springfield',
        state: 'IL',
        country: 'US',
        postal_code: '62701',
      },
    };
    const done = expectSession(
      await p.call('POST', `/checkout_sessions/${id}/complete`, { payment_data: given }),
    );
    const orderId = (done.order as { id: string }).id;
    const res = await fetch(`${sys.url}/api/v2/procurement/orders/${orderId}/authorization`, {
      headers: { 'x-spiffe-id': p.spiffeId },
    });
    expect(res.status).toBe(200);
    const body = (await res.json()) as Record<string, unknown>;
    documented('OrderAuthorization', body);
    expect(body).toMatchObject({ order_id: orderId, checkout_session_id: id, authorization: null });
    expect(body.payment_data).toEqual(given);
    // No spend policy applied to this platform: no approval was asked.
    expect(body.approval).toEqual({ type: 'not_required', policy: null, amount: expect.any(String) });
  });

  it('refuses a member ACP does not define, and a payment_data over 4 KiB, completing nothing', async () => {
    const p = await platform();
    const id = await p.open();
    const unknown = await p.call('POST', `/checkout_sessions/${id}/complete`, {
      payment_data: { purchase_order_number: 'PO-1', approval_evidence: 'signed by the CFO' },
    });
    expectError(unknown, 400);
    const big = await p.call('POST', `/checkout_sessions/${id}/complete`, {
      payment_data: {
        purchase_order_number: 'PO-2',
        billing_address: {
          name: 'x',
          line_one: 'y'.repeat(5000),
          city: 'c',
          state: 'IL',
          country: 'US',
          postal_code: '1',
        },
      },
    });
    expect(expectError(big, 400).param).toBe('$.payment_data');
    expect(expectSession(await p.call('GET', `/checkout_sessions/${id}`)).status).toBe('ready_for_payment');
  });
});

/**
 * Approval above the spend policy, and the orders (order_test.py): the last part of the UCP
 * checkout suite (../checkout.suite.ts).
 */
import { describe, expect, it } from 'vitest';
import { totalsOf } from '../../../harness/ucp-platform.ts';
import { expectUcp } from '../support/validate.ts';
import { APPROVE, type CheckoutContext, expectCheckout, messages } from './support.ts';

export function ordersTests(t: CheckoutContext): void {
  describe('approval above the spend policy', () => {
    it('is requires_escalation with a requires_buyer_review message and continue_url; approved, completed', async () => {
      const p = await t.platform({ budget: '100000.00', approvalAbove: '0.01' });
      const c = await p.ready();
      const held = expectCheckout(await p.complete(c.id));
      expect(held.status).toBe('requires_escalation');
      expect(String(held.continue_url)).toMatch(/\/console\/approvals\?order=ord_/);
      expect(messages(held)).toContainEqual(expect.objectContaining({ severity: 'requires_buyer_review' }));
      const orderId = (held.order as { id: string }).id;
      const ok = await t.sys.gql(APPROVE, {
        token: await t.sys.token(['orders:approve'], 'ops-ucp'),
        variables: { id: orderId },
      });
      expect(ok.errors).toBeUndefined();
      expect(expectCheckout(await p.call('GET', `/checkout-sessions/${c.id}`)).status).toBe('completed');
    });
  });

  describe('orders (order_test.py)', () => {
    it('order_retrieval and order_fulfillment_retrieval: the order under the REST endpoint, with the address', async () => {
      const p = await t.platform();
      const c = await p.ready(2);
      const done = expectCheckout(await p.complete(c.id));
      const order = done.order as { id: string; permalink_url: string };
      const r = await p.call('GET', `/orders/${order.id}`);
      expect(r.status).toBe(200);
      expectUcp('order', r.body);
      expect(r.body).toMatchObject({
        id: order.id,
        checkout_id: c.id,
        permalink_url: order.permalink_url,
        currency: 'USD',
      });
      const exp = (
        r.body.fulfillment as {
          expectations: { description: string; destination: Record<string, string> }[];
        }
      ).expectations[0];
      expect(exp?.description).toBe('Delivery under your procurement terms');
      expect(exp?.destination.address_country).toBe('US');
      expect(totalsOf(r.body).total).toBe(totalsOf(done).total);
    });

    it("reads the caller's own orders only: another platform gets 404", async () => {
      const p = await t.platform();
      const other = await t.platform();
      const c = await p.ready();
      const order = expectCheckout(await p.complete(c.id)).order as { id: string };
      expect((await other.call('GET', `/orders/${order.id}`)).status).toBe(404);
      expect((await other.call('GET', `/checkout-sessions/${c.id}`)).status).toBe(404);
    });
  });
}

/**
 * A cart converted by `cart_id`: the cart's contents, one incomplete checkout per cart, cleared
 * once completed, no budget spent and no stock held before: a part of ../ucp.test.ts.
 */
import { describe, expect, it } from 'vitest';
import { totalsOf } from '../../../harness/ucp-platform.ts';
import { expectUcp } from '../../ucp/support/validate.ts';
import { A, B, type CartContext, completeBody, expectCart, expectError, lines } from './support.ts';

export function checkoutTests(t: CartContext): void {
  describe('cart to checkout', () => {
    it('takes the cart’s contents, ignores the request’s, and answers the incomplete checkout again', async () => {
      const p = await t.platform();
      const c = expectCart(
        await p.call('POST', '/carts', { ...lines([A, 2], [B, 1]), buyer: { email: 'b@example.com' } }),
        201,
      );
      const body = { cart_id: c.id, ...lines([B, 7]), buyer: { email: 'other@example.com' } };
      expectUcp('checkout_with_cart', body, { request: 'create' });
      const first = await p.call('POST', '/checkout-sessions', body);
      expect(first.status, JSON.stringify(first.body)).toBe(201);
      expectUcp('checkout', first.body);
      const items = (first.body.line_items as { item: { id: string }; quantity: number }[]).map((l) => [
        l.item.id,
        l.quantity,
      ]);
      expect(items).toEqual([
        [A, 2],
        [B, 1],
      ]);
      expect(first.body.buyer).toEqual({ email: 'b@example.com' });
      expect(totalsOf(first.body).total).toBe(totalsOf(c).total);
      const again = await p.call('POST', '/checkout-sessions', { cart_id: c.id, line_items: [] });
      expect(again.status).toBe(200);
      expect(again.body.id).toBe(first.body.id);
    });

    it('a cart whose checkout was completed is cleared: not_found for conversion and for the cart', async () => {
      const p = await t.platform();
      const c = expectCart(await p.call('POST', '/carts', lines([A, 1])), 201);
      const s = await p.call('POST', '/checkout-sessions', { cart_id: c.id, line_items: [] });
      expect(s.status).toBe(201);
      const done = await p.call('POST', `/checkout-sessions/${s.body.id}/complete`, completeBody);
      expect(done.body.status, JSON.stringify(done.body)).toBe('completed');
      expectError(
        await p.call('POST', '/checkout-sessions', { cart_id: c.id, line_items: [] }),
        404,
        'not_found',
        '$.cart_id',
      );
      expectError(await p.call('GET', `/carts/${c.id}`), 404, 'not_found');
    });

    it('a cart spends no budget and holds no stock', async () => {
      // Stock of A, and a budget just above one unit of A: carts far above both change nothing.
      const stock = await t.sys.gql('query($skus: [ID!]!) { products(skus: $skus) { inventoryLevel } }', {
        variables: { skus: [A] },
      });
      const units = ((stock.data?.products ?? []) as { inventoryLevel: number }[])[0]?.inventoryLevel ?? 0;
      const probe = await t.platform();
      const unit = (await t.quoteOf([{ id: A, quantity: 1 }], probe.agentId)).total;
      const p = await t.platform({ budget: ((unit + 1) / 100).toFixed(2) });
      for (let i = 0; i < 3; i++) {
        const big = expectCart(await p.call('POST', '/carts', lines([A, units])), 201);
        expect(big.messages).toEqual([]);
      }
      const c = expectCart(await p.call('POST', '/carts', lines([A, 1])), 201);
      const s = await p.call('POST', '/checkout-sessions', { cart_id: c.id, line_items: [] });
      expect(s.body.status).toBe('ready_for_complete');
      const done = await p.call('POST', `/checkout-sessions/${s.body.id}/complete`, completeBody);
      expect(done.body.status, JSON.stringify(done.body)).toBe('completed');
    });
  });
}

/**
 * The cart capability itself (cart.md, cart-rest.md): declared, created, read, replaced, cancelled,
 * idempotent, items by SKU or feed id, another platform's 404, the profile's say: a part of
 * ../ucp.test.ts, on its system.
 */
import { describe, expect, it } from 'vitest';
import { totalsOf, ucpCall } from '../../../harness/ucp-platform.ts';
import { expectUcp } from '../../ucp/support/validate.ts';
import { A, B, type CartContext, expectCart, expectError, lines } from './support.ts';

export function capabilityTests(t: CartContext): void {
  describe('the UCP cart capability', () => {
    it('is declared in /.well-known/ucp', async () => {
      const profile = (await (await fetch(`${t.sys.url}/.well-known/ucp`)).json()) as Record<string, unknown>;
      expectUcp('business_profile', profile);
      expect(
        (profile.ucp as { capabilities: Record<string, unknown> }).capabilities['dev.ucp.shopping.cart'],
      ).toEqual([
        {
          version: '2026-04-08',
          spec: 'https://ucp.dev/2026-04-08/specification/cart',
          schema: 'https://ucp.dev/2026-04-08/schemas/shopping/cart.json',
        },
      ]);
    });

    it('creates, reads, replaces and cancels a cart; totals are the quote’s to the cent', async () => {
      const p = await t.platform();
      const body = { ...lines([A, 2], [B, 1]), context: { address_country: 'US', postal_code: '94105' } };
      expectUcp('cart', body, { request: 'create' });
      const created = expectCart(await p.call('POST', '/carts', body), 201);
      expect(created.id).toMatch(/^cart_[0-9a-f]{32}$/);
      expect(created.context).toEqual(body.context);
      const q = await t.quoteOf(
        [
          { id: A, quantity: 2 },
          { id: B, quantity: 1 },
        ],
        p.agentId,
      );
      expect(totalsOf(created)).toMatchObject({ subtotal: q.subtotal, total: q.total });
      expect(expectCart(await p.call('GET', `/carts/${created.id}`))).toEqual(created);
      const update = { id: created.id, ...lines([A, 3]) };
      expectUcp('cart', update, { request: 'update' });
      const replaced = expectCart(await p.call('PUT', `/carts/${created.id}`, update));
      expect(totalsOf(replaced).total).toBe((await t.quoteOf([{ id: A, quantity: 3 }], p.agentId)).total);
      expect(replaced.context).toEqual(body.context);
      expect(expectCart(await p.call('POST', `/carts/${created.id}/cancel`))).toEqual(replaced);
      expectError(await p.call('GET', `/carts/${created.id}`), 404, 'not_found');
      expectError(
        await p.call('PUT', `/carts/${created.id}`, { id: created.id, ...lines([A, 1]) }),
        404,
        'not_found',
      );
      expectError(await p.call('POST', `/carts/${created.id}/cancel`), 404, 'not_found');
    });

    it('replays a create under the same Idempotency-Key, and refuses another body under it (409)', async () => {
      const p = await t.platform();
      const headers = { 'idempotency-key': `ucp-cart-idem-${process.pid}` };
      const first = expectCart(await p.call('POST', '/carts', lines([A, 1]), headers), 201);
      const again = await p.call('POST', '/carts', lines([A, 1]), headers);
      expect(again.headers.get('idempotent-replayed')).toBe('true');
      expect(expectCart(again, 201).id).toBe(first.id);
      expectError(await p.call('POST', '/carts', lines([A, 2]), headers), 409, 'idempotency_conflict');
    });

    it('shows unknown items as messages; a cart of nothing buyable is the spec’s error_response, not stored', async () => {
      const p = await t.platform();
      const mixed = expectCart(await p.call('POST', '/carts', lines([A, 1], ['pink_wumpus', 1])), 201);
      expect(mixed.messages).toEqual([
        expect.objectContaining({
          type: 'error',
          code: 'not_found',
          path: '$.line_items[1]',
          severity: 'recoverable',
        }),
      ]);
      const before = await t.stored();
      const refused = await p.call('POST', '/carts', lines(['pink_wumpus', 1], ['SKU-ZZZ-999999', 2]));
      expect(refused.status).toBe(200);
      expectUcp('error_response', refused.body);
      expect(refused.body.id).toBeUndefined();
      expect(
        (refused.body.messages as { code: string; severity: string }[]).map((m) => [m.code, m.severity]),
      ).toEqual([
        ['not_found', 'unrecoverable'],
        ['not_found', 'unrecoverable'],
      ]);
      expect(await t.stored()).toBe(before);
    });

    it('takes the merchant’s feed ids as items, and an item on several lines', async () => {
      const p = await t.platform();
      const id = 'cart-lamp-brass';
      await t.importFeed(id);
      const c = expectCart(await p.call('POST', '/carts', lines([id, 2], [A, 1], [A, 2])), 201);
      const items = c.line_items as { item: { id: string; price: number }; quantity: number }[];
      expect(items[0]).toMatchObject({ item: { id, price: 18900 }, quantity: 2 });
      expect(items.map((l) => l.quantity)).toEqual([2, 1, 2]);
      expect(totalsOf(c).total).toBe(
        2 * 18900 + (await t.quoteOf([{ id: A, quantity: 3 }], p.agentId)).total,
      );
    });

    it("is another platform's 404 for every operation, and conversion too; the cart stays as it was", async () => {
      const mine = await t.platform();
      const other = await t.platform();
      const c = expectCart(await mine.call('POST', '/carts', lines([A, 1])), 201);
      expectError(await other.call('GET', `/carts/${c.id}`), 404, 'not_found');
      expectError(
        await other.call('PUT', `/carts/${c.id}`, { id: c.id, ...lines([A, 9]) }),
        404,
        'not_found',
      );
      expectError(await other.call('POST', `/carts/${c.id}/cancel`), 404, 'not_found');
      expectError(
        await other.call('POST', '/checkout-sessions', { cart_id: c.id, line_items: [] }),
        404,
        'not_found',
        '$.cart_id',
      );
      expect(expectCart(await mine.call('GET', `/carts/${c.id}`))).toEqual(c);
    });

    it('needs the capability in the platform profile', async () => {
      const p = await t.platform();
      const bare = (method: 'GET' | 'POST', path: string, body?: unknown) =>
        ucpCall(t.sys.url, { key: p.key, profileUrl: t.bareUrl }, method, path, body);
      const r = await bare('POST', '/carts', lines([A, 1]));
      expect(r.status).toBe(200);
      expect(r.body.messages).toEqual([expect.objectContaining({ code: 'capabilities_incompatible' })]);
      expectError(
        await bare('POST', '/checkout-sessions', { cart_id: 'cart_x', line_items: [] }),
        400,
        'invalid',
        '$.cart_id',
      );
    });
  });
}

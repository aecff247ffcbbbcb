/**
 * A checkout's lifecycle and idempotency (checkout_lifecycle_test.py, idempotency_test.py): a
 * part of the UCP checkout suite (../checkout.suite.ts).
 */
import { describe, expect, it } from 'vitest';
import type { UcpReply } from '../../../harness/ucp-platform.ts';
import { type CheckoutContext, expectCheckout, FIXTURE } from './support.ts';

export function lifecycleTests(t: CheckoutContext): void {
  describe('lifecycle (checkout_lifecycle_test.py)', () => {
    it('create_checkout: 201, a valid checkout, Location', async () => {
      const p = await t.platform();
      const r = await p.call('POST', '/checkout-sessions', {
        line_items: [{ item: { id: FIXTURE.itemA }, quantity: 1 }],
      });
      const c = expectCheckout(r, 201);
      expect(c.id).toMatch(/^cs_/);
      expect(r.headers.get('location')).toBe(`/ucp/checkout-sessions/${c.id}`);
      expect((c.ucp as { payment_handlers: object }).payment_handlers).toHaveProperty([
        'com.example.purchase_order',
      ]);
    });

    it('get_checkout and update_checkout', async () => {
      const p = await t.platform();
      const c = await p.create();
      expect(expectCheckout(await p.call('GET', `/checkout-sessions/${c.id}`)).id).toBe(c.id);
      const u = expectCheckout(
        await p.update(c.id, { line_items: [{ item: { id: FIXTURE.itemA }, quantity: 2 }] }),
      );
      expect((u.line_items as { quantity: number }[])[0]?.quantity).toBe(2);
    });

    it('cancel with Content-Type: application/json and an empty body (the REST binding defines no body)', async () => {
      const p = await t.platform();
      const c = await p.create();
      const r = await p.cancel(c.id, { 'content-type': 'application/json' });
      expect(r.status, JSON.stringify(r.body)).toBe(200);
      expect(expectCheckout(r).status).toBe('canceled');
    });

    it('cancel_checkout, cancel_is_idempotent, cannot_update/complete_canceled_checkout', async () => {
      const p = await t.platform();
      const c = await p.create();
      expect(expectCheckout(await p.cancel(c.id)).status).toBe('canceled');
      // 409 invalid_state (issue 50: checkout.md's "error indicating the operation is not
      // allowed", as the reference server answers), the session unchanged.
      for (const r of [
        await p.cancel(c.id),
        await p.update(c.id, { line_items: [{ item: { id: FIXTURE.itemA }, quantity: 2 }] }),
        await p.complete(c.id),
      ]) {
        expect(r.status, JSON.stringify(r.body)).toBe(409);
        expect(r.body).toMatchObject({ code: 'invalid_state' });
        expect(String(r.body.content)).toContain('canceled');
      }
      expect(expectCheckout(await p.call('GET', `/checkout-sessions/${c.id}`)).status).toBe('canceled');
    });

    it('invalid_state is kept under its Idempotency-Key: a replay answers the same 409', async () => {
      const p = await t.platform();
      const c = await p.create();
      expect(expectCheckout(await p.cancel(c.id)).status).toBe('canceled');
      const h = { 'idempotency-key': `late-${t.label}-${Math.random().toString(36).slice(2)}` };
      const body = { line_items: [{ item: { id: FIXTURE.itemA }, quantity: 3 }] };
      const first = await p.call('PUT', `/checkout-sessions/${c.id}`, body, h);
      const again = await p.call('PUT', `/checkout-sessions/${c.id}`, body, h);
      expect(first.status).toBe(409);
      expect(again.status).toBe(409);
      expect(again.body).toEqual(first.body);
    });

    it('complete_checkout: completed, with order id and permalink; complete/update/cancel after it are refused', async () => {
      const p = await t.platform();
      const c = await p.ready();
      const done = expectCheckout(await p.complete(c.id, 'PO-UCP-42'));
      expect(done.status).toBe('completed');
      const order = done.order as { id: string; permalink_url: string };
      expect(order.id).toMatch(/^ord_/);
      expect(order.permalink_url).toMatch(new RegExp(`/ucp/orders/${order.id}$`));
      for (const r of [
        await p.complete(c.id),
        await p.update(c.id, { line_items: [{ item: { id: FIXTURE.itemA }, quantity: 2 }] }),
        await p.cancel(c.id),
      ]) {
        expect(r.status, JSON.stringify(r.body)).toBe(409);
        expect(r.body).toMatchObject({ code: 'invalid_state' });
        expect(String(r.body.content)).toContain('completed');
      }
      expect(expectCheckout(await p.call('GET', `/checkout-sessions/${c.id}`)).status).toBe('completed');
    });
  });

  describe('idempotency (idempotency_test.py)', () => {
    /** The first answer and its replay: both a valid checkout with `status`, the same body. */
    const sameTwice = async (send: (h: Record<string, string>) => Promise<UcpReply>, status = 200) => {
      const h = { 'idempotency-key': `idem-${t.label}-${Math.random().toString(36).slice(2)}` };
      const a = await send(h);
      const b = await send(h);
      expectCheckout(a, status);
      expectCheckout(b, status);
      expect(b.body).toEqual(a.body);
      expect(b.headers.get('idempotent-replayed')).toBe('true');
      return h;
    };

    it('idempotency_create: the same key and body replay; another body is 409', async () => {
      const p = await t.platform();
      const body = (q: number) => ({ line_items: [{ item: { id: FIXTURE.itemA }, quantity: q }] });
      const h = await sameTwice((x) => p.call('POST', '/checkout-sessions', body(1), x), 201);
      const conflict = await p.call('POST', '/checkout-sessions', body(2), h);
      expect(conflict.status).toBe(409);
      expect(conflict.body.code).toBe('idempotency_conflict');
    });

    it('idempotency_update: quantity 2 replayed, 3 with the same key is 409', async () => {
      const p = await t.platform();
      const c = await p.create();
      const body = (q: number) => ({ line_items: [{ item: { id: FIXTURE.itemA }, quantity: q }] });
      const h = await sameTwice((x) => p.call('PUT', `/checkout-sessions/${c.id}`, body(2), x));
      expect((await p.call('PUT', `/checkout-sessions/${c.id}`, body(3), h)).status).toBe(409);
    });

    it('idempotency_complete: replayed; another credential with the same key is 409', async () => {
      const p = await t.platform();
      const c = await p.ready();
      const h = await sameTwice((x) => p.complete(c.id, 'PO-SAME', x));
      expect((await p.complete(c.id, 'PO-OTHER', h)).status).toBe(409);
    });

    it('idempotency_cancel: the same key twice, both 200 with identical bodies (no body: by key alone)', async () => {
      const p = await t.platform();
      const c = await p.create();
      await sameTwice((x) => p.cancel(c.id, x));
    });
  });
}

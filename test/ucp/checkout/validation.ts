/**
 * What a checkout request is refused or warned for (validation_test.py): a part of the UCP
 * checkout suite (../checkout.suite.ts).
 */
import { describe, expect, it } from 'vitest';
import { purchaseOrderPayment, totalsOf } from '../../../harness/ucp-platform.ts';
import { expectUcp } from '../support/validate.ts';
import { type CheckoutContext, expectCheckout, FIXTURE, messages, priceOf } from './support.ts';

export function validationTests(t: CheckoutContext): void {
  describe('validation (validation_test.py)', () => {
    it('product_not_found: a create with only unknown items is an error_response (200), no checkout', async () => {
      const p = await t.platform();
      for (const id of [FIXTURE.unknown, FIXTURE.unknownSku]) {
        const r = await p.call('POST', '/checkout-sessions', {
          line_items: [{ item: { id }, quantity: 1 }],
        });
        expect(r.status).toBe(200);
        expectUcp('error_response', r.body);
        expect(messages(r.body)[0]).toMatchObject({
          type: 'error',
          code: 'not_found',
          severity: 'unrecoverable',
        });
      }
    });

    it('an unknown item beside a known one: the checkout, incomplete, with not_found at that line', async () => {
      const p = await t.platform();
      const c = await p.create({
        line_items: [
          { item: { id: FIXTURE.itemA }, quantity: 1 },
          { item: { id: FIXTURE.unknownSku }, quantity: 1 },
        ],
      });
      expect(c.status).toBe('incomplete');
      expect(messages(c)).toContainEqual(
        expect.objectContaining({ code: 'not_found', path: '$.line_items[1]' }),
      );
    });

    it('out_of_stock: a create with only the out-of-stock item is an error_response (200) with out_of_stock, no checkout', async () => {
      const p = await t.platform();
      const r = await p.call('POST', '/checkout-sessions', {
        line_items: [{ item: { id: FIXTURE.outOfStock }, quantity: 1 }],
      });
      expect(r.status).toBe(200);
      expectUcp('error_response', r.body);
      expect((r.body.ucp as { status: string }).status).toBe('error');
      expect(r.body.id).toBeUndefined();
      expect(messages(r.body)[0]).toMatchObject({
        type: 'error',
        code: 'out_of_stock',
        path: '$.line_items[0]',
        severity: 'unrecoverable',
      });
    });

    it('out_of_stock beside an in-stock line: the checkout, incomplete, with a recoverable out_of_stock at that line; completion refused', async () => {
      const p = await t.platform();
      const lines = [
        { item: { id: FIXTURE.itemA }, quantity: 1 },
        { item: { id: FIXTURE.outOfStock }, quantity: 1 },
      ];
      const c = await p.create({
        line_items: lines,
        fulfillment: { methods: [{ type: 'shipping', destinations: [FIXTURE.address] }] },
      });
      expect(c.status).toBe('incomplete');
      const stockMessages = messages(c).filter((m) => m.code === 'out_of_stock');
      expect(stockMessages).toEqual([
        expect.objectContaining({ type: 'error', path: '$.line_items[1]', severity: 'recoverable' }),
      ]);
      // Priced all the same: the totals are what the lines cost.
      expect(totalsOf(c).subtotal).toBe(priceOf(c, 0) + priceOf(c, 1));
      // Fulfillment selected: still incomplete, and completion places no order.
      const u = expectCheckout(
        await p.update(c.id, {
          line_items: lines,
          fulfillment: {
            methods: [
              {
                line_item_ids: ['li_0', 'li_1'],
                groups: [{ id: 'group_1', selected_option_id: 'procurement_delivery' }],
              },
            ],
          },
        }),
      );
      expect(u.status).toBe('incomplete');
      const after = expectCheckout(await p.complete(c.id));
      expect(after.status).toBe('incomplete');
      expect(after.order).toBeUndefined();
      expect(messages(after)).toContainEqual(
        expect.objectContaining({ code: 'out_of_stock', path: '$.line_items[1]' }),
      );
      // Without the out-of-stock line it completes.
      const fixed = expectCheckout(
        await p.update(c.id, {
          line_items: [lines[0]],
          fulfillment: {
            methods: [
              {
                line_item_ids: ['li_0'],
                groups: [{ id: 'group_1', selected_option_id: 'procurement_delivery' }],
              },
            ],
          },
        }),
      );
      expect(fixed.status).toBe('ready_for_complete');
      expect(expectCheckout(await p.complete(c.id)).status).toBe('completed');
    });

    it('update_inventory_validation: a PUT over the stock is out_of_stock at $.line_items[0], not ready; the whole stock is fine', async () => {
      const p = await t.platform();
      const c = await p.ready();
      const over = expectCheckout(
        await p.update(c.id, { line_items: [{ item: { id: FIXTURE.itemA }, quantity: t.stockOfA + 1 }] }),
      );
      expect(over.status).toBe('incomplete');
      expect(messages(over)).toContainEqual(
        expect.objectContaining({
          type: 'error',
          code: 'out_of_stock',
          path: '$.line_items[0]',
          severity: 'recoverable',
        }),
      );
      expect(messages(over).find((m) => m.code === 'out_of_stock')?.content).toContain(
        `${t.stockOfA} available`,
      );
      const all = expectCheckout(
        await p.update(c.id, { line_items: [{ item: { id: FIXTURE.itemA }, quantity: t.stockOfA }] }),
      );
      expect(messages(all).some((m) => m.code === 'out_of_stock')).toBe(false);
      expect(all.status).toBe('ready_for_complete');
    });

    it('structured_error_messages: the out-of-stock error is structured, each message a valid message.json', async () => {
      const p = await t.platform();
      const bodies = [
        (
          await p.call('POST', '/checkout-sessions', {
            line_items: [{ item: { id: FIXTURE.outOfStock }, quantity: 1 }],
          })
        ).body,
        await p.create({
          line_items: [
            { item: { id: FIXTURE.itemA }, quantity: 1 },
            { item: { id: FIXTURE.outOfStock }, quantity: 2 },
          ],
        }),
      ];
      expectUcp('error_response', bodies[0]);
      for (const body of bodies) {
        const stock = messages(body).filter((m) => m.code === 'out_of_stock');
        expect(stock).toHaveLength(1);
        for (const m of messages(body)) {
          expectUcp('message', m);
          expect(typeof m.content).toBe('string');
          expect(m.content.length).toBeGreaterThan(0);
        }
        expect(stock[0]).toMatchObject({
          type: 'error',
          path: expect.stringMatching(/^\$\.line_items\[\d+\]$/),
        });
        expect(stock[0]?.content).toContain(FIXTURE.outOfStock);
      }
    });

    it('payment_failure: an instrument of another handler is not charged: 200, not completed, payment_failed', async () => {
      const p = await t.platform();
      const c = await p.ready();
      const r = await p.call('POST', `/checkout-sessions/${c.id}/complete`, {
        payment: {
          instruments: [
            {
              id: 'i1',
              handler_id: 'gpay',
              type: 'card',
              selected: true,
              credential: { type: 'PAYMENT_GATEWAY' },
            },
          ],
        },
      });
      const after = expectCheckout(r);
      expect(after.status).toBe('ready_for_complete');
      expect(messages(after)).toContainEqual(
        expect.objectContaining({ code: 'payment_failed', path: '$.payment.instruments[0].handler_id' }),
      );
    });

    it.each([
      ['no purchase order number', { type: 'purchase_order' }, '.credential.purchase_order_number'],
      [
        'a number with a control character',
        { type: 'purchase_order', purchase_order_number: 'PO\u0007' },
        '.credential.purchase_order_number',
      ],
      ['a credential of another type', { type: 'card', purchase_order_number: 'PO-1' }, '.credential.type'],
    ])(
      'payment_failed at the path the handler schema names: %s (issue 50)',
      async (_name, credential, at) => {
        const p = await t.platform();
        const c = await p.ready();
        const r = await p.call('POST', `/checkout-sessions/${c.id}/complete`, {
          payment: purchaseOrderPayment(credential),
        });
        const after = expectCheckout(r);
        expect(after.status).toBe('ready_for_complete');
        expect(messages(after)).toContainEqual(
          expect.objectContaining({ code: 'payment_failed', path: `$.payment.instruments[0]${at}` }),
        );
      },
    );

    it('complete_without_fulfillment: 200, not completed, a recoverable message into $.fulfillment', async () => {
      const p = await t.platform();
      const c = await p.create();
      expect(c.status).toBe('incomplete');
      const after = expectCheckout(await p.complete(c.id));
      expect(after.status).toBe('incomplete');
      expect(
        messages(after).some((m) => m.path?.startsWith('$.fulfillment') && m.severity === 'recoverable'),
      ).toBe(true);
    });

    it.each([
      ['no line_items', {}, '$'],
      [
        'quantity 0',
        { line_items: [{ item: { id: FIXTURE.itemA }, quantity: 0 }] },
        '$.line_items[0].quantity',
      ],
      [
        'quantity above the limit',
        { line_items: [{ item: { id: FIXTURE.itemA }, quantity: 10001 }] },
        '$.line_items[0].quantity',
      ],
    ])('refuses a create with %s: 400 at its path', async (_w, body, path) => {
      const p = await t.platform();
      const r = await p.call('POST', '/checkout-sessions', body);
      expect(r.status).toBe(400);
      expect(String(r.body.path ?? '')).toContain(path === '$' ? '$' : path);
    });

    it('refuses malformed JSON (400) and another media type (415)', async () => {
      const p = await t.platform();
      expect((await p.call('POST', '/checkout-sessions', '{"line_items": [')).status).toBe(400);
      expect((await p.call('POST', '/checkout-sessions', 'x', { 'content-type': 'text/plain' })).status).toBe(
        415,
      );
    });
  });
}

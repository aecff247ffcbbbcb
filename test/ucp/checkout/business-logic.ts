/**
 * Prices, totals, discounts, stock and fulfillment (business_logic_test.py): a part of the UCP
 * checkout suite (../checkout.suite.ts).
 */
import { describe, expect, it } from 'vitest';
import { totalsOf } from '../../../harness/ucp-platform.ts';
import { type CheckoutContext, expectCheckout, FIXTURE, lineTotals, messages, priceOf } from './support.ts';

export function businessLogicTests(t: CheckoutContext): void {
  describe('business logic (business_logic_test.py)', () => {
    it('totals_calculation_on_create: the client title is ignored; line and checkout totals are the price', async () => {
      const p = await t.platform();
      const c = await p.create({
        line_items: [{ item: { id: FIXTURE.itemA, title: 'Client title' }, quantity: 1 }],
      });
      const price = priceOf(c);
      expect(Number.isInteger(price) && price > 0).toBe(true);
      expect((c.line_items as { item: { title: string } }[])[0]?.item.title).not.toBe('Client title');
      expect(lineTotals(c)).toMatchObject({ subtotal: price, total: price });
      expect(totalsOf(c)).toMatchObject({ subtotal: price, total: price });
    });

    it('totals_recalculation_on_update: 2 × A + B', async () => {
      const p = await t.platform();
      const c = await p.create();
      const u = expectCheckout(
        await p.update(c.id, {
          line_items: [
            { item: { id: FIXTURE.itemA }, quantity: 2 },
            { item: { id: FIXTURE.itemB }, quantity: 1 },
          ],
        }),
      );
      expect(totalsOf(u).subtotal).toBe(2 * priceOf(u, 0) + priceOf(u, 1));
      expect(totalsOf(u).total).toBe(totalsOf(u).subtotal);
    });

    it('an item on two lines (issue 50): accepted, priced as the cart quote of the item once, grouped and ordered line by line', async () => {
      const p = await t.platform();
      const lineItems = [
        { item: { id: FIXTURE.itemA }, quantity: 1 },
        { item: { id: FIXTURE.itemB }, quantity: 1 },
        { item: { id: FIXTURE.itemA }, quantity: 2 },
      ];
      const c = await p.create({
        line_items: lineItems,
        discounts: { codes: [FIXTURE.code1] },
        fulfillment: { methods: [{ type: 'shipping', destinations: [FIXTURE.address] }] },
      });
      const quote = (await (
        await fetch(
          `${t.url()}/cart/quote?line=${FIXTURE.itemA}:3&line=${FIXTURE.itemB}:1&coupon=${FIXTURE.code1}&currency=USD&region=US`,
        )
      ).json()) as { total: number; discountTotal: number };
      expect(totalsOf(c).total).toBe(Math.round(quote.total * 100));
      expect(-(totalsOf(c).items_discount ?? 0)).toBe(Math.round(quote.discountTotal * 100));
      const lines = c.line_items as { id: string; item: { id: string }; quantity: number }[];
      expect(lines.map((l) => [l.id, l.item.id, l.quantity])).toEqual([
        ['li_0', FIXTURE.itemA, 1],
        ['li_1', FIXTURE.itemB, 1],
        ['li_2', FIXTURE.itemA, 2],
      ]);
      expect(priceOf(c, 2)).toBe(priceOf(c, 0));
      // Fulfilment groups every line, the repeated item's two lines included.
      const method = (c.fulfillment as { methods: { line_item_ids: string[] }[] }).methods[0];
      expect(method?.line_item_ids).toEqual(['li_0', 'li_1', 'li_2']);
      const u = expectCheckout(
        await p.update(c.id, {
          line_items: lineItems,
          discounts: { codes: [FIXTURE.code1] },
          fulfillment: {
            methods: [
              {
                line_item_ids: ['li_0', 'li_1', 'li_2'],
                groups: [{ id: 'group_1', selected_option_id: 'procurement_delivery' }],
              },
            ],
          },
        }),
      );
      expect(u.status).toBe('ready_for_complete');
      const done = expectCheckout(await p.complete(c.id, 'PO-UCP-REPEAT'));
      expect(done.status).toBe('completed');
      // Stock counts the item's lines together: each line under the stock, their sum over it.
      const fresh = await p.create();
      const over = expectCheckout(
        await p.update(fresh.id, {
          line_items: [
            { item: { id: FIXTURE.itemA }, quantity: t.stockOfA },
            { item: { id: FIXTURE.itemA }, quantity: 1 },
          ],
        }),
      );
      expect(
        messages(over)
          .filter((m) => m.code === 'out_of_stock')
          .map((m) => m.path),
      ).toEqual(['$.line_items[0]', '$.line_items[1]']);
    });

    it('discount_flow: code 1 takes 10 %, named in discounts.applied', async () => {
      const p = await t.platform();
      const c = await p.create();
      const u = expectCheckout(
        await p.update(c.id, {
          line_items: [{ item: { id: FIXTURE.itemA }, quantity: 1 }],
          discounts: { codes: [FIXTURE.code1] },
        }),
      );
      const applied = (u.discounts as { applied: { code?: string; amount: number }[] }).applied;
      expect(applied.map((a) => a.code)).toEqual([FIXTURE.code1]);
      const price = priceOf(u);
      expect(applied[0]?.amount).toBe(Math.round(price / 10));
      expect(totalsOf(u).total).toBe(price - (applied[0]?.amount ?? 0));
      expect(totalsOf(u).items_discount).toBe(-(applied[0]?.amount ?? 0));
    });

    it('multiple_discounts_accepted and fixed_amount_discount: codes 1 and 2 both applied, integer amounts', async () => {
      const p = await t.platform();
      const fixed = await p.create({
        line_items: [{ item: { id: FIXTURE.itemA }, quantity: 1 }],
        discounts: { codes: [FIXTURE.code2] },
      });
      const one = (fixed.discounts as { applied: { amount: number; code?: string }[] }).applied;
      expect(one).toEqual([expect.objectContaining({ code: FIXTURE.code2, amount: 500 })]);
      expect(totalsOf(fixed).total).toBe(priceOf(fixed) - 500);
      const both = await p.create({
        line_items: [{ item: { id: FIXTURE.itemA }, quantity: 1 }],
        discounts: { codes: [FIXTURE.code1, FIXTURE.code2] },
      });
      const applied = (both.discounts as { applied: { amount: number; code?: string }[] }).applied;
      expect(applied.map((a) => a.code).sort()).toEqual([FIXTURE.code1, FIXTURE.code2].sort());
      expect(applied.every((a) => Number.isInteger(a.amount))).toBe(true);
      expect(totalsOf(both).total).toBe(priceOf(both) - applied.reduce((n, a) => n + a.amount, 0));
    });

    it('multiple_discounts_one_rejected: the unknown code is left out and reported as discount_code_invalid', async () => {
      const p = await t.platform();
      const c = await p.create({
        line_items: [{ item: { id: FIXTURE.itemA }, quantity: 1 }],
        discounts: { codes: [FIXTURE.code1, 'NO-SUCH-CODE'] },
      });
      const applied = (c.discounts as { applied: { code?: string }[] }).applied;
      expect(applied.map((a) => a.code)).toEqual([FIXTURE.code1]);
      expect(messages(c)).toContainEqual(
        expect.objectContaining({
          type: 'warning',
          code: 'discount_code_invalid',
          path: '$.discounts.codes[1]',
        }),
      );
    });

    it('buyer_info_persistence: the buyer persists through GET', async () => {
      const p = await t.platform();
      const c = await p.create();
      const buyer = { email: 'jane@example.com', first_name: 'Jane', last_name: 'Doe' };
      expectCheckout(
        await p.update(c.id, { line_items: [{ item: { id: FIXTURE.itemA }, quantity: 1 }], buyer }),
      );
      expect(expectCheckout(await p.call('GET', `/checkout-sessions/${c.id}`)).buyer).toEqual(buyer);
    });
  });
}

/**
 * The Checkout page: ACP sessions open and completed, carts beside them, and the API's 403 to a
 * token without orders:read: a part of ../checkout-pages.test.ts.
 */
import { expect, it } from 'vitest';
import { acp, expectSession, issueKey } from '../../acp/support/acp.ts';
import { sidewaysScroll } from '../../support/console.ts';
import type { ConsoleContext } from './support.ts';

export function checkoutPageTests(ctx: ConsoleContext): void {
  it('lists an open session created through ACP on the Checkout page, and a completed one by its status', async () => {
    const spiffeId = ctx.platformSpiffe('sessions');
    const { key, id: keyId } = await issueKey(ctx.sys, { spiffeId });
    const openSession = expectSession(
      await ctx.createSession(key, [
        { id: 'SKU-ABC-000001', quantity: 2 },
        { id: 'SKU-TOL-000007', quantity: 1 },
      ]),
      201,
    );
    const done = await ctx.checkoutOrder();
    const reader = await ctx.sys.token(['orders:read']);
    const api = await ctx.sys.gql(
      'query($s: [CheckoutSessionStatus!]) { checkoutSessions(statuses: $s) { id totalDecimal } }',
      { token: reader, variables: { s: ['READY_FOR_PAYMENT'] } },
    );
    const total = ((api.data?.checkoutSessions ?? []) as { id: string; totalDecimal: string }[]).find(
      (s) => s.id === openSession.id,
    )?.totalDecimal;
    expect(total).toMatch(/^\d+\.\d{2}$/);

    const page = await ctx.newPage();
    await ctx.open(page, 'Checkout');
    const table = page.getByTestId('checkout-sessions');
    const row = table.getByRole('row').filter({ hasText: String(openSession.id) });
    await row.waitFor();
    const text = (await row.textContent()) ?? '';
    expect(text).toMatch(/ready for payment/);
    expect(text).toContain(`${ctx.money(String(total))} USD`);
    expect(text).toContain(spiffeId);
    expect(text).toContain(keyId);
    expect(text).toMatch(/2 × SKU-ABC-000001.*1 × SKU-TOL-000007/);
    // Open by default: the completed session is not listed until its status is chosen.
    expect(await table.getByRole('row').filter({ hasText: done.sessionId }).count()).toBe(0);
    await page.getByLabel('Status').selectOption('COMPLETED');
    const completed = table.getByRole('row').filter({ hasText: done.sessionId });
    await completed.waitFor();
    expect(await completed.textContent()).toMatch(new RegExp(`order ${done.orderId}completed`));
    await row.waitFor({ state: 'detached' });
    // The order link opens it on the Orders page.
    await completed.getByRole('link', { name: done.orderId }).click();
    await page.getByRole('heading', { name: 'Orders and audit', level: 1 }).waitFor();
    await page.context().close();
  });

  it('lists carts beside the sessions: an ACP cart with its lines, estimated total and problems; a canceled one is gone', async () => {
    const spiffeId = ctx.platformSpiffe('carts');
    const { key, id: keyId } = await issueKey(ctx.sys, { spiffeId });
    const cart = await acp(ctx.sys.url, key, 'POST', '/carts', {
      line_items: [
        { id: 'SKU-ABC-000001', quantity: 2 },
        { id: 'no-such-item', quantity: 1 },
      ],
    });
    expect(cart.status).toBe(201);
    const gone = await acp(ctx.sys.url, key, 'POST', '/carts', {
      line_items: [{ id: 'SKU-ABC-000001', quantity: 1 }],
    });
    expect((await acp(ctx.sys.url, key, 'POST', `/carts/${gone.body.id}/cancel`)).status).toBe(200);
    // What the API says the page must show.
    const api = await ctx.sys.gql('{ carts { id totalDecimal problems } }', {
      token: await ctx.sys.token(['orders:read']),
    });
    const listed = (api.data?.carts ?? []) as { id: string; totalDecimal: string; problems: string[] }[];
    const mine = listed.find((c) => c.id === cart.body.id);
    expect(mine?.problems).toEqual(['no-such-item is not in the catalog']);
    expect(listed.some((c) => c.id === gone.body.id)).toBe(false);

    const page = await ctx.newPage();
    await ctx.open(page, 'Checkout');
    const table = page.getByTestId('carts');
    const row = table.getByRole('row').filter({ hasText: String(cart.body.id) });
    await row.waitFor();
    const text = (await row.textContent()) ?? '';
    expect(text).toContain('ACP');
    expect(text).toContain(`${ctx.money(String(mine?.totalDecimal))} USD`);
    expect(text).toMatch(/2 × SKU-ABC-000001/);
    expect(text).toContain('no-such-item is not in the catalog');
    expect(text).toContain(spiffeId);
    expect(text).toContain(keyId);
    expect(
      await table
        .getByRole('row')
        .filter({ hasText: String(gone.body.id) })
        .count(),
    ).toBe(0);
    await page.context().close();
  });

  it("shows the API's 403 on the Checkout page to a token without orders:read", async () => {
    const page = await ctx.newPage();
    await ctx.open(page, 'Checkout', await ctx.sys.token(['agents:read'], 'no-orders'));
    const denied = page.getByRole('alert').filter({ hasText: 'orders:read' });
    await denied.first().waitFor();
    expect(await denied.first().textContent()).toMatch(/^403 FORBIDDEN/);
    await page.context().close();
  });

  it.each(['Checkout', 'Agents'])('%s with checkout data is usable at phone width', async (link) => {
    await ctx.checkoutOrder();
    const page = await ctx.newPage({ width: 390, height: 844 });
    await ctx.open(page, link);
    await page.waitForLoadState('networkidle');
    expect(await page.getByRole('alert').count()).toBe(0);
    expect(await sidewaysScroll(page)).toBeLessThanOrEqual(0);
    await page.context().close();
  });
}

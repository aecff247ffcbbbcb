/**
 * A checkout order on the Orders page and on its approval card (its priced lines; a /v2 budget that
 * does not cover the catalog), and a UCP checkout's escalation link (continue_url) opened on its
 * approval card: a part of ../checkout-pages.test.ts.
 */
import { expect, it } from 'vitest';
import { platformProfile, purchaseOrderPayment, ucpCall } from '../../../harness/ucp-platform.ts';
import { issueKey } from '../../acp/support/acp.ts';
import { freshAgent, post, validOrder } from '../../procurement/support/agent.ts';
import { setApprovalPolicy } from '../../procurement/support/spend.ts';
import type { ConsoleContext } from './support.ts';

export function ordersTests(ctx: ConsoleContext): void {
  it("shows a checkout order's lines and total on the Orders page; a /v2 order as one row", async () => {
    const order = await ctx.checkoutOrder();
    expect(order.status).toBe('completed');
    const v2agent = freshAgent('console-v2');
    const v2 = await post(ctx.sys.url, {
      spiffe: v2agent,
      body: JSON.stringify(validOrder({ sku: 'SKU-ABC-000001' })),
    });
    expect(v2.status).toBe(201);

    const page = await ctx.newPage();
    await ctx.open(page, 'Orders and audit');
    await page.getByLabel('Agent ID').fill(order.agentId);
    await page.getByRole('button', { name: 'Search' }).click();
    const table = page.getByTestId('orders');
    const row = table.getByRole('row').filter({ hasText: order.orderId }).first();
    await row.waitFor();
    expect(await row.textContent()).toContain('2 lines');
    expect(await row.textContent()).toContain(ctx.money(order.totalDecimal));
    const lines = page.getByTestId('order-lines').filter({ hasText: order.orderId });
    expect(await lines.textContent()).toContain(order.sessionId);
    for (const l of order.lines) {
      const cells = await lines
        .getByRole('row')
        .filter({ hasText: l.sku })
        .getByRole('cell')
        .allTextContents();
      expect(cells).toEqual([
        l.sku,
        String(l.quantity),
        ctx.money(l.unitPriceDecimal),
        ctx.money(l.discountDecimal),
        ctx.money(l.lineTotalDecimal),
      ]);
    }
    expect(await lines.getByRole('row').filter({ hasText: 'Total (USD)' }).textContent()).toContain(
      ctx.money(order.totalDecimal),
    );

    // A /v2 order: its SKU, quantity and budget in its row, no lines under it.
    await page.getByLabel('Agent ID').fill('agent-0000001');
    await page.getByLabel('SPIFFE ID').fill(v2agent);
    await page.getByRole('button', { name: 'Search' }).click();
    const v2row = table.getByRole('row').filter({ hasText: String(v2.json.order_id) });
    await v2row.waitFor();
    expect(await v2row.textContent()).toMatch(/SKU-ABC-000001\s*5\s*250\.75/);
    expect(await page.getByTestId('order-lines').count()).toBe(0);
    await page.context().close();
  });

  it("shows a checkout order's priced lines on its approval card, and says when a /v2 budget does not cover the catalog", async () => {
    const spendAdmin = await ctx.sys.token(['spend:admin'], 'finance');
    const spiffeId = ctx.platformSpiffe('approval');
    await setApprovalPolicy(ctx.sys, spendAdmin, spiffeId, { budget: '100000.00', approvalAbove: '0.01' });
    const order = await ctx.checkoutOrder(spiffeId);
    expect(order.status).toBe('pending_approval');

    // A /v2 order of 10 × SKU-ELC-000004 with a budget below its catalog cost.
    const v2agent = freshAgent('console-short');
    await setApprovalPolicy(ctx.sys, spendAdmin, v2agent, { approvalAbove: '1.00' });
    const priced = await ctx.sys.gql(
      '{ products(skus: ["SKU-ELC-000004"]) { basePrices { currency amountDecimal } } }',
    );
    const unit = (
      (priced.data?.products ?? []) as { basePrices: { currency: string; amountDecimal: string }[] }[]
    )[0]?.basePrices.find((p) => p.currency === 'USD')?.amountDecimal;
    expect(unit).toBeDefined();
    const v2 = await post(ctx.sys.url, {
      spiffe: v2agent,
      body: JSON.stringify(validOrder({ sku: 'SKU-ELC-000004', quantity: 10, max_budget_usd: 12.34 })),
    });
    expect(v2.status).toBe(202);
    const [whole = '0', frac = ''] = String(unit).split('.');
    const needed = (BigInt(whole) * 100n + BigInt(frac.padEnd(2, '0'))) * 10n;
    const neededText = ctx.money(`${needed / 100n}.${String(needed % 100n).padStart(2, '0')}`);

    const page = await ctx.newPage();
    await ctx.open(page, 'Approvals');
    const card = page.getByTestId('pending-approval').filter({ hasText: order.orderId });
    await card.waitFor();
    const checkout = card.getByTestId('checkout-order');
    const text = (await checkout.textContent()) ?? '';
    expect(text).toContain(`Checkout order, 2 lines, total ${ctx.money(order.totalDecimal)} USD`);
    expect(text).toContain(order.sessionId);
    for (const l of order.lines) {
      const discount = /[1-9]/.test(l.discountDecimal)
        ? `, discount ${ctx.money(l.discountDecimal)} USD`
        : '';
      expect(text).toContain(
        `${l.quantity} × ${l.sku} at ${ctx.money(l.unitPriceDecimal)} USD${discount}, total ${ctx.money(l.lineTotalDecimal)} USD`,
      );
    }
    expect(await card.getByTestId('budget-shortfall').count()).toBe(0);

    const short = page.getByTestId('pending-approval').filter({ hasText: String(v2.json.order_id) });
    const sentence = short.getByTestId('budget-shortfall');
    await sentence.waitFor();
    expect(await sentence.textContent()).toBe(
      `The budget does not cover the catalog cost: ${neededText} USD needed, 12.34 USD allocated.`,
    );
    expect(await sentence.isVisible()).toBe(true);
    await page.context().close();
  });

  it("opens a UCP checkout's escalation link (continue_url) on its approval card, then says it is decided; an unknown order is not found", async () => {
    const spiffeId = ctx.platformSpiffe('ucp-link');
    await setApprovalPolicy(ctx.sys, await ctx.sys.token(['spend:admin'], 'finance'), spiffeId, {
      budget: '100000.00',
      approvalAbove: '0.01',
    });
    const profileUrl = ctx.profiles.set(
      '/console-link/profile.json',
      platformProfile({ capabilities: ['checkout'] }),
    );
    const { key } = await issueKey(ctx.sys, { spiffeId, ucpProfile: profileUrl });
    const ucp = (path: string, body: unknown) =>
      ucpCall(ctx.sys.url, { key, profileUrl }, 'POST', path, body);
    const created = await ucp('/checkout-sessions', {
      line_items: [{ item: { id: 'SKU-ABC-000001' }, quantity: 1 }],
    });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    const held = await ucp(`/checkout-sessions/${created.body.id}/complete`, {
      payment: purchaseOrderPayment('PO-CONSOLE-LINK'),
    });
    expect(held.body.status).toBe('requires_escalation');
    // The link as the platform hands it to its buyer; its origin is PUBLIC_BASE_URL's, the test's is sys.url.
    const link = new URL(String(held.body.continue_url));
    expect(link.pathname).toBe('/console/approvals');
    const orderId = link.searchParams.get('order') ?? '';
    expect(orderId).toMatch(/^ord_[0-9a-f]{32}$/);

    const page = await ctx.newPage();
    await page.goto(`${ctx.sys.url}${link.pathname}${link.search}`);
    await page.getByRole('button', { name: 'Sign in with a development token' }).click();
    await page.getByRole('heading', { name: 'Approvals', level: 1 }).waitFor();
    const status = page.getByTestId('linked-order');
    await expect
      .poll(() => status.textContent())
      .toBe(`Order ${orderId} waits for a decision: its card is marked below.`);
    const card = page.locator('[data-testid="pending-approval"][aria-current="true"]');
    expect(await card.count()).toBe(1);
    expect(await card.textContent()).toContain(orderId);
    expect(await card.isVisible()).toBe(true);
    expect(await card.evaluate((el) => el.classList.contains('linked'))).toBe(true);

    // Decided from that card: the page then says plainly that it waits for nothing.
    await card.getByRole('button', { name: `Approve ${orderId}` }).click();
    await expect
      .poll(() => status.textContent())
      .toBe(`Order ${orderId} waits for no decision: it is already approved.`);
    expect(await page.locator('[data-testid="pending-approval"][aria-current="true"]').count()).toBe(0);
    await page.context().close();

    // Opened later, the same link says so at once; an order that does not exist is not found.
    const later = await ctx.newPage();
    await later.goto(`${ctx.sys.url}${link.pathname}${link.search}`);
    await later.getByRole('button', { name: 'Sign in with a development token' }).click();
    await expect
      .poll(() => later.getByTestId('linked-order').textContent())
      .toBe(`Order ${orderId} waits for no decision: it is already approved.`);
    const unknown = `ord_${'0'.repeat(32)}`;
    await later.goto(`${ctx.sys.url}/console/approvals?order=${unknown}`);
    await expect
      .poll(() => later.getByTestId('linked-order').textContent())
      .toBe(`Order ${unknown} was not found.`);
    await later.context().close();
  });
}

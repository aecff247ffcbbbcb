/**
 * The console's checkout (ACP) parts in Chromium, against the embedded system serving the real
 * build, as operator-pages.test.ts does: checkout API keys on the Agents page (issued, shown once,
 * used, given a webhook, revoked), the Checkout page's sessions, a checkout order's lines on the
 * Orders page and on its approval card, and a /v2 order whose budget does not cover the catalog.
 * What the page shows is checked against the API.
 */
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startEmbedded, type TestSystem } from '../../harness/system.ts';
import {
  type ProfileServer,
  platformProfile,
  purchaseOrderPayment,
  startProfileServer,
  ucpCall,
} from '../../harness/ucp-platform.ts';
import { acp, expectError, expectSession, issueKey } from '../acp/support/acp.ts';
import { freshAgent, post, validOrder } from '../procurement/support/agent.ts';
import { setApprovalPolicy } from '../procurement/support/spend.ts';
import { consoleCopy, launchChromium } from '../support/console.ts';

let sys: TestSystem;
let browser: Browser;
let profiles: ProfileServer;

beforeAll(async () => {
  // A UCP platform's profile is served on loopback (the escalation link test).
  sys = await startEmbedded({ CONSOLE_DIR: consoleCopy(), UCP_PROFILE_ALLOW_INSECURE: 'true' });
  browser = await launchChromium();
  profiles = await startProfileServer();
}, 120_000);
afterAll(async () => {
  await browser?.close();
  await profiles?.close();
  await sys?.close();
});

let platforms = 0;
const platformSpiffe = (name: string) =>
  `spiffe://example.org/ns/ai/sa/procurement-agent/console-${name}-${process.pid}-${++platforms}`;

async function newPage(viewport = { width: 1280, height: 800 }): Promise<Page> {
  const context = await browser.newContext({ viewport, timezoneId: 'Europe/Paris' });
  const page = await context.newPage();
  page.setDefaultTimeout(15_000);
  return page;
}

async function open(page: Page, link: string, token?: string): Promise<void> {
  await page.goto(`${sys.url}/console/`);
  if (token) {
    await page.getByLabel('Operator bearer token').fill(token);
    await page.getByRole('button', { name: 'Sign in', exact: true }).click();
  } else {
    await page.getByRole('button', { name: 'Sign in with a development token' }).click();
  }
  await page.getByRole('heading', { name: 'Agents', level: 1 }).waitFor();
  if (link === 'Agents') return;
  await page.getByRole('link', { name: link, exact: true }).click();
  await page.getByRole('heading', { name: link, level: 1 }).waitFor();
}

const createSession = (key: string, items: { id: string; quantity: number }[]) =>
  acp(sys.url, key, 'POST', '/checkout_sessions', { currency: 'usd', capabilities: {}, line_items: items });

const complete = (key: string, id: string) =>
  acp(sys.url, key, 'POST', `/checkout_sessions/${id}/complete`, {
    payment_data: { purchase_order_number: `PO-${id}`, payment_terms: 'net_30' },
  });

interface Line {
  sku: string;
  quantity: number;
  unitPriceDecimal: string;
  discountDecimal: string;
  lineTotalDecimal: string;
}

/** The order as the API reads it back: what the page must show. */
async function orderOf(orderId: string): Promise<{ totalDecimal: string; lines: Line[]; agentId: string }> {
  const r = await sys.gql(
    `query($id: ID!) { purchaseOrder(orderId: $id) { agentId totalDecimal
      lines { sku quantity unitPriceDecimal discountDecimal lineTotalDecimal } } }`,
    { token: await sys.token(['orders:read']), variables: { id: orderId } },
  );
  expect(r.errors).toBeUndefined();
  return r.data?.purchaseOrder as { totalDecimal: string; lines: Line[]; agentId: string };
}

/** A checkout order of two lines, placed through ACP by a fresh platform. */
async function checkoutOrder(spiffeId = platformSpiffe('order')) {
  const { key } = await issueKey(sys, { spiffeId });
  const s = expectSession(
    await createSession(key, [
      { id: 'SKU-ABC-000001', quantity: 2 },
      { id: 'SKU-ELC-000004', quantity: 3 },
    ]),
    201,
  );
  const done = expectSession(await complete(key, String(s.id)));
  const orderId = String((done.order as { id: string } | undefined)?.id);
  return { sessionId: String(s.id), status: String(done.status), orderId, ...(await orderOf(orderId)) };
}

const money = (text: string) => {
  const [whole = '', cents = ''] = text.split('.');
  return `${whole.replace(/\B(?=(\d{3})+(?!\d))/g, ',')}.${cents.padEnd(2, '0')}`;
};

describe('checkout (ACP) in the console, in Chromium', { timeout: 90_000 }, () => {
  it('issues a checkout API key shown once, sets its webhook, revokes it after a confirmation', async () => {
    const spiffeId = platformSpiffe('key');
    const page = await newPage();
    await page.context().grantPermissions(['clipboard-read', 'clipboard-write'], { origin: sys.url });
    await open(page, 'Agents');
    const keys = page.getByRole('region', { name: 'Checkout API keys (ACP and UCP platforms)' });

    // A SPIFFE ID the API refuses: its message on the field, nothing issued.
    await keys.getByLabel('Platform name').fill('Console platform');
    await keys.getByLabel('Acts as SPIFFE ID').fill('spiffe://example.org/ns/ai/sa/procurement-agent-evil');
    await keys.getByLabel('Agent ID of its orders').fill('agent-console-01');
    await keys.getByLabel('UCP profile (URL or origin; optional)').fill('https://Platform.example/');
    await keys.getByRole('button', { name: 'Issue key' }).click();
    const spiffeField = keys.getByLabel('Acts as SPIFFE ID');
    await expect.poll(() => spiffeField.getAttribute('aria-invalid')).toBe('true');
    const describedBy = (await spiffeField.getAttribute('aria-describedby')) ?? '';
    expect(await page.locator(`[id="${describedBy}"]`).textContent()).toMatch(/procurement agent/);

    await spiffeField.fill(spiffeId);
    await keys.getByRole('button', { name: 'Issue key' }).click();
    const shown = page.getByTestId('issued-key');
    await shown.waitFor();
    expect(await shown.textContent()).toMatch(/You will not see it again/);
    const secretField = shown.getByLabel('Secret key of Console platform');
    const secret = await secretField.inputValue();
    expect(secret).toMatch(/^acp_ak_[0-9a-f]{24}_/);
    await shown.getByRole('button', { name: 'Copy' }).click();
    await shown.getByText('Copied to the clipboard.').waitFor();
    expect(await page.evaluate('navigator.clipboard.readText()')).toBe(secret);
    const id = secret.split('_').slice(1, 3).join('_');

    // Listed with what it is bound to, and never its secret.
    const card = page.getByTestId('checkout-key').filter({ hasText: id });
    await card.waitFor();
    const text = (await card.textContent()) ?? '';
    expect(text).toContain('Console platform');
    expect(text).toContain(spiffeId);
    expect(text).toContain('agent-console-01');
    expect(text).toMatch(/orders:create, orders:read, orders:cancel/);
    expect(text).toMatch(/ACTIVE/);
    expect(text).toMatch(/by console-developer/);
    // The UCP profile binding as the API normalised it (an origin, without its slash).
    expect(text).toMatch(/UCP profile\s*https:\/\/platform\.example(?!\/)/);
    expect(text).not.toContain(secret);
    // The key works: the platform opens a session with it.
    expectSession(await createSession(secret, [{ id: 'SKU-ABC-000001', quantity: 1 }]), 201);

    // The webhook: its signing secret shown once.
    await card.getByLabel(`Webhook URL of ${id}`).fill('https://platform.example.com/acp/webhooks');
    await card.getByRole('button', { name: `Set webhook of ${id}` }).click();
    const signing = page.getByTestId('webhook-secret');
    await signing.waitFor();
    expect(await signing.textContent()).toMatch(/You will not see it again/);
    expect(await signing.getByRole('textbox').inputValue()).toMatch(/^whsec_/);
    await card.getByText('https://platform.example.com/acp/webhooks').waitFor();
    // The secret panel goes when the operator says it is stored.
    await signing.getByRole('button', { name: 'I have stored it' }).click();
    await signing.waitFor({ state: 'detached' });

    // Revoke asks twice.
    await card.getByRole('button', { name: `Revoke ${id}` }).click();
    await card.getByRole('button', { name: `Confirm revoke ${id}` }).click();
    await page
      .getByRole('status')
      .filter({ hasText: `Revoked Console platform (${id})` })
      .waitFor();
    await card.getByText('REVOKED', { exact: true }).waitFor();
    const listed = await sys.gql('{ checkoutApiKeys { id revokedAt revokedBy webhook { url secretSet } } }', {
      token: await sys.token(['agents:admin']),
    });
    expect(listed.data?.checkoutApiKeys).toContainEqual({
      id,
      revokedAt: expect.any(String),
      revokedBy: 'console-developer',
      webhook: { url: 'https://platform.example.com/acp/webhooks', secretSet: true },
    });
    // The platform is refused from now on.
    expectError(await createSession(secret, [{ id: 'SKU-ABC-000001', quantity: 1 }]), 401);
    await page.context().close();
  });

  it('lists an open session created through ACP on the Checkout page, and a completed one by its status', async () => {
    const spiffeId = platformSpiffe('sessions');
    const { key, id: keyId } = await issueKey(sys, { spiffeId });
    const openSession = expectSession(
      await createSession(key, [
        { id: 'SKU-ABC-000001', quantity: 2 },
        { id: 'SKU-TOL-000007', quantity: 1 },
      ]),
      201,
    );
    const done = await checkoutOrder();
    const reader = await sys.token(['orders:read']);
    const api = await sys.gql(
      'query($s: [CheckoutSessionStatus!]) { checkoutSessions(statuses: $s) { id totalDecimal } }',
      { token: reader, variables: { s: ['READY_FOR_PAYMENT'] } },
    );
    const total = ((api.data?.checkoutSessions ?? []) as { id: string; totalDecimal: string }[]).find(
      (s) => s.id === openSession.id,
    )?.totalDecimal;
    expect(total).toMatch(/^\d+\.\d{2}$/);

    const page = await newPage();
    await open(page, 'Checkout');
    const table = page.getByTestId('checkout-sessions');
    const row = table.getByRole('row').filter({ hasText: String(openSession.id) });
    await row.waitFor();
    const text = (await row.textContent()) ?? '';
    expect(text).toMatch(/ready for payment/);
    expect(text).toContain(`${money(String(total))} USD`);
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
    const spiffeId = platformSpiffe('carts');
    const { key, id: keyId } = await issueKey(sys, { spiffeId });
    const cart = await acp(sys.url, key, 'POST', '/carts', {
      line_items: [
        { id: 'SKU-ABC-000001', quantity: 2 },
        { id: 'no-such-item', quantity: 1 },
      ],
    });
    expect(cart.status).toBe(201);
    const gone = await acp(sys.url, key, 'POST', '/carts', {
      line_items: [{ id: 'SKU-ABC-000001', quantity: 1 }],
    });
    expect((await acp(sys.url, key, 'POST', `/carts/${gone.body.id}/cancel`)).status).toBe(200);
    // What the API says the page must show.
    const api = await sys.gql('{ carts { id totalDecimal problems } }', {
      token: await sys.token(['orders:read']),
    });
    const listed = (api.data?.carts ?? []) as { id: string; totalDecimal: string; problems: string[] }[];
    const mine = listed.find((c) => c.id === cart.body.id);
    expect(mine?.problems).toEqual(['no-such-item is not in the catalog']);
    expect(listed.some((c) => c.id === gone.body.id)).toBe(false);

    const page = await newPage();
    await open(page, 'Checkout');
    const table = page.getByTestId('carts');
    const row = table.getByRole('row').filter({ hasText: String(cart.body.id) });
    await row.waitFor();
    const text = (await row.textContent()) ?? '';
    expect(text).toContain('ACP');
    expect(text).toContain(`${money(String(mine?.totalDecimal))} USD`);
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

  it("shows a checkout order's lines and total on the Orders page; a /v2 order as one row", async () => {
    const order = await checkoutOrder();
    expect(order.status).toBe('completed');
    const v2agent = freshAgent('console-v2');
    const v2 = await post(sys.url, {
      spiffe: v2agent,
      body: JSON.stringify(validOrder({ sku: 'SKU-ABC-000001' })),
    });
    expect(v2.status).toBe(201);

    const page = await newPage();
    await open(page, 'Orders and audit');
    await page.getByLabel('Agent ID').fill(order.agentId);
    await page.getByRole('button', { name: 'Search' }).click();
    const table = page.getByTestId('orders');
    const row = table.getByRole('row').filter({ hasText: order.orderId }).first();
    await row.waitFor();
    expect(await row.textContent()).toContain('2 lines');
    expect(await row.textContent()).toContain(money(order.totalDecimal));
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
        money(l.unitPriceDecimal),
        money(l.discountDecimal),
        money(l.lineTotalDecimal),
      ]);
    }
    expect(await lines.getByRole('row').filter({ hasText: 'Total (USD)' }).textContent()).toContain(
      money(order.totalDecimal),
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
    const spendAdmin = await sys.token(['spend:admin'], 'finance');
    const spiffeId = platformSpiffe('approval');
    await setApprovalPolicy(sys, spendAdmin, spiffeId, { budget: '100000.00', approvalAbove: '0.01' });
    const order = await checkoutOrder(spiffeId);
    expect(order.status).toBe('pending_approval');

    // A /v2 order of 10 × SKU-ELC-000004 with a budget below its catalog cost.
    const v2agent = freshAgent('console-short');
    await setApprovalPolicy(sys, spendAdmin, v2agent, { approvalAbove: '1.00' });
    const priced = await sys.gql(
      '{ products(skus: ["SKU-ELC-000004"]) { basePrices { currency amountDecimal } } }',
    );
    const unit = (
      (priced.data?.products ?? []) as { basePrices: { currency: string; amountDecimal: string }[] }[]
    )[0]?.basePrices.find((p) => p.currency === 'USD')?.amountDecimal;
    expect(unit).toBeDefined();
    const v2 = await post(sys.url, {
      spiffe: v2agent,
      body: JSON.stringify(validOrder({ sku: 'SKU-ELC-000004', quantity: 10, max_budget_usd: 12.34 })),
    });
    expect(v2.status).toBe(202);
    const [whole = '0', frac = ''] = String(unit).split('.');
    const needed = (BigInt(whole) * 100n + BigInt(frac.padEnd(2, '0'))) * 10n;
    const neededText = money(`${needed / 100n}.${String(needed % 100n).padStart(2, '0')}`);

    const page = await newPage();
    await open(page, 'Approvals');
    const card = page.getByTestId('pending-approval').filter({ hasText: order.orderId });
    await card.waitFor();
    const checkout = card.getByTestId('checkout-order');
    const text = (await checkout.textContent()) ?? '';
    expect(text).toContain(`Checkout order, 2 lines, total ${money(order.totalDecimal)} USD`);
    expect(text).toContain(order.sessionId);
    for (const l of order.lines) {
      const discount = /[1-9]/.test(l.discountDecimal) ? `, discount ${money(l.discountDecimal)} USD` : '';
      expect(text).toContain(
        `${l.quantity} × ${l.sku} at ${money(l.unitPriceDecimal)} USD${discount}, total ${money(l.lineTotalDecimal)} USD`,
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

  it("shows the API's 403 on the Checkout page to a token without orders:read", async () => {
    const page = await newPage();
    await open(page, 'Checkout', await sys.token(['agents:read'], 'no-orders'));
    const denied = page.getByRole('alert').filter({ hasText: 'orders:read' });
    await denied.first().waitFor();
    expect(await denied.first().textContent()).toMatch(/^403 FORBIDDEN/);
    await page.context().close();
  });

  it.each(['Checkout', 'Agents'])('%s with checkout data is usable at phone width', async (link) => {
    await checkoutOrder();
    const page = await newPage({ width: 390, height: 844 });
    await open(page, link);
    await page.waitForLoadState('networkidle');
    expect(await page.getByRole('alert').count()).toBe(0);
    expect(
      await page.evaluate<number>('document.documentElement.scrollWidth - window.innerWidth'),
    ).toBeLessThanOrEqual(0);
    await page.context().close();
  });

  it("opens a UCP checkout's escalation link (continue_url) on its approval card, then says it is decided; an unknown order is not found", async () => {
    const spiffeId = platformSpiffe('ucp-link');
    await setApprovalPolicy(sys, await sys.token(['spend:admin'], 'finance'), spiffeId, {
      budget: '100000.00',
      approvalAbove: '0.01',
    });
    const profileUrl = profiles.set(
      '/console-link/profile.json',
      platformProfile({ capabilities: ['checkout'] }),
    );
    const { key } = await issueKey(sys, { spiffeId, ucpProfile: profileUrl });
    const ucp = (path: string, body: unknown) => ucpCall(sys.url, { key, profileUrl }, 'POST', path, body);
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

    const page = await newPage();
    await page.goto(`${sys.url}${link.pathname}${link.search}`);
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
    const later = await newPage();
    await later.goto(`${sys.url}${link.pathname}${link.search}`);
    await later.getByRole('button', { name: 'Sign in with a development token' }).click();
    await expect
      .poll(() => later.getByTestId('linked-order').textContent())
      .toBe(`Order ${orderId} waits for no decision: it is already approved.`);
    const unknown = `ord_${'0'.repeat(32)}`;
    await later.goto(`${sys.url}/console/approvals?order=${unknown}`);
    await expect
      .poll(() => later.getByTestId('linked-order').textContent())
      .toBe(`Order ${unknown} was not found.`);
    await later.context().close();
  });
});

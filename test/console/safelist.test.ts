/**
 * The operator console with the GraphQL safelist on (issue 14): production runs
 * GRAPHQL_SAFELIST=on, where only the manifest's operations run. Chromium drives the real build
 * against an embedded system in safelist mode; each page must load its data from the API, and
 * an ad-hoc document must still be refused there (so the pages pass because they send
 * registered operations, not because the safelist is off).
 */
import { randomUUID } from 'node:crypto';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startEmbedded, type TestSystem } from '../../harness/system.ts';
import manifest from '../../schemas/operations/manifest.json' with { type: 'json' };
import { acp, expectSession } from '../acp/support/acp.ts';
import { consoleCopy, releaseChromium, workerChromium } from '../support/console.ts';

const AGENT = 'spiffe://example.org/ns/ai/sa/procurement-agent';
const registered = (name: string): string => {
  const op = manifest.operations.find((o) => o.name === name);
  if (!op) throw new Error(`no ${name} in the manifest`);
  return op.body;
};

describe('the operator console under GRAPHQL_SAFELIST=on, in Chromium', { timeout: 90_000 }, () => {
  let sys: TestSystem;
  let browser: Browser;

  beforeAll(async () => {
    const build = consoleCopy();
    sys = await startEmbedded({ CONSOLE_DIR: build, GRAPHQL_SAFELIST: 'on' });
    browser = await workerChromium();
  }, 120_000);
  afterAll(async () => {
    await releaseChromium(browser);
    await sys?.close();
  });

  async function signedIn(): Promise<Page> {
    const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
    const page = await context.newPage();
    page.setDefaultTimeout(15_000);
    // Any GraphQL request the safelist refuses shows up here, whatever the page makes of it.
    const refused: string[] = [];
    page.on('response', async (res) => {
      if (new URL(res.url()).pathname === '/graphql' && res.status() === 400)
        refused.push(await res.text().catch(() => '?'));
    });
    Object.assign(page, { refused });
    await page.goto(`${sys.url}/console/`);
    await page.getByRole('button', { name: 'Sign in with a development token' }).click();
    await page.getByRole('heading', { name: 'Agents', level: 1 }).waitFor();
    return page;
  }
  const refusals = (page: Page): string[] => (page as Page & { refused: string[] }).refused;

  async function order(spiffeId: string, sku: string, status = 201): Promise<string> {
    const res = await fetch(`${sys.url}/api/v2/procurement/orders`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-spiffe-id': spiffeId },
      body: JSON.stringify({ agent_id: 'agent-0000001', sku, quantity: 2, max_budget_usd: 250.75 }),
    });
    expect(res.status).toBe(status);
    return String(((await res.json()) as { order_id: string }).order_id);
  }

  it('really is in safelist mode: an ad-hoc document with operator roles is refused', async () => {
    const token = await sys.token(['promotions:admin', 'spend:admin', 'orders:read']);
    for (const query of ['{ promotions { promotionId } }', 'query Mine { spendPolicies { subject } }']) {
      const res = await sys.gql(query, { token });
      expect(res.status).toBe(400);
      expect(res.errors?.[0]?.extensions?.code).toBe('QUERY_NOT_IN_SAFELIST');
    }
  });

  it('Agents: lists the identities and their spend against budget (SpendPolicies)', async () => {
    const id = `${AGENT}/safelist-${randomUUID().slice(0, 8)}`;
    const set = await sys.gql(registered('SetSpendPolicy'), {
      token: await sys.token(['spend:admin']),
      variables: { input: { subject: id, currency: 'USD', period: 'DAY', budget: '1000.00' } },
    });
    expect(set.errors).toBeUndefined();
    await order(id, 'SKU-ABC-000001');
    const page = await signedIn();
    await page.getByRole('cell', { name: id }).first().waitFor();
    const row = page.getByTestId('spend').getByRole('row').filter({ hasText: id });
    await row.waitFor();
    expect(await row.textContent()).toMatch(/250\.75.*1000\.00 USD.*749\.25/);
    expect(refusals(page)).toEqual([]);
    await page.context().close();
  });

  it('Orders: the search lists orders and filters them, and an order shows its evidence (PurchaseOrderSearch, OrderAuthorization)', async () => {
    const mine = await order(AGENT, 'SKU-ELC-000009');
    const other = await order(AGENT, 'SKU-ABC-000001');
    const page = await signedIn();
    await page.getByRole('link', { name: 'Orders and audit' }).click();
    const table = page.getByTestId('orders');
    await table.getByRole('link', { name: other }).waitFor();
    await page.getByLabel('SKU').fill('SKU-ELC-000009');
    await page.getByRole('button', { name: 'Search' }).click();
    await table.getByRole('link', { name: other }).waitFor({ state: 'detached' });
    await table.getByRole('link', { name: mine }).waitFor();
    // An order's evidence (OrderAuthorization) runs under the safelist too.
    await table.getByRole('link', { name: mine }).click();
    await page
      .getByTestId('order-authorization')
      .getByText(/No AP2 mandate/)
      .waitFor();
    expect(refusals(page)).toEqual([]);
    await page.context().close();
  });

  it('Promotions: lists the rules, previews a draft and saves it (Promotions, PreviewPromotions, UpsertPromotion)', async () => {
    const page = await signedIn();
    await page.getByRole('link', { name: 'Promotions' }).click();
    await page.getByRole('button', { name: 'Edit PROMO-ELEC-3FOR2' }).waitFor();
    await page.getByRole('button', { name: 'Preview' }).click();
    const preview = page.getByTestId('preview');
    await preview.waitFor();
    expect(await preview.textContent()).toMatch(
      /PROMO-DRAFT-1 10% off carts with tools, 3 items or more \(priority 20\): −13\.9/,
    );
    await page.getByRole('button', { name: 'Save rule' }).click();
    await page.getByText(/Saved, revision \d+\./).waitFor();
    // The list reloads through the registered Promotions and now knows the saved rule.
    await page.getByRole('button', { name: 'Edit PROMO-DRAFT-1' }).waitFor();
    expect(refusals(page)).toEqual([]);
    await page.context().close();
  });

  it('Approvals, Spend policies, Webhooks: list, decide, save and register through registered operations only', async () => {
    const id = `${AGENT}/safelist-approval-${randomUUID().slice(0, 8)}`;
    const set = await sys.gql(registered('SetSpendPolicy'), {
      token: await sys.token(['spend:admin']),
      variables: {
        input: { subject: id, currency: 'USD', period: 'DAY', budget: '1000.00', approvalAbove: '100.00' },
      },
    });
    expect(set.errors).toBeUndefined();
    const pending = await order(id, 'SKU-ABC-000001', 202);
    const page = await signedIn();
    await page.getByRole('link', { name: 'Approvals' }).click();
    await page.getByRole('button', { name: `Approve ${pending}` }).click();
    await page
      .getByRole('status')
      .filter({ hasText: `${pending}: APPROVED` })
      .waitFor();
    await page.getByTestId('decisions').getByRole('row').filter({ hasText: pending }).waitFor();

    await page.getByRole('link', { name: 'Spend policies' }).click();
    const row = page.getByTestId('spend-policies').getByRole('row').filter({ hasText: id });
    await row.getByRole('button', { name: `Edit ${id}` }).click();
    await page.getByLabel('Budget per period').fill('1500.00');
    await page.getByRole('button', { name: 'Save policy' }).click();
    await row.filter({ hasText: '1500.00' }).waitFor();

    await page.getByRole('link', { name: 'Webhooks' }).click();
    await page.getByLabel('Endpoint URL').fill('https://erp.example/hooks');
    await page.getByRole('button', { name: 'Register endpoint' }).click();
    await page
      .getByTestId('signing-secret')
      .getByText(/whsec_/)
      .waitFor();
    await page.getByRole('button', { name: 'Deliveries of https://erp.example/hooks' }).click();
    await page.getByTestId('webhook-deliveries').getByText('No delivery.').waitFor();
    expect(refusals(page)).toEqual([]);
    await page.context().close();
  });

  it('Checkout API keys and Checkout: issue a key, set its webhook, list its session, revoke it (CheckoutApiKeys, IssueCheckoutApiKey, SetCheckoutWebhook, RevokeCheckoutApiKey, CheckoutSessions)', async () => {
    const spiffeId = `${AGENT}/safelist-acp-${randomUUID().slice(0, 8)}`;
    const page = await signedIn();
    const keys = page.getByRole('region', { name: 'Checkout API keys (ACP and UCP platforms)' });
    await keys.getByLabel('Platform name').fill('Safelist platform');
    await keys.getByLabel('Acts as SPIFFE ID').fill(spiffeId);
    await keys.getByLabel('Agent ID of its orders').fill('agent-safelist-01');
    await keys.getByRole('button', { name: 'Issue key' }).click();
    const secret = await page.getByTestId('issued-key').getByRole('textbox').inputValue();
    const id = secret.split('_').slice(1, 3).join('_');
    const card = page.getByTestId('checkout-key').filter({ hasText: id });
    await card.getByLabel(`Webhook URL of ${id}`).fill('https://platform.example.com/acp/webhooks');
    await card.getByRole('button', { name: `Set webhook of ${id}` }).click();
    await page.getByTestId('webhook-secret').getByRole('textbox').waitFor();

    const session = expectSession(
      await acp(sys.url, secret, 'POST', '/checkout_sessions', {
        currency: 'usd',
        capabilities: {},
        line_items: [{ id: 'SKU-ABC-000001', quantity: 1 }],
      }),
      201,
    );
    await page.getByRole('link', { name: 'Checkout', exact: true }).click();
    await page
      .getByTestId('checkout-sessions')
      .getByRole('row')
      .filter({ hasText: String(session.id) })
      .waitFor();

    await page.getByRole('link', { name: 'Agents', exact: true }).click();
    await card.getByRole('button', { name: `Revoke ${id}` }).click();
    await card.getByRole('button', { name: `Confirm revoke ${id}` }).click();
    await card.getByText('REVOKED', { exact: true }).waitFor();
    expect(refusals(page)).toEqual([]);
    await page.context().close();
  });
});

describe('the console sends only registered operations', () => {
  const src = fileURLToPath(new URL('../../console/src/', import.meta.url));
  const files = (dir: string): string[] =>
    readdirSync(dir).flatMap((e) => {
      const p = join(dir, e);
      return statSync(p).isDirectory() ? files(p) : /\.tsx?$/.test(e) ? [p] : [];
    });

  it('holds no GraphQL document of its own outside the explorer', () => {
    // A document written in the console would bypass the manifest and fail under the safelist.
    const written = files(src)
      .filter((f) => !f.includes('/explorer/') && !f.endsWith('/pages/explorer.tsx'))
      .filter((f) => /[`'"]\s*(query|mutation|subscription)\b[\s\w$(]*[({]/.test(readFileSync(f, 'utf8')));
    expect(written).toEqual([]);
  });
});

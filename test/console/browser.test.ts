/**
 * The operator console in a real browser (issue 14): Chromium, driven by playwright-core,
 * against the embedded system serving the console's real build. Every check reads what the page
 * shows; what the page may do is decided by the API with the token the page holds.
 */
import { randomUUID } from 'node:crypto';
import { readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startEmbedded, type TestSystem } from '../../harness/system.ts';
import { consoleCopy, releaseChromium, sidewaysScroll, workerChromium } from '../support/console.ts';

const AGENT = 'spiffe://example.org/ns/ai/sa/procurement-agent';
const order = (over: Record<string, unknown> = {}) =>
  JSON.stringify({
    agent_id: 'agent-0000001',
    sku: 'SKU-ABC-000001',
    quantity: 2,
    max_budget_usd: 250.75,
    ...over,
  });

let sys: TestSystem;
let browser: Browser;
let build: string;

beforeAll(async () => {
  build = consoleCopy();
  sys = await startEmbedded({ CONSOLE_DIR: build });
  browser = await workerChromium();
}, 120_000);
afterAll(async () => {
  await releaseChromium(browser);
  await sys?.close();
});

async function agentCall(spiffeId: string, body: string) {
  const res = await fetch(`${sys.url}/api/v2/procurement/orders`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-spiffe-id': spiffeId },
    body,
  });
  return { status: res.status, json: (await res.json()) as Record<string, unknown> };
}

async function newPage(): Promise<Page> {
  const context = await browser.newContext({
    viewport: { width: 1280, height: 800 },
    timezoneId: 'Europe/Paris',
  });
  const page = await context.newPage();
  page.setDefaultTimeout(15_000);
  return page;
}

async function signInWithDevToken(page: Page): Promise<void> {
  await page.goto(`${sys.url}/console/`);
  await page.getByRole('button', { name: 'Sign in with a development token' }).click();
  await page.getByRole('heading', { name: 'Agents', level: 1 }).waitFor();
}

describe('the operator console in Chromium', { timeout: 90_000 }, () => {
  it('signs in with the development token and keeps it in this tab only', async () => {
    const page = await newPage();
    const errors: string[] = [];
    page.on('console', (m) => m.type() === 'error' && errors.push(m.text()));
    await signInWithDevToken(page);
    // Page-side expressions as strings: this file is type-checked without the DOM library.
    expect(await page.evaluate('Object.keys(sessionStorage)')).toContain('agent-commerce.console.token');
    expect(await page.evaluate('Object.keys(localStorage)')).toEqual([]);
    expect(await page.getByText('console-developer').count()).toBe(1);
    // The CSP lets the built console run: no violation was reported.
    expect(errors.filter((e) => /Content Security Policy/i.test(e))).toEqual([]);
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByRole('heading', { name: 'Sign in' }).waitFor();
    await page.context().close();
  });

  it('shows an agent as blocked after six bad calls, with the reason and time left', async () => {
    const id = `${AGENT}/console-${randomUUID().slice(0, 8)}`;
    for (let i = 0; i < 6; i++) expect((await agentCall(id, order({ quantity: 0 }))).status).toBe(422);
    expect((await agentCall(id, order())).status).toBe(429);
    const page = await newPage();
    await signInWithDevToken(page);
    const card = page.getByTestId('blocked-agent').filter({ hasText: id });
    await card.waitFor();
    expect(await card.textContent()).toMatch(/left/);
    await card.getByRole('button', { name: 'Unblock' }).click();
    await page.getByText('Unblocked.').waitFor();
    await card.waitFor({ state: 'detached' });
    expect((await agentCall(id, order())).status).toBe(201);
    await page.context().close();
  });

  it('leaves a denied unblock to the API: a reader gets its 403 in the page and the agent stays blocked', async () => {
    const id = `${AGENT}/console-denied-${randomUUID().slice(0, 8)}`;
    for (let i = 0; i < 6; i++) await agentCall(id, order({ quantity: 0 }));
    const page = await newPage();
    await page.goto(`${sys.url}/console/`);
    await page.getByLabel('Operator bearer token').fill(await sys.token(['agents:read'], 'reader'));
    await page.getByRole('button', { name: 'Sign in', exact: true }).click();
    const card = page.getByTestId('blocked-agent').filter({ hasText: id });
    // The page offers the action to everyone: only the API decides.
    await card.getByRole('button', { name: 'Unblock' }).click();
    // The unblock's REST problem (the checkout API keys below answer this token FORBIDDEN too).
    const denied = page
      .getByRole('alert')
      .filter({ hasText: 'agents:admin' })
      .filter({ hasNotText: 'FORBIDDEN' });
    await denied.waitFor();
    expect(await denied.textContent()).toMatch(/^403 /);
    expect((await agentCall(id, order())).status).toBe(429);
    await page.context().close();
  });

  it('shows spend against budget when the API has spend policies, and says so when it has none', async () => {
    const probe = await sys.gql('{ spendPolicies(first: 1) { subject } }', {
      token: await sys.token(['spend:read']),
    });
    const page = await newPage();
    if (probe.errors?.[0]?.extensions?.code === 'GRAPHQL_VALIDATION_FAILED') {
      // This build's schema has no spend policies (they come with issue 13's branch).
      await signInWithDevToken(page);
      await page.getByText('This gateway has no spend policies').waitFor();
    } else {
      const id = `${AGENT}/console-spend-${randomUUID().slice(0, 8)}`;
      const set = await sys.gql('mutation($i: SpendPolicyInput!) { setSpendPolicy(input: $i) { subject } }', {
        token: await sys.token(['spend:admin']),
        variables: { i: { subject: id, currency: 'USD', period: 'DAY', budget: '1000.00' } },
      });
      expect(set.errors).toBeUndefined();
      expect((await agentCall(id, order())).status).toBe(201);
      await signInWithDevToken(page);
      const row = page.getByTestId('spend').getByRole('row').filter({ hasText: id });
      await row.waitFor();
      expect(await row.textContent()).toMatch(/250\.75.*1000\.00 USD.*749\.25/);
    }
    await page.context().close();
  });

  it('previews a draft promotion against a basket: discounts and the reasons others did not apply', async () => {
    const page = await newPage();
    await signInWithDevToken(page);
    await page.getByRole('link', { name: 'Promotions' }).click();
    await page.getByRole('heading', { name: 'Rules' }).waitFor();
    await page.getByRole('button', { name: 'Edit PROMO-ELEC-3FOR2' }).waitFor();
    await page.getByRole('button', { name: 'Preview' }).click();
    const preview = page.getByTestId('preview');
    await preview.waitFor();
    const text = (await preview.textContent()) ?? '';
    expect(text).toContain('PROMO-DRAFT-1');
    expect(text).toMatch(/Not applied, and why/);
    // The draft (priority 20, before the seeded rules) takes 10 % of 2 × 19.99 + 2 × 49.50 = 13.90.
    expect(text).toMatch(/PROMO-DRAFT-1 10% off carts with tools, 3 items or more \(priority 20\): −13\.9/);
    // Nothing was saved: the rule list does not know the draft.
    expect(await page.getByRole('button', { name: 'Edit PROMO-DRAFT-1' }).count()).toBe(0);

    // A draft the API refuses shows the API's violations.
    const editor = page.getByLabel('Draft rule (format 2.1)');
    await editor.fill(JSON.stringify({ version: '2.1', promotion_id: 'BAD', name: 'x', priority: 'high' }));
    await page.getByRole('button', { name: 'Preview' }).click();
    await page.getByText('The API refuses this rule').waitFor();
    expect(await page.getByTestId('preview').textContent()).toMatch(/\/priority/);
    await page.context().close();
  });

  it('runs an operation in GraphiQL with the operator token and shows the answer', async () => {
    const page = await newPage();
    const errors: string[] = [];
    page.on('console', (m) => m.type() === 'error' && errors.push(m.text()));
    const scripts: string[] = [];
    page.on('request', (r) => r.resourceType() === 'script' && scripts.push(r.url()));
    await signInWithDevToken(page);
    // GraphiQL is not part of the first page: no script of it was loaded yet.
    const before = scripts.length;
    await page.getByRole('link', { name: 'GraphQL explorer' }).click();
    await page.locator('.graphiql-container').waitFor();
    expect(scripts.length).toBeGreaterThan(before);
    // The first tab is the repository's Promotions operation, which needs promotions:read: its
    // answer lists the seeded rules only when the page sent the operator's token.
    await page.locator('.graphiql-query-editor').getByText('query Promotions').waitFor();
    // GraphiQL's run ignores a click until its response editor is in its context (@graphiql/react's
    // ExecutionContext returns when it is not set yet), which a loaded machine can delay past the
    // query editor's text (CI timed out here once): click again only while a click sent no
    // Promotions operation, so a first answer that was wrong is never replaced by a second one.
    const result = page.locator('.graphiql-response');
    await result.locator('.CodeMirror').waitFor();
    let sent = false;
    for (let click = 1; click <= 3 && !sent; click++) {
      const request = page.waitForRequest(
        (r) =>
          r.method() === 'POST' &&
          r.url().endsWith('/graphql') &&
          /query Promotions/.test(r.postData() ?? ''),
        { timeout: 5_000 },
      );
      await page.getByRole('button', { name: /Execute query/ }).click();
      sent = await request.then(
        () => true,
        () => false,
      );
    }
    expect(sent).toBe(true);
    await result.getByText('PROMO-ELEC-3FOR2').first().waitFor({ timeout: 30_000 });
    expect(await result.textContent()).not.toMatch(/FORBIDDEN|UNAUTHENTICATED/);
    // The CSP lets GraphiQL run (its local stylesheet, fonts and editor): no violation.
    expect(errors.filter((e) => /Content Security Policy/i.test(e))).toEqual([]);
    await page.context().close();
  });

  it("opens an order's audit trail and shows the chain's verification", async () => {
    const placed = await agentCall(AGENT, order({ quantity: 3 }));
    expect(placed.status).toBe(201);
    const orderId = String(placed.json.order_id);
    const page = await newPage();
    await signInWithDevToken(page);
    await page.getByRole('link', { name: 'Orders and audit' }).click();
    await page.getByTestId('audit-verify').getByText('The chain verifies').waitFor();
    await page.getByRole('link', { name: orderId }).click();
    const trail = page.getByTestId('audit-trail');
    await trail.getByRole('cell', { name: /POST \/api\/v2\/procurement\/orders/ }).waitFor();
    expect(await trail.getByRole('cell', { name: '201' }).count()).toBeGreaterThan(0);
    expect(page.url()).toContain(`/console/orders?order=${orderId}`);
    // A reload opens the same page (the gateway's single-page fallback).
    await page.reload();
    await page.getByTestId('audit-trail').getByRole('cell', { name: '201' }).first().waitFor();
    await page.context().close();
  });

  it('searches orders by SKU through the API: only that SKU’s orders come back', async () => {
    const mine = await agentCall(AGENT, order({ sku: 'SKU-ELC-000009', quantity: 1 }));
    const other = await agentCall(AGENT, order({ sku: 'SKU-ABC-000001', quantity: 1 }));
    expect([mine.status, other.status]).toEqual([201, 201]);
    const page = await newPage();
    await signInWithDevToken(page);
    await page.getByRole('link', { name: 'Orders and audit' }).click();
    const table = page.getByTestId('orders');
    // Unfiltered, the newest orders of both SKUs are listed.
    await table.getByRole('link', { name: String(other.json.order_id) }).waitFor();
    await page.getByLabel('SKU').fill('SKU-ELC-000009');
    await page.getByRole('button', { name: 'Search' }).click();
    await table.getByRole('link', { name: String(other.json.order_id) }).waitFor({ state: 'detached' });
    await table.getByRole('link', { name: String(mine.json.order_id) }).waitFor();
    const skus = await table.locator('tbody tr td:nth-child(4)').allTextContents();
    expect(skus.length).toBeGreaterThan(0);
    expect(new Set(skus)).toEqual(new Set(['SKU-ELC-000009']));
    await page.context().close();
  });

  it("shows the API's 403 to a token without the operator roles", async () => {
    const token = await sys.token(['promotions:redeem'], 'no-operator');
    const page = await newPage();
    await page.goto(`${sys.url}/console/`);
    await page.getByLabel('Operator bearer token').fill(token);
    await page.getByRole('button', { name: 'Sign in', exact: true }).click();
    const agentsDenied = page.getByRole('alert').filter({ hasText: 'agents:read' });
    await agentsDenied.waitFor();
    expect(await agentsDenied.textContent()).toMatch(/^403 /);
    await page.getByRole('link', { name: 'Orders and audit' }).click();
    const ordersDenied = page.getByRole('alert').filter({ hasText: 'FORBIDDEN' });
    await ordersDenied.first().waitFor();
    // The page shows the API's own words: the GraphQL error message names the missing role.
    expect(await ordersDenied.first().textContent()).toMatch(/orders:read/);
    await page.context().close();
  });

  it('is usable at phone width: the navigation wraps and the page does not scroll sideways', async () => {
    const context = await browser.newContext({ viewport: { width: 390, height: 844 }, isMobile: true });
    const page = await context.newPage();
    await page.goto(`${sys.url}/console/`);
    await page.getByRole('button', { name: 'Sign in with a development token' }).click();
    await page.getByRole('heading', { name: 'Agents', level: 1 }).waitFor();
    expect(await sidewaysScroll(page)).toBeLessThanOrEqual(0);
    await context.close();
  });

  it('can be driven from the keyboard: Tab reaches the navigation and Enter opens a page', async () => {
    const page = await newPage();
    await signInWithDevToken(page);
    // From where the sign-in form was: through the Agents page's controls (its checkout API key
    // form among them), round to the skip link and the navigation.
    for (let i = 0; i < 40; i++) {
      await page.keyboard.press('Tab');
      if ((await page.evaluate<string | undefined>('document.activeElement?.textContent')) === 'Prices')
        break;
    }
    await page.keyboard.press('Enter');
    await page.getByRole('heading', { name: 'Prices', level: 1 }).waitFor();
    await page.getByRole('button', { name: 'Calculate' }).press('Enter');
    await page.getByTestId('price').getByText('SCARCITY_SURCHARGE_15').waitFor();
    await page.context().close();
  });
});

describe('the first page stays small', () => {
  it('loads under 300 kB gzipped: index.html and every script and stylesheet it references', () => {
    const html = readFileSync(join(build, 'index.html'), 'utf8');
    const refs = [...html.matchAll(/(?:src|href)="\/console\/([^"]+)"/g)].map((m) => m[1] as string);
    expect(refs.some((r) => r.endsWith('.js'))).toBe(true);
    let total = gzipSync(html).length;
    for (const ref of refs) {
      const file = join(build, ref);
      expect(statSync(file).isFile()).toBe(true);
      total += gzipSync(readFileSync(file)).length;
    }
    expect(total).toBeLessThan(300 * 1024);
  });
});

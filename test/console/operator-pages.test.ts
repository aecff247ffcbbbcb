/**
 * The console's Approvals, Spend policies and Webhooks pages (issue 22) in Chromium, against the
 * embedded system serving the console's real build, with the same habits as browser.test.ts:
 * what the page shows is checked against the API, the API decides what a token may do (its 403
 * is shown in the page), the pages work from the keyboard and at phone width.
 */
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startEmbedded, type TestSystem } from '../../harness/system.ts';
import { freshAgent, post, validOrder } from '../procurement/support/agent.ts';
import { setApprovalPolicy } from '../procurement/support/spend.ts';
import {
  consoleCopy,
  openConsolePage,
  releaseChromium,
  sidewaysScroll,
  workerChromium,
} from '../support/console.ts';
import { type Receiver, startReceiver, waitFor } from '../webhooks/support.ts';

let sys: TestSystem;
let browser: Browser;
let receiver: Receiver;
let spendAdmin: string;

beforeAll(async () => {
  sys = await startEmbedded({
    CONSOLE_DIR: consoleCopy(),
    WEBHOOK_ALLOW_PRIVATE_URLS: 'true',
    WEBHOOK_POLL_INTERVAL_MS: '100',
    WEBHOOK_RETRY_BASE_MS: '20',
  });
  browser = await workerChromium();
  receiver = await startReceiver([200]);
  spendAdmin = await sys.token(['spend:admin'], 'finance');
}, 120_000);
afterAll(async () => {
  await releaseChromium(browser);
  await receiver?.close();
  await sys?.close();
});

const policy = (subject: string, over: Record<string, unknown> = {}) =>
  setApprovalPolicy(sys, spendAdmin, subject, over);

const order = (spiffe: string, amount: number, sku = 'SKU-ABC-000001') =>
  post(sys.url, { spiffe, body: JSON.stringify(validOrder({ max_budget_usd: amount, sku })) });

async function spend(spiffe: string): Promise<{ spent: string; remaining: string }> {
  const res = await fetch(`${sys.url}/api/v2/procurement/spend`, { headers: { 'x-spiffe-id': spiffe } });
  return ((await res.json()) as { current_period: { spent: string; remaining: string } }).current_period;
}

async function orderStatus(orderId: string): Promise<string> {
  const r = await sys.gql('query($id: ID!) { purchaseOrder(orderId: $id) { status } }', {
    token: await sys.token(['orders:read']),
    variables: { id: orderId },
  });
  return String((r.data?.purchaseOrder as { status?: string } | undefined)?.status);
}

async function newPage(viewport = { width: 1280, height: 800 }): Promise<Page> {
  const context = await browser.newContext({ viewport, timezoneId: 'Europe/Paris' });
  const page = await context.newPage();
  page.setDefaultTimeout(15_000);
  return page;
}

const open = (page: Page, link: string, token?: string) => openConsolePage(page, sys.url, link, token);

describe('the Approvals, Spend policies and Webhooks pages in Chromium', { timeout: 90_000 }, () => {
  it('shows a pending order with its agent, spend and catalog price; approves it from the keyboard, rejects another with a required reason', async () => {
    const agent = freshAgent('console-approval');
    await policy(agent);
    const first = await order(agent, 250.75);
    const second = await order(agent, 120.5, 'SKU-ELC-000001');
    expect([first.status, second.status]).toEqual([202, 202]);
    const [toReject, toApprove] = [String(first.json.order_id), String(second.json.order_id)];

    const page = await newPage();
    await open(page, 'Approvals');
    const card = page.getByTestId('pending-approval').filter({ hasText: toReject });
    await card.waitFor();
    const text = (await card.textContent()) ?? '';
    expect(text).toContain(agent);
    expect(text).toContain('250.75 USD');
    // Both pending amounts are reserved: 1000.00 − 250.75 − 120.50.
    expect(text).toMatch(/628\.75 of 1000\.00 USD left this day/);
    expect(text).toMatch(/at \d+\.\d{2} USD each \(catalog\)/);
    expect(text).toMatch(/0 of 1 approvals/);

    // Reject without a reason: the API refuses it, and the page shows its words on the field.
    await card.getByRole('button', { name: `Reject ${toReject}` }).click();
    await card.getByRole('alert').filter({ hasText: 'BAD_USER_INPUT' }).waitFor();
    const field = card.getByLabel(`Reason or note for ${toReject}`);
    expect(await field.getAttribute('aria-invalid')).toBe('true');
    const describedBy = (await field.getAttribute('aria-describedby')) ?? '';
    expect(await page.locator(`[id="${describedBy}"]`).textContent()).toMatch(/reason must say why/);
    expect(await orderStatus(toReject)).toBe('PENDING_APPROVAL');

    // Approve from the keyboard: focus the note, type, Enter submits the card's Approve.
    await page.getByLabel(`Reason or note for ${toApprove}`).focus();
    await page.keyboard.type('within the quarter plan');
    await page.keyboard.press('Enter');
    await page
      .getByRole('status')
      .filter({ hasText: `${toApprove}: APPROVED` })
      .waitFor();
    expect(await orderStatus(toApprove)).toBe('APPROVED');

    await card.getByLabel(`Reason or note for ${toReject}`).fill('not on the approved supplier list');
    await card.getByRole('button', { name: `Reject ${toReject}` }).click();
    await page
      .getByRole('status')
      .filter({ hasText: `${toReject}: REJECTED` })
      .waitFor();
    await card.waitFor({ state: 'detached' });
    expect(await orderStatus(toReject)).toBe('REJECTED');
    // The rejected amount is back; the approved one stays spent.
    expect(await spend(agent)).toMatchObject({ spent: '120.50', remaining: '879.50' });

    const decisions = page.getByTestId('decisions');
    const rejected = decisions.getByRole('row').filter({ hasText: toReject });
    await rejected.waitFor();
    expect(await rejected.textContent()).toMatch(
      /REJECTED.*console-developer.*not on the approved supplier list/,
    );
    expect(await decisions.getByRole('row').filter({ hasText: toApprove }).textContent()).toMatch(
      /APPROVED.*console-developer.*within the quarter plan/,
    );
    await page.context().close();
  });

  it("creates, edits and deletes a spend policy, showing the API's violations on their fields", async () => {
    const subject = freshAgent('console-policy');
    const page = await newPage();
    await open(page, 'Spend policies');
    await page.getByLabel('Subject (SPIFFE ID or prefix)').fill(subject);
    await page.getByLabel('Budget per period').fill('12.345');
    await page.getByLabel('Approval above', { exact: true }).fill('abc');
    await page.getByRole('button', { name: 'Save policy' }).click();
    await page.getByRole('alert').filter({ hasText: 'see the fields marked' }).waitFor();
    const budget = page.getByLabel('Budget per period');
    expect(await budget.getAttribute('aria-invalid')).toBe('true');
    // The message under the field is the API's own (BAD_USER_INPUT extensions.errors).
    const describedBy = (await budget.getAttribute('aria-describedby')) ?? '';
    expect(await page.locator(`#${describedBy}`).textContent()).toMatch(
      /decimal string with at most 2 decimals/,
    );
    expect(await page.getByLabel('Approval above', { exact: true }).getAttribute('aria-invalid')).toBe(
      'true',
    );
    expect(await page.getByLabel('Subject (SPIFFE ID or prefix)').getAttribute('aria-invalid')).toBe('false');

    await budget.fill('500.00');
    await page.getByLabel('Approval above', { exact: true }).fill('50.00');
    await page.getByRole('button', { name: 'Save policy' }).click();
    await page
      .getByRole('status')
      .filter({ hasText: `Saved the policy of ${subject}` })
      .waitFor();
    const row = page.getByTestId('spend-policies').getByRole('row').filter({ hasText: subject });
    await row.waitFor();
    expect(await row.textContent()).toMatch(/0\.00 \/ 500\.00 USD.*50\.00/);
    // The API holds what the page shows: an order of 75.00 waits for approval.
    expect((await order(subject, 75)).status).toBe(202);

    await row.getByRole('button', { name: `Edit ${subject}` }).click();
    expect(await page.getByLabel('Budget per period').inputValue()).toBe('500.00');
    await page.getByLabel('Budget per period').fill('600.00');
    await page.getByRole('button', { name: 'Save policy' }).click();
    await row.filter({ hasText: '600.00' }).waitFor();
    expect(await row.textContent()).toMatch(/75\.00 \/ 600\.00 USD/);

    await row.getByRole('button', { name: `Delete ${subject}` }).click();
    await row.getByRole('button', { name: `Confirm delete ${subject}` }).click();
    await page
      .getByRole('status')
      .filter({ hasText: `Deleted the policy of ${subject}` })
      .waitFor();
    await row.waitFor({ state: 'detached' });
    const left = await sys.gql('query($s: ID!) { spendPolicy(subject: $s) { subject } }', {
      token: spendAdmin,
      variables: { s: subject },
    });
    expect(left.data?.spendPolicy).toBeNull();
    await page.context().close();
  });

  it('registers an endpoint, lists its deliveries, replays one, rotates the secret and disables it', async () => {
    const page = await newPage();
    await open(page, 'Webhooks');
    await page.getByLabel('Endpoint URL').fill(receiver.url);
    await page.getByLabel('Description', { exact: true }).fill('ERP intake');
    await page.getByRole('button', { name: 'Register endpoint' }).click();
    const secret = page.getByTestId('signing-secret');
    await secret.waitFor();
    const first = ((await secret.textContent()) ?? '').match(/whsec_[A-Za-z0-9+/=]+/)?.[0];
    expect(first).toBeDefined();

    const placed = await order(freshAgent('console-webhook'), 40);
    expect(placed.status).toBe(201);
    await waitFor('the OrderPlaced delivery', () =>
      receiver.received.find((r) => r.body.includes(String(placed.json.order_id))),
    );
    const hook = receiver.received.find((r) => r.body.includes(String(placed.json.order_id)));
    const eventId = String(hook?.headers['webhook-id']);

    const card = page
      .getByTestId('webhook-endpoints')
      .getByRole('listitem')
      .filter({ hasText: receiver.url });
    await card.getByRole('button', { name: `Deliveries of ${receiver.url}` }).click();
    const deliveries = page.getByTestId('webhook-deliveries');
    const row = deliveries.getByRole('row').filter({ hasText: eventId });
    await row.waitFor();
    expect(await row.textContent()).toMatch(/OrderPlaced.*DELIVERED.*1.*200/);
    const before = receiver.received.filter((r) => r.headers['webhook-id'] === eventId).length;
    await row.getByRole('button', { name: /^Replay / }).click();
    await deliveries.getByRole('status').filter({ hasText: 'Replaying' }).waitFor();
    await waitFor(
      'the replayed delivery',
      () => receiver.received.filter((r) => r.headers['webhook-id'] === eventId).length > before,
    );

    await card.getByRole('button', { name: `Rotate secret of ${receiver.url}` }).click();
    await page
      .getByRole('status')
      .filter({ hasText: `New signing secret for ${receiver.url}` })
      .waitFor();
    const second = ((await page.getByTestId('signing-secret').textContent()) ?? '').match(
      /whsec_[A-Za-z0-9+/=]+/,
    )?.[0];
    expect(second).toBeDefined();
    expect(second).not.toBe(first);

    await card.getByRole('button', { name: `Disable ${receiver.url}` }).click();
    await card.getByRole('button', { name: `Confirm disable ${receiver.url}` }).click();
    await card.getByText('DISABLED', { exact: true }).waitFor();
    const listed = await sys.gql('{ webhookEndpoints { url status } }', {
      token: await sys.token(['webhooks:admin']),
    });
    expect(listed.data?.webhookEndpoints).toContainEqual({ url: receiver.url, status: 'DISABLED' });
    await page.context().close();
  });

  it.each([
    { link: 'Approvals', roles: ['orders:read'], role: 'orders:approve' },
    { link: 'Webhooks', roles: ['orders:read'], role: 'webhooks:admin' },
    { link: 'Spend policies', roles: ['orders:read'], role: 'spend:' },
  ])("shows the API's 403 on $link to a token without $role", async ({ link, roles, role }) => {
    const page = await newPage();
    await open(page, link, await sys.token(roles, 'no-role'));
    const denied = page.getByRole('alert').filter({ hasText: role });
    await denied.first().waitFor();
    expect(await denied.first().textContent()).toMatch(/^403 FORBIDDEN/);
    await page.context().close();
  });

  it('refuses a save to a reader of spend policies with the API’s 403, and changes nothing', async () => {
    const subject = freshAgent('console-reader');
    const page = await newPage();
    await open(page, 'Spend policies', await sys.token(['spend:read'], 'auditor'));
    await page.getByLabel('Subject (SPIFFE ID or prefix)').fill(subject);
    await page.getByLabel('Budget per period').fill('100.00');
    await page.getByRole('button', { name: 'Save policy' }).click();
    const denied = page.getByRole('alert').filter({ hasText: 'spend:admin' });
    await denied.waitFor();
    expect(await denied.textContent()).toMatch(/^403 /);
    const left = await sys.gql('query($s: ID!) { spendPolicy(subject: $s) { subject } }', {
      token: spendAdmin,
      variables: { s: subject },
    });
    expect(left.data?.spendPolicy).toBeNull();
    await page.context().close();
  });

  it.each(['Approvals', 'Spend policies', 'Webhooks'])(
    '%s is usable at phone width: nothing scrolls sideways',
    async (link) => {
      const agent = freshAgent('console-phone');
      await policy(agent);
      expect((await order(agent, 150)).status).toBe(202);
      const page = await newPage({ width: 390, height: 844 });
      await open(page, link);
      await page.waitForLoadState('networkidle');
      expect(await page.getByRole('alert').count()).toBe(0);
      expect(await sidewaysScroll(page)).toBeLessThanOrEqual(0);
      await page.context().close();
    },
  );
  it("shows an approved order's signed approval decision under its audit trail, and says when an order has none", async () => {
    const agent = freshAgent('console-authorization');
    await policy(agent);
    const waited = await order(agent, 250.75);
    expect(waited.status).toBe(202);
    const id = String(waited.json.order_id);
    const approver = await sys.token(['orders:approve'], 'alice');
    const approved = await sys.gql('mutation($id: ID!) { approvePurchaseOrder(orderId: $id) { status } }', {
      token: approver,
      variables: { id },
    });
    expect(approved.errors, JSON.stringify(approved.errors)).toBeUndefined();
    // What the API keeps (orders:read), which the page must show as it is.
    const kept = await sys.gql(
      'query($id: ID!) { purchaseOrder(orderId: $id) { approvalRecord { kid recordSha256 approvalsRequired } } }',
      { token: await sys.token(['orders:read']), variables: { id } },
    );
    const record = (
      kept.data as { purchaseOrder: { approvalRecord: { kid: string; recordSha256: string } } } | undefined
    )?.purchaseOrder.approvalRecord;
    if (!record) throw new Error(`no approval record: ${JSON.stringify(kept)}`);

    const page = await newPage();
    await open(page, 'Orders and audit');
    await page.goto(`${sys.url}/console/orders?order=${id}`);
    const panel = page.getByTestId('approval-record');
    await panel.waitFor();
    const text = (await panel.textContent()) ?? '';
    expect(text).toMatch(/approved/);
    expect(text).toContain(agent);
    expect(text).toMatch(/approval above 100\.00 USD, a second above no threshold; 1 approval required/);
    expect(text).toContain('250.75');
    expect(text).toContain(record.kid);
    expect(text).toContain(record.recordSha256);
    // The signed record itself, for `npm run audit:prove-verify`: a compact JWS.
    await panel.getByText('The signed record (JWS)').click();
    expect(await panel.locator('pre').isVisible()).toBe(true);
    expect((await panel.locator('pre').textContent())?.split('.')).toHaveLength(3);
    expect(await page.getByTestId('order-authorization').textContent()).toMatch(
      /No AP2 mandate: this order was not completed with one/,
    );
    // At phone width, the record and the key ids wrap instead of widening the page.
    const phone = await newPage({ width: 390, height: 844 });
    await open(phone, 'Orders and audit');
    await phone.goto(`${sys.url}/console/orders?order=${id}`);
    await phone.getByTestId('approval-record').getByText('The signed record (JWS)').click();
    await phone.getByTestId('approval-record').locator('pre').waitFor();
    expect(await sidewaysScroll(phone)).toBeLessThanOrEqual(0);
    await phone.context().close();

    // An order that did not wait for approval has no decision to show.
    const direct = await order(freshAgent('console-no-approval'), 20);
    expect(direct.status).toBe(201);
    await page.goto(`${sys.url}/console/orders?order=${String(direct.json.order_id)}`);
    await page
      .getByTestId('order-authorization')
      .getByText(/No signed approval decision: this order did not wait for one/)
      .waitFor();
    // One still waiting says so.
    const waiting = await order(agent, 150);
    expect(waiting.status).toBe(202);
    await page.goto(`${sys.url}/console/orders?order=${String(waiting.json.order_id)}`);
    await page
      .getByTestId('order-authorization')
      .getByText('No signed approval decision yet: this order is waiting for approval.')
      .waitFor();
    await page.context().close();
  });
});

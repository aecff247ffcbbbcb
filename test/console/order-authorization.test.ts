/**
 * The Orders page's Authorization panel in Chromium (issue 50, console/src/pages/order-authorization.tsx)
 * for an order completed with an AP2 checkout mandate: the platform's profile and key, our key on
 * the checkout inside it, and the mandate and our signature as the system keeps them (the test plays
 * the platform, test/ucp/support/ap2.ts). The approval decision's half of the panel is in
 * operator-pages.test.ts.
 */
import { createHash } from 'node:crypto';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  consoleCopy,
  openConsolePage,
  releaseChromium,
  sidewaysScroll,
  workerChromium,
} from '../support/console.ts';
import { expectCheckout } from '../ucp/checkout.suite.ts';
import { ap2Platform, ap2World, KID } from '../ucp/support/ap2.ts';

const w = ap2World(() => ({ CONSOLE_DIR: consoleCopy() }));
let browser: Browser;
beforeAll(async () => {
  browser = await workerChromium();
}, 120_000);
afterAll(() => releaseChromium(browser));

describe("an AP2 order's mandate on the Orders page", { timeout: 90_000 }, () => {
  it('shows which platform key signed the mandate, which of our keys signed its checkout, and both texts as kept', async () => {
    const p = await ap2Platform(w);
    const c = await p.ready();
    const m = await p.mandate(c);
    const done = expectCheckout(await p.complete(c.id, { checkout_mandate: m }));
    const orderId = (done.order as { id: string }).id;
    const merchantAuthorization = (c.ap2 as { merchant_authorization: string }).merchant_authorization;
    const merchantKid = (
      JSON.parse(Buffer.from(merchantAuthorization.split('.')[0] ?? '', 'base64url').toString('utf8')) as {
        kid: string;
      }
    ).kid;

    const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
    const page = await context.newPage();
    page.setDefaultTimeout(15_000);
    await openConsolePage(page, w.sys.url, 'Orders and audit');
    await page.goto(`${w.sys.url}/console/orders?order=${orderId}`);
    const panel = page.getByTestId('checkout-mandate');
    await panel.waitFor();
    const text = (await panel.textContent()) ?? '';
    expect(text).toContain(w.profileUrl);
    expect(text).toContain(KID);
    expect(text).toContain(merchantKid);
    expect(text).toContain(createHash('sha256').update(m).digest('base64url'));
    await panel.getByText('The mandate (SD-JWT with key binding) and our signature').click();
    expect(await panel.locator('pre').first().isVisible()).toBe(true);
    const shown = await panel.locator('pre').allTextContents();
    expect(shown).toEqual([m, merchantAuthorization]);
    // The order did not wait for approval: the other half says so.
    expect(await page.getByTestId('order-authorization').textContent()).toMatch(
      /No signed approval decision: this order did not wait for one/,
    );
    // At phone width the mandate, hashes and profile URL wrap instead of widening the page.
    await page.setViewportSize({ width: 390, height: 844 });
    expect(await sidewaysScroll(page)).toBeLessThanOrEqual(0);
    await context.close();
  });
});

/**
 * The console's checkout (ACP) parts in Chromium, against the embedded system serving the real
 * build, as operator-pages.test.ts does: checkout API keys on the Agents page (issued, shown once,
 * used, given a webhook, revoked), the Checkout page's sessions, a checkout order's lines on the
 * Orders page and on its approval card, and a /v2 order whose budget does not cover the catalog.
 * What the page shows is checked against the API. One system and one browser for all of it; the
 * parts are in ./checkout-pages/ (support.ts: the context and steps they share).
 */
import { describe } from 'vitest';
import { checkoutPageTests } from './checkout-pages/checkout-page.ts';
import { keysTests } from './checkout-pages/keys.ts';
import { ordersTests } from './checkout-pages/orders.ts';
import { consoleContext } from './checkout-pages/support.ts';

const ctx = consoleContext();

describe('checkout (ACP) in the console, in Chromium', { timeout: 90_000 }, () => {
  keysTests(ctx);
  checkoutPageTests(ctx);
  ordersTests(ctx);
});

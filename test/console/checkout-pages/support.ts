/**
 * What the console checkout test's parts share (../checkout-pages.test.ts): the context its
 * beforeAll fills (the system serving the real console build, Chromium, a profile server) and the
 * steps they take: a page signed in, an ACP session and its completion, a checkout order of two
 * lines as the API reads it back, money as the page writes it.
 */
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, expect } from 'vitest';
import { startEmbedded, type TestSystem } from '../../../harness/system.ts';
import { type ProfileServer, startProfileServer } from '../../../harness/ucp-platform.ts';
import { acp, expectSession, issueKey } from '../../acp/support/acp.ts';
import { consoleCopy, openConsolePage, releaseChromium, workerChromium } from '../../support/console.ts';

interface Line {
  sku: string;
  quantity: number;
  unitPriceDecimal: string;
  discountDecimal: string;
  lineTotalDecimal: string;
}

type Order = { totalDecimal: string; lines: Line[]; agentId: string };

/** The test's state, filled by its beforeAll, and its steps: the parts use them inside their tests. */
export interface ConsoleContext {
  readonly sys: TestSystem;
  readonly browser: Browser;
  readonly profiles: ProfileServer;
  /** A platform identity of its own, named after what it does. */
  platformSpiffe(name: string): string;
  newPage(viewport?: { width: number; height: number }): Promise<Page>;
  /** The console signed in (with `token`, else a development token), on the page `link`. */
  open(page: Page, link: string, token?: string): Promise<void>;
  createSession(key: string, items: { id: string; quantity: number }[]): ReturnType<typeof acp>;
  complete(key: string, id: string): ReturnType<typeof acp>;
  /** The order as the API reads it back: what the page must show. */
  orderOf(orderId: string): Promise<Order>;
  /** A checkout order of two lines, placed through ACP by a fresh platform. */
  checkoutOrder(spiffeId?: string): Promise<Order & { sessionId: string; status: string; orderId: string }>;
  /** A decimal as the page writes it: thousands separated, two decimals. */
  money(text: string): string;
}

/** Registers the test's beforeAll (system, Chromium, profile server) and afterAll. */
export function consoleContext(): ConsoleContext {
  let platforms = 0;
  const ctx = {
    platformSpiffe: (name: string) =>
      `spiffe://example.org/ns/ai/sa/procurement-agent/console-${name}-${process.pid}-${++platforms}`,
    newPage: (viewport = { width: 1280, height: 800 }) => newPage(ctx.browser, viewport),
    open: (page: Page, link: string, token?: string) => openConsolePage(page, ctx.sys.url, link, token),
    createSession: (key: string, items: { id: string; quantity: number }[]) =>
      acp(ctx.sys.url, key, 'POST', '/checkout_sessions', {
        currency: 'usd',
        capabilities: {},
        line_items: items,
      }),
    complete: (key: string, id: string) =>
      acp(ctx.sys.url, key, 'POST', `/checkout_sessions/${id}/complete`, {
        payment_data: { purchase_order_number: `PO-${id}`, payment_terms: 'net_30' },
      }),
    orderOf: (orderId: string) => orderOf(ctx.sys, orderId),
    checkoutOrder: (spiffeId?: string) => checkoutOrder(ctx, spiffeId ?? ctx.platformSpiffe('order')),
    money,
  } as { -readonly [K in keyof ConsoleContext]: ConsoleContext[K] };
  beforeAll(async () => {
    // A UCP platform's profile is served on loopback (the escalation link test).
    ctx.sys = await startEmbedded({ CONSOLE_DIR: consoleCopy(), UCP_PROFILE_ALLOW_INSECURE: 'true' });
    ctx.browser = await workerChromium();
    ctx.profiles = await startProfileServer();
  }, 120_000);
  afterAll(async () => {
    await releaseChromium(ctx.browser);
    await ctx.profiles?.close();
    await ctx.sys?.close();
  });
  return ctx;
}

async function newPage(browser: Browser, viewport: { width: number; height: number }): Promise<Page> {
  const context = await browser.newContext({ viewport, timezoneId: 'Europe/Paris' });
  const page = await context.newPage();
  page.setDefaultTimeout(15_000);
  return page;
}

async function orderOf(sys: TestSystem, orderId: string): Promise<Order> {
  const r = await sys.gql(
    `query($id: ID!) { purchaseOrder(orderId: $id) { agentId totalDecimal
      lines { sku quantity unitPriceDecimal discountDecimal lineTotalDecimal } } }`,
    { token: await sys.token(['orders:read']), variables: { id: orderId } },
  );
  expect(r.errors).toBeUndefined();
  return r.data?.purchaseOrder as Order;
}

async function checkoutOrder(ctx: ConsoleContext, spiffeId: string) {
  const { key } = await issueKey(ctx.sys, { spiffeId });
  const s = expectSession(
    await ctx.createSession(key, [
      { id: 'SKU-ABC-000001', quantity: 2 },
      { id: 'SKU-ELC-000004', quantity: 3 },
    ]),
    201,
  );
  const done = expectSession(await ctx.complete(key, String(s.id)));
  const orderId = String((done.order as { id: string } | undefined)?.id);
  return { sessionId: String(s.id), status: String(done.status), orderId, ...(await ctx.orderOf(orderId)) };
}

function money(text: string): string {
  const [whole = '', cents = ''] = text.split('.');
  return `${whole.replace(/\B(?=(\d{3})+(?!\d))/g, ',')}.${cents.padEnd(2, '0')}`;
}

/**
 * `npm run console:screenshots`: a screenshot of every console page into docs/console/, taken
 * in Chromium (playwright-core, /usr/bin/chromium or CHROMIUM_PATH) against a throwaway embedded
 * system with a little traffic: orders, a blocked agent, a price, a promotion preview, orders
 * waiting for approval, a webhook endpoint, ACP checkout API keys and sessions (one completed,
 * one waiting for approval), a catalog search and a feed import.
 */
import { mkdirSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium, type Page } from 'playwright-core';
import { buildEmbedded } from '../gateway/topology.ts';
import { gql } from '../harness/system.ts';
import { mintDevToken } from '../lib/auth/jwt.ts';
import { loadConfig } from '../lib/config.ts';

process.env.APOLLO_TELEMETRY_DISABLED = '1';
const out = fileURLToPath(new URL('../docs/console/', import.meta.url));
const AGENT = 'spiffe://example.org/ns/ai/sa/procurement-agent';

const config = loadConfig({
  ...process.env,
  DATA_DIR: mkdtempSync(join(tmpdir(), 'ac-screens-')),
  EMBEDDED_DB: 'memory',
  LOG_LEVEL: 'silent',
  NODE_ENV: 'development',
  CATALOG_SIZE: '500',
  PORT: '0',
  // A throwaway system on a busy machine: no warm-up wait, and no request shed as at capacity.
  WARM_UP_MS: '0',
  SHED_QUOTE_BUDGET_MS: '0',
});
const sys = await buildEmbedded(config);
const url = await sys.listen(0);

const order = (spiffe: string, body: Record<string, unknown>) =>
  fetch(`${url}/api/v2/procurement/orders`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-spiffe-id': spiffe },
    body: JSON.stringify({
      agent_id: 'agent-0000001',
      sku: 'SKU-ABC-000001',
      quantity: 2,
      max_budget_usd: 250.75,
      ...body,
    }),
  });
const skus = ['SKU-ABC-000001', 'SKU-ELC-000004', 'SKU-TOL-000007'];
for (let i = 0; i < 6; i++) await order(`${AGENT}/buyer-${i % 3}`, { sku: skus[i % 3], quantity: i + 1 });
for (let i = 0; i < 6; i++) await order(`${AGENT}/misbehaving`, { quantity: 0 });
const placed = (await (await order(AGENT, { quantity: 4 })).json()) as { order_id: string };

// Orders waiting for approval (one under dual control), and a webhook endpoint with deliveries.
const admin = await mintDevToken(config, {
  subject: 'console-developer',
  roles: ['spend:admin', 'webhooks:admin'],
});
const setUp = async (query: string, variables: Record<string, unknown>) => {
  const r = await gql(url, query, { token: admin, variables });
  if (r.errors) throw new Error(JSON.stringify(r.errors));
};
await setUp('mutation($i: SpendPolicyInput!) { setSpendPolicy(input: $i) { subject } }', {
  i: {
    subject: `${AGENT}/approvals`,
    currency: 'USD',
    period: 'MONTH',
    budget: '5000.00',
    approvalAbove: '200.00',
    secondApprovalAbove: '1000.00',
  },
});
await setUp(
  'mutation($u: String!, $t: [String!]!) { registerWebhookEndpoint(url: $u, eventTypes: $t) { signingSecret } }',
  {
    u: 'https://erp.example/hooks',
    t: [
      'com.agent-commerce.procurement.OrderPlaced',
      'com.agent-commerce.procurement.OrderApprovalRequested',
    ],
  },
);
await order(`${AGENT}/approvals`, { sku: 'SKU-ELC-000004', quantity: 3, max_budget_usd: 250.75 });
await order(`${AGENT}/approvals`, { sku: 'SKU-TOL-000007', quantity: 20, max_budget_usd: 1200 });

// ACP: two platforms' checkout API keys (one with a webhook), an open session, a completed one
// and one whose order waits for approval (under the approvals policy's prefix).
const keysAdmin = await mintDevToken(config, { subject: 'console-developer', roles: ['agents:admin'] });
const issueKey = async (
  name: string,
  spiffeId: string,
  agentId: string,
): Promise<{ key: string; id: string }> => {
  const r = await gql(
    url,
    'mutation($i: IssueCheckoutApiKeyInput!) { issueCheckoutApiKey(input: $i) { key apiKey { id } } }',
    {
      token: keysAdmin,
      variables: {
        i: { name, spiffeId, agentId, scopes: ['orders:create', 'orders:read', 'orders:cancel'] },
      },
    },
  );
  if (r.errors) throw new Error(JSON.stringify(r.errors));
  const issued = (r.data as { issueCheckoutApiKey: { key: string; apiKey: { id: string } } })
    .issueCheckoutApiKey;
  return { key: issued.key, id: issued.apiKey.id };
};
let acpCalls = 0;
const acp = async (key: string, path: string, body: unknown): Promise<{ id: string }> => {
  const res = await fetch(`${url}/acp${path}`, {
    method: 'POST',
    headers: {
      'api-version': '2026-04-17',
      authorization: `Bearer ${key}`,
      'idempotency-key': `screens-${++acpCalls}`,
      'content-type': 'application/json',
    },
    body: JSON.stringify(body),
  });
  if (!res.ok) throw new Error(`ACP ${path}: ${res.status} ${await res.text()}`);
  return (await res.json()) as { id: string };
};
const cart = (key: string, items: [string, number][]) =>
  acp(key, '/checkout_sessions', {
    currency: 'usd',
    capabilities: {},
    line_items: items.map(([id, quantity]) => ({ id, quantity })),
  });
const pay = (key: string, id: string) =>
  acp(key, `/checkout_sessions/${id}/complete`, {
    payment_data: { purchase_order_number: `PO-${id.slice(3, 11)}`, payment_terms: 'net_30' },
  });
const chatgpt = await issueKey('ChatGPT', `${AGENT}/chatgpt`, 'agent-chatgpt-01');
const claude = await issueKey('Claude', `${AGENT}/approvals/claude`, 'agent-claude-0001');
const webhook = await gql(
  url,
  'mutation($id: ID!, $u: String!) { setCheckoutWebhook(id: $id, url: $u) { signingSecret } }',
  {
    token: keysAdmin,
    variables: { id: chatgpt.id, u: 'https://chatgpt.example/acp/webhooks' },
  },
);
if (webhook.errors) throw new Error(JSON.stringify(webhook.errors));
const bought = await cart(chatgpt.key, [
  ['SKU-ABC-000001', 2],
  ['SKU-ELC-000004', 3],
]);
await pay(chatgpt.key, bought.id);
await cart(chatgpt.key, [
  ['SKU-TOL-000007', 4],
  ['SKU-ABC-000001', 1],
]);
const held = await cart(claude.key, [
  ['SKU-ELC-000004', 3],
  ['SKU-TOL-000007', 2],
]);
await pay(claude.key, held.id);
await cart(claude.key, [['SKU-ABC-000001', 12]]);

const browser = await chromium.launch({
  executablePath: process.env.CHROMIUM_PATH ?? '/usr/bin/chromium',
  args: ['--no-sandbox', '--disable-gpu'],
});
mkdirSync(out, { recursive: true });
const shot = (page: Page, name: string) =>
  page.screenshot({ path: join(out, `${name}.png`), fullPage: false });
try {
  const context = await browser.newContext({ viewport: { width: 1280, height: 800 }, colorScheme: 'light' });
  const page = await context.newPage();
  await page.goto(`${url}/console/`);
  await page.getByRole('button', { name: 'Sign in with a development token' }).waitFor();
  await shot(page, 'sign-in');
  await page.getByRole('button', { name: 'Sign in with a development token' }).click();
  await page.getByTestId('blocked-agent').first().waitFor();
  await shot(page, 'agents');

  // Checkout API keys: one issued from the page, its secret key shown this once.
  const keys = page.getByRole('region', { name: 'Checkout API keys (ACP and UCP platforms)' });
  await keys.getByLabel('Platform name').fill('Gemini');
  await keys.getByLabel('Acts as SPIFFE ID').fill(`${AGENT}/gemini`);
  await keys.getByLabel('Agent ID of its orders').fill('agent-gemini-0001');
  await keys.getByRole('button', { name: 'Issue key' }).click();
  await page.getByTestId('issued-key').waitFor();
  await page.getByTestId('checkout-key').nth(2).waitFor();
  await keys
    .getByRole('heading', { name: 'Checkout API keys (ACP and UCP platforms)' })
    .evaluate((h) => h.scrollIntoView({ block: 'start' }));
  await shot(page, 'agents-keys');
  await page.evaluate('window.scrollTo(0, 0)');

  await page.goto(`${url}/console/orders?order=${placed.order_id}`);
  await page.getByTestId('audit-trail').getByRole('cell', { name: '201' }).first().waitFor();
  await page.getByTestId('audit-verify').getByText('The chain verifies').waitFor();
  await shot(page, 'orders');

  // A checkout order's lines under its row (searched by the platform's agent id).
  await page.goto(`${url}/console/orders`);
  await page.getByLabel('Agent ID').fill('agent-chatgpt-01');
  await page.getByRole('button', { name: 'Search' }).click();
  await page.getByTestId('order-lines').first().waitFor();
  await shot(page, 'orders-checkout');

  await page.getByRole('link', { name: 'Checkout', exact: true }).click();
  await page.getByTestId('checkout-sessions').waitFor();
  await shot(page, 'checkout');

  await page.getByRole('link', { name: 'Approvals' }).click();
  await page.getByTestId('checkout-order').waitFor();
  await page.getByTestId('budget-shortfall').first().waitFor();
  await shot(page, 'approvals');

  await page.getByRole('link', { name: 'Spend policies' }).click();
  await page.getByTestId('spend-policies').waitFor();
  await shot(page, 'spend-policies');

  await page.getByRole('link', { name: 'Webhooks' }).click();
  await page.getByRole('button', { name: 'Deliveries of https://erp.example/hooks' }).click();
  await page.getByTestId('webhook-deliveries').getByRole('row').nth(1).waitFor();
  await shot(page, 'webhooks');

  // Catalog: a misspelt search narrowed by a facet, one product's variants; then a feed imported
  // from the browser with one bad line.
  await page.getByRole('link', { name: 'Catalog' }).click();
  await page.getByLabel('Search products').fill('ergnomic chair');
  await page.getByRole('button', { name: 'Search', exact: true }).click();
  await page.getByTestId('search-summary').filter({ hasText: 'corrected from' }).waitFor();
  await page.getByTestId('products').getByRole('link').first().click();
  await page.getByTestId('variants').waitFor();
  await shot(page, 'catalog');
  const feedLine = (n: number) =>
    JSON.stringify({
      id: `stool-${n}`,
      title: `Saddle Stool ${n}`,
      description: { plain: 'A saddle stool for standing desks.' },
      variants: [
        {
          id: `stool-${n}-black`,
          title: `Saddle Stool ${n} - Black`,
          price: { amount: 12900 + n, currency: 'USD' },
          availability: { available: true, status: 'in_stock' },
          categories: [{ value: 'Office > Chairs', taxonomy: 'merchant' }],
        },
      ],
    });
  const feedImport = page.getByTestId('catalog-import');
  await feedImport.getByLabel('metadata.json').setInputFiles({
    name: 'metadata.json',
    mimeType: 'application/json',
    buffer: Buffer.from(JSON.stringify({ id: 'feed_screens', target_country: 'US' })),
  });
  await feedImport.getByLabel('products.jsonl').setInputFiles({
    name: 'products.jsonl',
    mimeType: 'application/x-ndjson',
    buffer: Buffer.from(`${[feedLine(1), feedLine(2), '{"id": "broken"', feedLine(3)].join('\n')}\n`),
  });
  await feedImport.getByRole('button', { name: 'Import' }).click();
  const ended = feedImport.locator('[data-phase="done"], [data-phase="failed"], [data-phase="stopped"]');
  await ended.waitFor().catch(async (err) => {
    throw new Error(`the catalog import did not end: ${await feedImport.textContent()}`, { cause: err });
  });
  if ((await ended.getAttribute('data-phase')) !== 'done')
    throw new Error(`the catalog import did not end DONE: ${await feedImport.textContent()}`);
  await feedImport.scrollIntoViewIfNeeded();
  await shot(page, 'catalog-import');

  await page.getByRole('link', { name: 'Prices' }).click();
  await page.getByRole('button', { name: 'Calculate' }).click();
  await page.getByTestId('price').waitFor();
  await shot(page, 'prices');

  await page.getByRole('link', { name: 'Promotions' }).click();
  await page.getByRole('button', { name: 'Edit PROMO-ELEC-3FOR2' }).waitFor();
  await page.getByRole('button', { name: 'Preview' }).click();
  await page.getByTestId('preview').waitFor();
  await page.getByTestId('preview').scrollIntoViewIfNeeded();
  await shot(page, 'promotions');

  await page.getByRole('link', { name: 'GraphQL explorer' }).click();
  await page.locator('.graphiql-query-editor').getByText('query Promotions').waitFor();
  await page.getByRole('button', { name: /Execute query/ }).click();
  await page.locator('.graphiql-response').getByText('PROMO-ELEC-3FOR2').first().waitFor();
  // GraphiQL focuses its editor, which scrolls the page a little: show it from the top.
  await page.evaluate('window.scrollTo(0, 0)');
  await shot(page, 'explorer');

  await page.getByRole('link', { name: 'Live' }).click();
  const traffic = setInterval(() => {
    for (let i = 0; i < 20; i++) void fetch(`${url}/healthz`);
    void fetch(`${url}/cart/quote?line=SKU-ABC-000001:2&currency=USD&region=EU`);
  }, 100);
  await page.waitForTimeout(12_000);
  clearInterval(traffic);
  await shot(page, 'live');

  const phone = await browser.newContext({ viewport: { width: 390, height: 844 }, isMobile: true });
  const small = await phone.newPage();
  await small.goto(`${url}/console/`);
  await small.getByRole('button', { name: 'Sign in with a development token' }).click();
  await small.getByTestId('blocked-agent').first().waitFor();
  await shot(small, 'agents-phone');
  console.log(`screenshots written to ${out}`);
} finally {
  await browser.close();
  await sys.close();
}

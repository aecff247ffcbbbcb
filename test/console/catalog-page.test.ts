/**
 * The console's Catalog page (issue 47) in Chromium, against the embedded system serving the
 * console's real build: a misspelt search finds the seed's ergonomic chairs, a facet narrows the
 * list to its count, a product shows its variants with their prices, and a feed imported from the
 * browser reaches DONE with its bad line reported by number; each checked against the API.
 */
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startEmbedded, type TestSystem } from '../../harness/system.ts';
import {
  consoleCopy,
  openConsolePage,
  releaseChromium,
  sidewaysScroll,
  workerChromium,
} from '../support/console.ts';

let sys: TestSystem;
let browser: Browser;

beforeAll(async () => {
  sys = await startEmbedded({ CONSOLE_DIR: consoleCopy() });
  browser = await workerChromium();
}, 120_000);
afterAll(async () => {
  await releaseChromium(browser);
  await sys?.close();
});

async function open(token?: string, viewport = { width: 1280, height: 800 }): Promise<Page> {
  const context = await browser.newContext({ viewport });
  const page = await context.newPage();
  page.setDefaultTimeout(20_000);
  await openConsolePage(page, sys.url, 'Catalog', token);
  return page;
}

type Found = { totalCount: number; nodes: { id: string; title: string }[] };
async function apiSearch(input: Record<string, unknown>): Promise<Found> {
  const r = await sys.gql(
    'query($input: ProductSearchInput!) { searchProducts(input: $input, first: 50) { totalCount nodes { id title } } }',
    { variables: { input } },
  );
  expect(r.errors).toBeUndefined();
  return r.data?.searchProducts as Found;
}

const summary = (page: Page) => page.getByTestId('search-summary');

describe('the Catalog page in Chromium', { timeout: 120_000 }, () => {
  it('finds the ergonomic chairs for "ergnomic chair", narrows them by a facet, and opens one with its variants and prices', async () => {
    const page = await open();
    await page.getByLabel('Search products').fill('ergnomic chair');
    await page.getByRole('button', { name: 'Search', exact: true }).click();
    await summary(page).filter({ hasText: 'corrected from' }).waitFor();
    const all = await apiSearch({ query: 'ergnomic chair' });
    expect(all.totalCount).toBeGreaterThan(1);
    expect(await summary(page).textContent()).toBe(
      // <q> draws its quotation marks; they are not text.
      `${all.totalCount} products for ergonomic chair (corrected from ergnomic chair)`,
    );
    const titles = await page.getByTestId('products').locator('tbody tr td:first-child').allTextContents();
    expect(titles.length).toBe(Math.min(all.totalCount, 20));
    expect(titles.slice(0, 5)).toEqual(all.nodes.slice(0, 5).map((n) => n.title));
    // The seed's ergonomic chairs are its office chairs (tagged ergonomic).
    for (const t of titles) expect(t).toMatch(/Chair/);

    // A brand facet that holds fewer than all: clicking it shows exactly its count, as the API counts.
    const facets = page.getByTestId('facets').getByRole('region', { name: 'Brand' }).getByRole('button');
    const labels = await facets.allTextContents();
    const narrower = labels
      .map((l) => /^(.*) (\d+)$/.exec(l))
      .find((m): m is RegExpExecArray => !!m && Number(m[2]) < all.totalCount);
    expect(narrower).toBeDefined();
    const [, brand, count] = narrower as RegExpExecArray;
    await facets
      .filter({ hasText: brand as string })
      .first()
      .click();
    await summary(page)
      .filter({ hasText: new RegExp(`^${count} products? `) })
      .waitFor();
    expect(
      await page
        .getByTestId('facets')
        .getByRole('button', { name: `${brand} ${count}`, pressed: true })
        .count(),
    ).toBe(1);
    const narrowed = await apiSearch({ query: 'ergnomic chair', brands: [brand] });
    expect(narrowed.totalCount).toBe(Number(count));
    const rows = page.getByTestId('products').locator('tbody tr');
    expect(await rows.count()).toBe(Math.min(Number(count), 20));
    for (const cell of await rows.locator('td:nth-child(2)').allTextContents()) expect(cell).toBe(brand);
    // Its chip takes it off again.
    await page.getByRole('button', { name: `Remove brand: ${brand}` }).click();
    await summary(page)
      .filter({ hasText: `${all.totalCount} products` })
      .waitFor();

    // Open the first product: its variants with SKU, prices and what the caller pays, as the API reads them.
    const first = all.nodes[0] as { id: string; title: string };
    await page.getByTestId('products').getByRole('link', { name: first.title, exact: true }).first().click();
    await page.waitForURL(/\/console\/catalog\?product=/);
    const product = page.getByTestId('product');
    await product.getByRole('heading', { name: first.title }).waitFor();
    const r = await sys.gql(
      `query($id: ID!) { catalogProduct(id: $id) { variants { sku variantId availability inventoryLevel
         basePrices { currency amountDecimal } quote(input: { currency: "USD", region: "US" }) { promotions { totalDecimal } } } } }`,
      { variables: { id: first.id } },
    );
    expect(r.errors).toBeUndefined();
    const variants = (
      r.data?.catalogProduct as {
        variants: {
          sku: string;
          variantId: string;
          availability: string;
          inventoryLevel: number;
          basePrices: { currency: string; amountDecimal: string }[];
          quote: { promotions: { totalDecimal: string } };
        }[];
      }
    )?.variants;
    expect(variants?.length).toBeGreaterThan(0);
    const variantRows = product.getByTestId('variants').locator('tbody tr');
    expect(await variantRows.count()).toBe(variants?.length);
    for (const [i, v] of (variants ?? []).entries()) {
      const cells = await variantRows.nth(i).locator('td').allTextContents();
      expect(cells[0]).toBe(v.sku);
      expect(cells[1]).toBe(v.variantId);
      expect(cells[4]).toBe(v.availability);
      expect(cells[5]).toBe(String(v.inventoryLevel));
      const usd = v.basePrices.find((p) => p.currency === 'USD') as { amountDecimal: string };
      expect(cells[6]).toContain(
        `${Number(usd.amountDecimal).toLocaleString('en-US', { minimumFractionDigits: 2 })} USD`,
      );
      expect(cells[8]).toMatch(
        new RegExp(
          `^${Number(v.quote.promotions.totalDecimal).toLocaleString('en-US', { minimumFractionDigits: 2 }).replace('.', '\\.')} USD`,
        ),
      );
    }
    await page.context().close();
  });

  it('imports a feed chosen in the browser: progress reaches done, the bad line is reported by number', async () => {
    const chair = (n: number) =>
      JSON.stringify({
        id: `console-stool-${n}`,
        title: `Console Saddle Stool ${n}`,
        description: { plain: 'A saddle stool for standing desks.' },
        variants: [
          {
            id: `console-stool-${n}-black`,
            title: `Console Saddle Stool ${n} - Black`,
            price: { amount: 12900 + n, currency: 'USD' },
            availability: { available: true, status: 'in_stock' },
            categories: [{ value: 'Office > Chairs', taxonomy: 'merchant' }],
          },
        ],
      });
    const feed = `${[chair(1), chair(2), '{"id": "broken"', chair(3), chair(4)].join('\n')}\n`;
    const page = await open();
    const panel = page.getByTestId('catalog-import');
    expect(await panel.getByTestId('import-role').count()).toBe(0);
    await panel.getByLabel('metadata.json').setInputFiles({
      name: 'metadata.json',
      mimeType: 'application/json',
      buffer: Buffer.from(JSON.stringify({ id: 'feed_console', target_country: 'US' })),
    });
    await panel.getByLabel('products.jsonl').setInputFiles({
      name: 'products.jsonl',
      mimeType: 'application/x-ndjson',
      buffer: Buffer.from(feed),
    });
    await panel.getByRole('button', { name: 'Import' }).click();
    const status = panel.getByTestId('import-status');
    await panel.locator('[data-testid="import-status"][data-phase="done"]').waitFor();
    expect(await status.textContent()).toBe(
      'Done: 5 lines read: 4 accepted, 1 refused; 4 created, 0 updated, 0 unchanged, 0 removed',
    );
    const sent = panel.getByTestId('sent');
    expect(await sent.getAttribute('value')).toBe(String(Buffer.byteLength(feed)));
    expect(await sent.getAttribute('max')).toBe(String(Buffer.byteLength(feed)));
    const written = panel.getByTestId('written');
    expect([await written.getAttribute('value'), await written.getAttribute('max')]).toEqual(['4', '4']);
    const refused = panel.getByTestId('refused-lines').locator('tbody tr');
    expect(await refused.count()).toBe(1);
    const cells = await refused.first().locator('td').allTextContents();
    expect(cells[0]).toBe('3');
    expect(cells[1]).toBe('$');
    expect(cells[2]).toMatch(/^not JSON/);
    // The catalog has them: the search finds the four stools.
    expect((await apiSearch({ query: 'console saddle stool' })).totalCount).toBe(4);
    await page.context().close();
  });

  it('says a token without catalog:admin lacks it, and shows the API refusing its import', async () => {
    const page = await open(await sys.token(['orders:read'], 'reader'));
    const panel = page.getByTestId('catalog-import');
    expect(await panel.getByTestId('import-role').textContent()).toMatch(/does not carry catalog:admin/);
    await panel.getByLabel('metadata.json').setInputFiles({
      name: 'metadata.json',
      mimeType: 'application/json',
      buffer: Buffer.from(JSON.stringify({ id: 'feed_refused', target_country: 'US' })),
    });
    await panel.getByLabel('products.jsonl').setInputFiles({
      name: 'products.jsonl',
      mimeType: 'application/x-ndjson',
      buffer: Buffer.from('{}\n'),
    });
    await panel.getByRole('button', { name: 'Import' }).click();
    const alert = panel.getByRole('alert');
    await alert.waitFor();
    expect(await alert.textContent()).toMatch(/403 FORBIDDEN.*catalog:admin/);
    await page.context().close();
  });

  it('does not scroll sideways at phone width with results on it', async () => {
    const page = await open(undefined, { width: 390, height: 800 });
    await page.getByLabel('Search products').fill('chair');
    await page.getByRole('button', { name: 'Search', exact: true }).click();
    await page.getByTestId('products').waitFor();
    expect(await sidewaysScroll(page)).toBe(0);
    await page.context().close();
  });
});

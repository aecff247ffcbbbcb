/**
 * The catalog for this system's own agents: GET /v2/products and /v2/products/{productId}
 * (procurement.yaml), and the MCP tools over them. Every reply is checked against the
 * document's schemas; prices are the quote's; a spend policy judges each variant; the query
 * contract refuses with 422 invalid-query naming the parameter, never a 5xx, and a refusal does
 * not count towards the block.
 */
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import fc from 'fast-check';
import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startEmbedded, type TestSystem } from '../../harness/system.ts';
import { procurementOpenApi } from '../../subgraphs/procurement/contract/openapi.ts';
import { accessToken, freshAgent } from '../procurement/support/agent.ts';
import { setApprovalPolicy } from '../procurement/support/spend.ts';

type Json = Record<string, unknown>;
interface Variant {
  sku: string;
  variant_id: string;
  title: string;
  purchasable: boolean;
  price: { currency: string; amount: string; list_amount: string | null; source: string } | null;
  budget: {
    within_budget: boolean;
    approvals_required: number;
    sku_allowed: boolean;
    remaining: string;
  } | null;
}
interface Product {
  id: string;
  title: string;
  brand: string | null;
  categories: string[];
  variants: Variant[];
}
interface Search {
  products: Product[];
  total: number;
  next_cursor: string | null;
  corrected_query: string | null;
}

let sys: TestSystem;
beforeAll(async () => {
  sys = await startEmbedded({ CATALOG_SIZE: '1200' });
}, 120_000);
afterAll(async () => {
  await sys?.close();
});

const DOC = 'procurement.yaml';
const ajv = new Ajv2020({ strict: false, allErrors: true });
addFormats.default(ajv);
ajv.addSchema(procurementOpenApi() as object, DOC);
const schemas = new Map<string, ValidateFunction>();
/** A reply checked against the document's component schema (its $refs inside procurement.yaml). */
function expectSchema(name: string, body: unknown) {
  let v = schemas.get(name);
  if (!v) {
    v = ajv.compile({ $ref: `${DOC}#/components/schemas/${name}` });
    schemas.set(name, v);
  }
  expect(v(body), JSON.stringify(v.errors)).toBe(true);
}

async function get(path: string, o: { spiffe?: string | null; token?: string } = {}) {
  const headers: Record<string, string> = {};
  if (o.spiffe !== null) headers['x-spiffe-id'] = o.spiffe ?? freshAgent('catalog');
  if (o.token) headers.authorization = `Bearer ${o.token}`;
  const res = await request(`${sys.url}${path}`, { headers });
  const text = await res.body.text();
  return { status: res.statusCode, headers: res.headers, body: JSON.parse(text) as Json };
}

const search = async (qs: string, o: { spiffe?: string } = {}) => {
  const r = await get(`/v2/products?${qs}`, o);
  expect(r.status, JSON.stringify(r.body)).toBe(200);
  expectSchema('ProductSearch', r.body);
  return r.body as unknown as Search;
};

describe('GET /v2/products', () => {
  it('finds "ergnomic chair" (sic) at most 300 USD, each variant priced as quote_cart prices it', async () => {
    const agent = freshAgent('find');
    const page = await search('q=ergnomic%20chair&max_price=300&limit=5', { spiffe: agent });
    expect(page.corrected_query).toBe('ergonomic chair');
    expect(page.products.length).toBeGreaterThan(0);
    for (const p of page.products) {
      expect(p.title).toMatch(/chair/i);
      for (const v of p.variants) {
        expect(v.price?.currency).toBe('USD');
        // Without a spend policy (SPEND_POLICY_DEFAULT allow) there is nothing to judge by.
        expect(v.budget).toBeNull();
      }
    }
    // The price is the agent's own one-line quote, to the cent.
    const v = page.products[0]?.variants[0] as Variant;
    const quote = await get(`/v2/quote?line=${v.sku}:1&currency=USD&region=US`, { spiffe: agent });
    expect(quote.status).toBe(200);
    expect(v.price?.amount).toBe((quote.body.total as number).toFixed(2));
  });

  it('pages through a category with the cursor: every product once, the count as total says', async () => {
    const first = await search('category=office&limit=7');
    expect(first.total).toBeGreaterThan(14);
    const seen = new Set<string>();
    let page: Search = first;
    let cursor: string | null = first.next_cursor;
    for (const p of page.products) seen.add(p.id);
    for (let i = 0; i < 3 && cursor; i++) {
      page = await search(`category=office&limit=7&cursor=${cursor}`);
      for (const p of page.products) {
        expect(seen.has(p.id), p.id).toBe(false);
        expect(p.categories.some((c) => c.toLowerCase().startsWith('office'))).toBe(true);
        seen.add(p.id);
      }
      cursor = page.next_cursor;
    }
    expect(seen.size).toBe(Math.min(first.total, 28));
    // A cursor given for another search is refused, not silently applied.
    const other = await get(`/v2/products?category=garden&cursor=${first.next_cursor}`);
    expect(other.status).toBe(422);
    expect((other.body.errors as Json[])[0]?.pointer).toBe('/cursor');
  });

  it('judges every variant by the agent spend policy: within budget, approvals, allowed SKUs', async () => {
    const agent = freshAgent('policy');
    await setApprovalPolicy(sys, await sys.token(['spend:admin']), agent, {
      budget: '500.00',
      approvalAbove: '100.00',
      allowedSkuPrefixes: ['SKU-O'],
    });
    const page = await search('category=office&limit=20', { spiffe: agent });
    const variants = page.products.flatMap((p) => p.variants).filter((v) => v.price);
    expect(variants.length).toBeGreaterThan(0);
    let judged = 0;
    for (const v of variants) {
      const amount = Number(v.price?.amount);
      expect(v.budget, v.sku).not.toBeNull();
      expect(v.budget?.within_budget).toBe(amount <= 500);
      expect(v.budget?.approvals_required).toBe(amount > 100 ? 1 : 0);
      expect(v.budget?.sku_allowed).toBe(v.sku.startsWith('SKU-O'));
      expect(v.budget?.remaining).toBe('500.00');
      judged++;
    }
    expect(judged).toBe(variants.length);
    // Both sides of the approval line are in the page (the test could not fail otherwise).
    expect(variants.some((v) => Number(v.price?.amount) > 100)).toBe(true);
    expect(variants.some((v) => Number(v.price?.amount) <= 100)).toBe(true);
  });

  const BAD: readonly [string, string, string][] = [
    ['no query and no filter', 'currency=USD', ''],
    ['an unknown parameter', 'q=chair&colour=red', ''],
    ['q twice', 'q=chair&q=desk', '/q'],
    ['an empty q', 'q=', '/q'],
    ['q over 256 characters', `q=${'a'.repeat(257)}`, '/q'],
    ['limit 0', 'q=chair&limit=0', '/limit'],
    ['limit 51', 'q=chair&limit=51', '/limit'],
    ['limit not a number', 'q=chair&limit=ten', '/limit'],
    ['a price that is not a decimal', 'q=chair&max_price=1e3', '/max_price'],
    ['three decimals', 'q=chair&min_price=1.005', '/min_price'],
    ['min above max', 'q=chair&min_price=20&max_price=10', '/min_price'],
    ['a decimal yen price', 'q=chair&currency=JPY&max_price=10.5', '/max_price'],
    ['a lower-case currency', 'q=chair&currency=usd', '/currency'],
    ['available not a boolean', 'q=chair&available=yes', '/available'],
    ['a cursor this server never gave', 'q=chair&cursor=abc.def', '/cursor'],
  ];
  it.each(BAD)('%s: 422 invalid-query naming the parameter', async (_name, qs, pointer) => {
    const r = await get(`/v2/products?${qs}`);
    expect(r.status, JSON.stringify(r.body)).toBe(422);
    expect(r.headers['content-type']).toMatch(/^application\/problem\+json/);
    expectSchema('ValidationProblem', r.body);
    expect(r.body.type).toMatch(/invalid-query$/);
    const pointers = (r.body.errors as { pointer: string }[]).map((e) => e.pointer);
    expect(pointers.some((p) => p === pointer || p.startsWith(`${pointer}/`))).toBe(true);
  });

  it('a refused search does not count towards the block (a read, as listing orders)', async () => {
    const agent = freshAgent('noblock');
    for (let i = 0; i < 8; i++)
      expect((await get('/v2/products?limit=0', { spiffe: agent })).status).toBe(422);
    expect((await get('/v2/products?q=desk', { spiffe: agent })).status).toBe(200);
  });

  it('needs an identity (401) and the catalog:read scope (403)', async () => {
    expect((await get('/v2/products?q=desk', { spiffe: null })).status).toBe(401);
    const agent = freshAgent('scope');
    const narrow = await accessToken(sys.config, { sub: agent, scope: 'orders:create' });
    const r = await get('/v2/products?q=desk', { spiffe: agent, token: narrow });
    expect(r.status).toBe(403);
    const wide = await accessToken(sys.config, { sub: agent, scope: 'catalog:read' });
    expect((await get('/v2/products?q=desk', { spiffe: agent, token: wide })).status).toBe(200);
  });

  it('never answers 5xx, whatever the text and filters (fast-check)', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.string({ maxLength: 300 }),
        fc.option(fc.string({ maxLength: 40 })),
        fc.option(fc.stringMatching(/^\d{1,4}(\.\d{1,3})?$/)),
        async (q, category, max) => {
          const qs = new URLSearchParams({ q });
          if (category !== null) qs.set('category', category);
          if (max !== null) qs.set('max_price', max);
          const r = await get(`/v2/products?${qs}`, { spiffe: freshAgent('fuzz') });
          expect([200, 422]).toContain(r.status);
          expectSchema(r.status === 200 ? 'ProductSearch' : 'ValidationProblem', r.body);
        },
      ),
      { numRuns: 60 },
    );
  });
});

describe('GET /v2/products/{productId}', () => {
  it('reads a product by its id, a variant by its sku, and says which variant was named', async () => {
    const [p] = (await search('q=chair&limit=1')).products as [Product];
    const byId = await get(`/v2/products/${encodeURIComponent(p.id)}`);
    expect(byId.status).toBe(200);
    expectSchema('ProductDetail', byId.body);
    expect((byId.body.product as Product).id).toBe(p.id);
    expect(byId.body.selected_sku).toBeNull();
    const v = p.variants[0] as Variant;
    const bySku = await get(`/v2/products/${v.sku}`);
    expect(bySku.status).toBe(200);
    expect((bySku.body.product as Product).id).toBe(p.id);
    expect(bySku.body.selected_sku).toBe(v.sku);
  });

  it('an id longer than the router reads (100 characters): 414, as documented', async () => {
    const r = await get(`/v2/products/${'p'.repeat(101)}`);
    expect(r.status).toBe(414);
    expect(r.body.type).toMatch(/uri-too-long$/);
  });

  it('an id no product has: 404 product-not-found; a bad currency: 422', async () => {
    const r = await get('/v2/products/no-such-product');
    expect(r.status).toBe(404);
    expect(r.body.type).toMatch(/product-not-found$/);
    const bad = await get('/v2/products/no-such-product?currency=dollars');
    expect(bad.status).toBe(422);
    expect((bad.body.errors as { pointer: string }[])[0]?.pointer).toBe('/currency');
  });
});

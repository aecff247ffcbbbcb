/**
 * POST /catalog/search: a misspelt query under a price, priced for the caller as the cart quote
 * prices, its cursor, its limit, the profile's say and UCP-Agent: a part of ../catalog.test.ts.
 */
import { describe, expect, it } from 'vitest';
import { ucpCall } from '../../../harness/ucp-platform.ts';
import { expectUcp } from '../support/validate.ts';
import type { CatalogContext, Json, Product, Variant } from './support.ts';

export function searchTests(ctx: CatalogContext): void {
  describe('POST /catalog/search', () => {
    it('finds "ergnomic chair" (sic) under 300 USD, priced for the caller, valid against the release', async () => {
      const r = await ctx.call('/catalog/search', {
        query: 'ergnomic chair',
        context: { address_country: 'US', currency: 'USD' },
        filters: { price: { max: 30000 } },
        pagination: { limit: 5 },
      });
      expect(r.status).toBe(200);
      expectUcp('catalog_search_response', r.body);
      const products = r.body.products as Product[];
      expect(products.length).toBeGreaterThan(0);
      for (const p of products) {
        expect(p.title).toMatch(/Chair/);
        for (const v of p.variants) {
          expect(v.price.currency).toBe('USD');
          expect(v.price.amount).toBeLessThanOrEqual(30000);
        }
      }
      expect(r.body.messages).toContainEqual(
        expect.objectContaining({ type: 'info', code: 'query_corrected' }),
      );
      expect(r.body.ucp).toMatchObject({
        capabilities: { 'dev.ucp.shopping.catalog.search': [{ version: '2026-04-08' }] },
      });
    });

    it("prices a variant as the one-line cart quote does (GET /cart/quote's total)", async () => {
      const r = await ctx.call('/catalog/search', {
        query: 'cordless drill',
        context: { address_country: 'US' },
      });
      const v = (r.body.products as Product[])[0]?.variants[0] as Variant;
      const quote = await fetch(`${ctx.sys.url}/cart/quote?line=${v.sku}:1&currency=USD&region=US`);
      const q = (await quote.json()) as { total: number };
      expect(v.price.amount).toBe(Math.round(q.total * 100));
    });

    it('pages with its cursor, and refuses a cursor from another search', async () => {
      const first = await ctx.call('/catalog/search', {
        filters: { categories: ['Office'] },
        pagination: { limit: 3 },
      });
      const pagination = first.body.pagination as {
        cursor?: string;
        has_next_page: boolean;
        total_count: number;
      };
      expect(pagination.has_next_page).toBe(true);
      expect(pagination.total_count).toBeGreaterThan(3);
      const second = await ctx.call('/catalog/search', {
        filters: { categories: ['Office'] },
        pagination: { limit: 3, cursor: pagination.cursor },
      });
      expectUcp('catalog_search_response', second.body);
      const ids = (b: Json) => (b.products as Product[]).map((p) => p.id);
      expect(ids(second.body).some((id) => ids(first.body).includes(id))).toBe(false);
      const foreign = await ctx.call('/catalog/search', {
        query: 'drill',
        pagination: { cursor: pagination.cursor },
      });
      expect(foreign.status).toBe(400);
      expect(foreign.body).toMatchObject({ code: 'invalid_request', path: '$.pagination.cursor' });
    });

    it.each<[string, unknown, number, Json]>([
      [
        'no query and no filter (search.md: implementations MUST validate inputs)',
        {},
        400,
        { code: 'invalid_request' },
      ],
      ['a query of 100 kB (over the body limit)', { query: 'x'.repeat(100_000) }, 413, {}],
      [
        'a query of 2 kB',
        { query: 'chair '.repeat(400) },
        400,
        { code: 'request_too_large', path: '$.query' },
      ],
      [
        'a limit of 0 (the schema: minimum 1)',
        { query: 'x', pagination: { limit: 0 } },
        400,
        { code: 'invalid_request' },
      ],
      [
        'a price filter of -1',
        { query: 'x', filters: { price: { max: -1 } } },
        400,
        { code: 'invalid_request' },
      ],
      ['a query that is a number', { query: 7 }, 400, { code: 'invalid_request', path: '$.query' }],
    ])('refuses %s with a UCP error', async (_what, body, status, expected) => {
      const r = await ctx.call('/catalog/search', body);
      expect(r.status).toBe(status);
      expect(r.body).toMatchObject(expected);
    });

    it('clamps a limit of 10^9 to its largest page', async () => {
      const r = await ctx.call('/catalog/search', {
        filters: { categories: ['Office', 'Tools', 'Home'] },
        pagination: { limit: 1e9 },
      });
      expect(r.status).toBe(200);
      expect((r.body.pagination as { total_count: number }).total_count).toBeGreaterThan(50);
      expect((r.body.products as Product[]).length).toBe(50);
    });

    it('answers capabilities_incompatible to a platform whose profile has no catalog', async () => {
      const r = await ctx.call('/catalog/search', { query: 'chair' }, { profile: ctx.bare });
      expect(r.status).toBe(200);
      expectUcp('error_response', r.body);
      expect(r.body.messages).toEqual([expect.objectContaining({ code: 'capabilities_incompatible' })]);
    });

    it('refuses a call without UCP-Agent', async () => {
      const r = await ucpCall(ctx.sys.url, { profileUrl: null }, 'POST', '/catalog/search', {
        query: 'chair',
      });
      expect(r.status).toBe(400);
      expect(r.body).toMatchObject({ code: 'invalid_profile_url' });
    });
  });
}

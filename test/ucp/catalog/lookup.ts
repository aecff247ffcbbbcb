/**
 * POST /catalog/lookup (ids of every kind, correlated; its limits) and POST /catalog/product (the
 * selection, the variant asked for, an unknown id): a part of ../catalog.test.ts.
 */
import { describe, expect, it } from 'vitest';
import { generateProducts } from '../../../subgraphs/pricing/catalog/generate.ts';
import { expectUcp } from '../support/validate.ts';
import { type CatalogContext, type Product, SIZE } from './support.ts';

export function lookupTests(ctx: CatalogContext): void {
  describe('POST /catalog/lookup', () => {
    const multi = () =>
      generateProducts(SIZE).find((p) => p.variants.length > 2) as ReturnType<
        typeof generateProducts
      >[number];

    it('resolves product ids, variant ids and SKUs once each, correlated by inputs, and tells what it did not find', async () => {
      const p = multi();
      const v = p.variants[2] as (typeof p.variants)[number];
      const r = await ctx.call('/catalog/lookup', {
        ids: [p.productId, v.variantId, p.productId, 'prod_nothing'],
      });
      expect(r.status).toBe(200);
      expectUcp('catalog_lookup_response', r.body);
      const products = r.body.products as Product[];
      expect(products).toHaveLength(1);
      const variants = products[0]?.variants ?? [];
      expect(variants.find((x) => x.sku === p.variants[0]?.sku)?.inputs).toEqual([
        { id: p.productId, match: 'featured' },
      ]);
      expect(variants.find((x) => x.sku === v.sku)?.inputs).toEqual([{ id: v.variantId, match: 'exact' }]);
      expect(variants).toHaveLength(2);
      expect(r.body.messages).toEqual([{ type: 'info', code: 'not_found', content: 'prod_nothing' }]);
    });

    it('refuses more than 50 identifiers with 400 request_too_large (rest.md)', async () => {
      const r = await ctx.call('/catalog/lookup', { ids: Array.from({ length: 51 }, (_, i) => `p${i}`) });
      expect(r.status).toBe(400);
      expect(r.body).toMatchObject({ code: 'request_too_large' });
    });

    it('refuses a lookup without ids (the schema: minItems 1)', async () => {
      const r = await ctx.call('/catalog/lookup', { ids: [] });
      expect(r.status).toBe(400);
      expect(r.body).toMatchObject({ code: 'invalid_request' });
    });
  });

  describe('POST /catalog/product', () => {
    it('narrows the variants to the selection, with availability signals on every option value', async () => {
      const p = generateProducts(SIZE).find(
        (x) => x.options.length === 1 && x.variants.length > 2,
      ) as ReturnType<typeof generateProducts>[number];
      const option = p.options[0] as { name: string; values: readonly string[] };
      const chosen = option.values[1] as string;
      const r = await ctx.call('/catalog/product', {
        id: p.productId,
        selected: [{ name: option.name, label: chosen }],
      });
      expect(r.status).toBe(200);
      expectUcp('catalog_get_product_response', r.body);
      const product = r.body.product as Product;
      expect(product.selected).toEqual([{ name: option.name, label: chosen }]);
      expect(product.variants.map((v) => v.sku)).toEqual([p.variants[1]?.sku]);
      expect(product.options?.[0]?.values).toEqual(
        option.values.map((label) => ({ label, available: true, exists: true })),
      );
    });

    it('puts a variant asked for by its id first', async () => {
      const p = generateProducts(SIZE).find((x) => x.variants.length > 2) as ReturnType<
        typeof generateProducts
      >[number];
      const r = await ctx.call('/catalog/product', { id: p.variants[2]?.variantId });
      expect((r.body.product as Product).variants[0]?.sku).toBe(p.variants[2]?.sku);
    });

    it('answers an unknown id with ucp.status error and an unrecoverable not_found', async () => {
      const r = await ctx.call('/catalog/product', { id: 'prod_invalid' });
      expect(r.status).toBe(200);
      expectUcp('error_response', r.body);
      expect(r.body.messages).toEqual([
        {
          type: 'error',
          code: 'not_found',
          content: 'Product not found: prod_invalid',
          severity: 'unrecoverable',
        },
      ]);
    });
  });
}

import { toNumber2 } from '../../../../lib/money.ts';
import type { Catalog } from '../../../../subgraphs/pricing/catalog/catalog.ts';
import type { CatalogPort } from '../ports.ts';

/** The quote's catalog port over pricing's catalog store: products and base prices, two queries at once. */
export const catalogPort = (catalog: Catalog): CatalogPort => ({
  async lookup(skus, currency) {
    const [products, prices] = await Promise.all([
      catalog.products(skus),
      catalog.basePrices(skus.map((sku) => ({ sku, currency }))),
    ]);
    return products.map((p, i) => {
      if (!p) return undefined;
      const base = prices[i];
      return {
        sku: p.sku,
        name: p.name,
        category: p.category,
        inventoryLevel: p.inventoryLevel,
        ...(base !== undefined && !(base instanceof Error) ? { basePrice: toNumber2(base) } : {}),
      };
    });
  },
});

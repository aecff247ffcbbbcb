import type { Db } from '../../../lib/db/index.ts';
import type { CatalogProduct, CatalogVariant } from './model.ts';
import { PRODUCT_JSON, type ProductRow, productOfRow } from './products-sql.ts';
import type { SearchRequest } from './search/request.ts';
import type { CatalogSearch, SearchPage } from './search/sql.ts';
import { type CatalogSearchOptions, createSqlCatalogSearch } from './search/sql.ts';

/**
 * The catalog's products as storefronts and agents read them: search (search/sql.ts), and lookup
 * by any identifier a caller may hold (a product id, the merchant's variant id, a SKU). One port
 * for every edge (GraphQL, UCP, MCP); PGlite and PostgreSQL run the same statements.
 */

/** How a lookup identifier reached a variant (UCP's `inputs[].match`). */
export interface LookupMatch {
  readonly id: string;
  /** `exact`: the identifier names this variant; `featured`: it names its product. */
  readonly match: 'exact' | 'featured';
}

export interface LookedUpProduct {
  readonly product: CatalogProduct;
  /** By SKU: the identifiers that resolved to each variant. */
  readonly inputs: ReadonlyMap<string, readonly LookupMatch[]>;
}

export interface LookupResult {
  readonly products: readonly LookedUpProduct[];
  /** Identifiers that name nothing in the catalog, in the order given. */
  readonly notFound: readonly string[];
}

export interface CatalogProducts extends CatalogSearch {
  search(req: SearchRequest): Promise<SearchPage>;
  /** Distinct identifiers resolved; a product named by several comes back once. */
  lookup(ids: readonly string[]): Promise<LookupResult>;
  /** The product an identifier names, and the variant when it names one. */
  product(id: string): Promise<{ product: CatalogProduct; variantSku?: string } | undefined>;
  /** Variants by SKU, in the order asked, with their product's id; undefined for unknown SKUs. */
  variants(skus: readonly string[]): Promise<((CatalogVariant & { productId: string }) | undefined)[]>;
  /** The SKU of a variant by the merchant's variant id or its SKU; undefined when unknown. */
  skuOf(ids: readonly string[]): Promise<(string | undefined)[]>;
}

export function createSqlCatalogProducts(db: Db, opts: CatalogSearchOptions): CatalogProducts {
  const search = createSqlCatalogSearch(db, opts);

  /** Each identifier with the product it names and, for a variant id or SKU, the variant. */
  async function resolve(ids: readonly string[]) {
    return db.query<{ id: string; product_id: string | null; sku: string | null }>(
      `SELECT i.id, coalesce(v.product_id, g.product_id) AS product_id, v.sku
         FROM unnest($1::text[]) AS i(id)
         LEFT JOIN catalog_products v ON v.variant_id = i.id OR v.sku = i.id
         LEFT JOIN catalog_product_groups g ON g.product_id = i.id`,
      [ids],
    );
  }

  async function productsById(productIds: readonly string[]): Promise<Map<string, CatalogProduct>> {
    if (productIds.length === 0) return new Map();
    const rows = await db.query<{ p: ProductRow }>(
      `SELECT ${PRODUCT_JSON} AS p FROM catalog_product_groups g WHERE g.product_id = ANY($1::text[])`,
      [productIds],
    );
    return new Map(rows.map((r) => [r.p.product_id, productOfRow(r.p)]));
  }

  return {
    search: (req) => search.search(req),
    catalogChanged: () => search.catalogChanged(),

    async lookup(ids) {
      const unique = [...new Set(ids)];
      if (unique.length === 0) return { products: [], notFound: [] };
      const resolved = await resolve(unique);
      const found = await productsById([
        ...new Set(resolved.flatMap((r) => (r.product_id ? [r.product_id] : []))),
      ]);
      const inputs = new Map<string, Map<string, LookupMatch[]>>();
      const order: string[] = [];
      const notFound: string[] = [];
      for (const id of unique) {
        const hits = resolved.filter((r) => r.id === id && r.product_id && found.has(r.product_id));
        if (hits.length === 0) {
          notFound.push(id);
          continue;
        }
        for (const hit of hits) {
          const product = found.get(hit.product_id as string) as CatalogProduct;
          if (!inputs.has(product.productId)) {
            inputs.set(product.productId, new Map());
            order.push(product.productId);
          }
          // A product id resolves to its featured (first) variant; a variant id or SKU to itself.
          const sku = hit.sku ?? product.variants[0]?.sku;
          if (!sku) continue;
          const bySku = inputs.get(product.productId) as Map<string, LookupMatch[]>;
          bySku.set(sku, [...(bySku.get(sku) ?? []), { id, match: hit.sku ? 'exact' : 'featured' }]);
        }
      }
      return {
        products: order.map((productId) => ({
          product: found.get(productId) as CatalogProduct,
          inputs: inputs.get(productId) as Map<string, LookupMatch[]>,
        })),
        notFound,
      };
    },

    async product(id) {
      const [hit] = (await resolve([id])).filter((r) => r.product_id);
      if (!hit?.product_id) return undefined;
      const product = (await productsById([hit.product_id])).get(hit.product_id);
      if (!product) return undefined;
      return { product, ...(hit.sku ? { variantSku: hit.sku } : {}) };
    },

    async variants(skus) {
      if (skus.length === 0) return [];
      const rows = await db.query<{ p: ProductRow }>(
        `SELECT ${PRODUCT_JSON} AS p FROM catalog_product_groups g
          WHERE g.product_id IN (SELECT product_id FROM catalog_products WHERE sku = ANY($1::text[]))`,
        [skus],
      );
      const bySku = new Map<string, CatalogVariant & { productId: string }>();
      for (const r of rows) {
        const product = productOfRow(r.p);
        for (const v of product.variants) bySku.set(v.sku, { ...v, productId: product.productId });
      }
      return skus.map((s) => bySku.get(s));
    },

    async skuOf(ids) {
      if (ids.length === 0) return [];
      const rows = await db.query<{ id: string; sku: string }>(
        `SELECT i.id, v.sku FROM unnest($1::text[]) AS i(id)
           JOIN catalog_products v ON v.variant_id = i.id OR v.sku = i.id`,
        [ids],
      );
      const byId = new Map(rows.map((r) => [r.id, r.sku]));
      return ids.map((id) => byId.get(id));
    },
  };
}

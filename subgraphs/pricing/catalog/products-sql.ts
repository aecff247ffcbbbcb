import type { Queryable } from '../../../lib/db/index.ts';
import {
  availabilityOf,
  type CatalogProduct,
  type CatalogVariant,
  type Description,
  type Media,
  purchasable,
} from './model.ts';

/** Products and their variants as read (lookup, search, export); products-write.ts writes them. */

export type ProductRow = {
  product_id: string;
  handle: string | null;
  title: string;
  description_plain: string;
  description_html: string | null;
  url: string | null;
  brand: string | null;
  categories: string[];
  condition: string;
  media: { type: string; url: string; alt_text?: string; width?: number; height?: number }[];
  options: { name: string; values: string[] }[];
  tags: string[];
  variants: {
    sku: string;
    variant_id: string;
    title: string;
    name: string;
    category: string;
    inventory_level: number;
    availability: string | null;
    options: { name: string; value: string }[];
    barcodes: { type: string; value: string }[];
    media: ProductRow['media'];
    url: string | null;
    seller: string | null;
    description: Description | null;
    prices: { currency: string; amount: string; list_amount: string | null }[] | null;
  }[];
};

const media = (m: ProductRow['media']): Media[] =>
  m.map((x) => ({
    type: x.type,
    url: x.url,
    ...(x.alt_text !== undefined ? { altText: x.alt_text } : {}),
    ...(x.width !== undefined ? { width: x.width } : {}),
    ...(x.height !== undefined ? { height: x.height } : {}),
  }));

const PRODUCT_FIELDS = `'product_id', g.product_id, 'handle', g.handle, 'title', g.title, 'description_plain', g.description_plain,
    'description_html', g.description_html, 'url', g.url, 'brand', g.brand, 'categories', g.categories,
    'condition', g.condition, 'media', g.media, 'options', g.options, 'tags', g.tags`;

/**
 * The SELECT list of a product without its variants (an empty list), as PRODUCT_JSON's row: for
 * a search whose caller shows none (SearchRequest.variants). Variants and their prices are most
 * of what PRODUCT_JSON costs.
 */
export const PRODUCT_JSON_BARE = `json_build_object(${PRODUCT_FIELDS}, 'variants', '[]'::json)`;

/**
 * The SELECT list of a product with its variants (by position) and their prices, as one JSON
 * row; `g` is catalog_product_groups. Shared by every read (lookup, search).
 */
export const PRODUCT_JSON = `json_build_object(${PRODUCT_FIELDS},
    'variants', (SELECT coalesce(json_agg(json_build_object(
        'sku', v.sku, 'variant_id', v.variant_id, 'title', v.title, 'name', v.name, 'category', v.category,
        'inventory_level', v.inventory_level, 'availability', v.availability, 'options', v.options,
        'barcodes', v.barcodes, 'media', v.media, 'url', v.url, 'seller', v.seller, 'description', v.description,
        'prices', (SELECT json_agg(json_build_object('currency', bp.currency, 'amount', bp.amount::text,
                     'list_amount', bp.list_amount::text) ORDER BY bp.currency)
                     FROM catalog_base_prices bp WHERE bp.sku = v.sku)
      ) ORDER BY v.position, v.sku), '[]'::json) FROM catalog_products v WHERE v.product_id = g.product_id)
  )`;

/** A row of PRODUCT_JSON as the model's product. */
export function productOfRow(row: ProductRow): CatalogProduct {
  return {
    productId: row.product_id,
    ...(row.handle !== null ? { handle: row.handle } : {}),
    title: row.title,
    description: {
      plain: row.description_plain,
      ...(row.description_html !== null ? { html: row.description_html } : {}),
    },
    ...(row.url !== null ? { url: row.url } : {}),
    ...(row.brand !== null ? { brand: row.brand } : {}),
    categories: row.categories,
    condition: row.condition,
    media: media(row.media),
    options: row.options,
    tags: row.tags,
    variants: row.variants.map((v): CatalogVariant => {
      const availability = availabilityOf(v.availability, v.inventory_level);
      const listPrices = Object.fromEntries(
        (v.prices ?? []).flatMap((p) => (p.list_amount !== null ? [[p.currency, p.list_amount]] : [])),
      );
      return {
        sku: v.sku,
        variantId: v.variant_id,
        title: v.title,
        name: v.name,
        category: v.category,
        inventoryLevel: Number(v.inventory_level),
        prices: Object.fromEntries((v.prices ?? []).map((p) => [p.currency, p.amount])),
        ...(Object.keys(listPrices).length > 0 ? { listPrices } : {}),
        availability,
        available: purchasable(availability),
        options: v.options,
        barcodes: v.barcodes,
        media: media(v.media),
        ...(v.url !== null ? { url: v.url } : {}),
        ...(v.seller !== null ? { seller: v.seller } : {}),
        ...(v.description !== null ? { description: v.description } : {}),
      };
    }),
  };
}

/** Products by id, in the order asked; undefined for ids the catalog does not have. */
export async function readProducts(
  q: Queryable,
  productIds: readonly string[],
): Promise<(CatalogProduct | undefined)[]> {
  if (productIds.length === 0) return [];
  const rows = await q.query<{ p: ProductRow }>(
    `SELECT ${PRODUCT_JSON} AS p FROM catalog_product_groups g WHERE g.product_id = ANY($1::text[])`,
    [productIds],
  );
  const byId = new Map(rows.map((r) => [r.p.product_id, productOfRow(r.p)]));
  return productIds.map((id) => byId.get(id));
}

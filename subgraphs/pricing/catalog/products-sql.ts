import type { Queryable } from '../../../lib/db/index.ts';
import {
  availabilityOf,
  type CatalogProduct,
  type CatalogProductInput,
  type CatalogVariant,
  categoryPaths,
  type Description,
  type Media,
  purchasable,
} from './model.ts';

/**
 * Products and their variants in SQL, for the seed and the feed import: a batch is written as
 * four set-based statements (products, variants, prices, search words), each taking the batch
 * as one JSON parameter, so a thousand products cost four round trips, not thousands.
 */

/** An option value as the option filter and facets read it: `color=black`. */
export const optionKey = (name: string, value: string): string =>
  `${name.toLowerCase()}=${value.toLowerCase()}`;

/** Words a misspelt query word may be corrected to: of titles, brands, categories, option values. */
export function searchWords(p: CatalogProductInput): string[] {
  const text = [
    p.title,
    p.brand ?? '',
    ...p.categories,
    ...p.options.flatMap((o) => [o.name, ...o.values]),
    ...p.tags,
  ].join(' ');
  return [
    ...new Set(
      text
        .toLowerCase()
        .split(/[^\p{L}\p{N}]+/u)
        .filter((w) => w.length >= 3 && w.length <= 40 && !/^\d+$/.test(w)),
    ),
  ];
}

const mediaJson = (m: readonly Media[]) =>
  m.map((x) => ({
    type: x.type,
    url: x.url,
    ...(x.altText !== undefined ? { alt_text: x.altText } : {}),
    ...(x.width !== undefined ? { width: x.width } : {}),
    ...(x.height !== undefined ? { height: x.height } : {}),
  }));

/** The writes of writeProducts; the upserts' clauses apart, which a fresh load does without. */
const GROUPS_INSERT = `INSERT INTO catalog_product_groups (product_id, handle, title, description_plain, description_html, url,
        brand, categories, category_paths, condition, media, options, tags, category_text, option_text, source,
        content_hash, option_values)
     SELECT x.product_id, x.handle, x.title, x.description_plain, x.description_html, x.url, x.brand,
            ARRAY(SELECT jsonb_array_elements_text(x.categories)), ARRAY(SELECT jsonb_array_elements_text(x.category_paths)),
            x.condition, x.media, x.options, ARRAY(SELECT jsonb_array_elements_text(x.tags)), x.category_text,
            x.option_text, $2, x.content_hash,
            ARRAY(SELECT lower(v) FROM jsonb_array_elements(x.options) o, jsonb_array_elements_text(o->'values') v)
       FROM jsonb_to_recordset($1::jsonb) AS x(product_id text, handle text, title text, description_plain text,
            description_html text, url text, brand text, categories jsonb, category_paths jsonb, condition text,
            media jsonb, options jsonb, tags jsonb, category_text text, option_text text, content_hash text)`;
const GROUPS_UPSERT = `     ON CONFLICT (product_id) DO UPDATE SET handle = EXCLUDED.handle, title = EXCLUDED.title,
        description_plain = EXCLUDED.description_plain, description_html = EXCLUDED.description_html,
        url = EXCLUDED.url, brand = EXCLUDED.brand, categories = EXCLUDED.categories,
        category_paths = EXCLUDED.category_paths, condition = EXCLUDED.condition, media = EXCLUDED.media,
        options = EXCLUDED.options, tags = EXCLUDED.tags, category_text = EXCLUDED.category_text,
        option_text = EXCLUDED.option_text, source = EXCLUDED.source, content_hash = EXCLUDED.content_hash,
        option_values = EXCLUDED.option_values,
        updated_at = now()
      WHERE catalog_product_groups.content_hash IS DISTINCT FROM EXCLUDED.content_hash
         OR EXCLUDED.content_hash = ''`;

const VARIANTS_INSERT = `INSERT INTO catalog_products (sku, name, category, inventory_level, product_id, variant_id, title, position,
        options, option_keys, barcodes, availability, media, url, seller, description)
     SELECT x.sku, x.name, x.category, x.inventory_level, x.product_id, x.variant_id, x.title, x.position,
            x.options, ARRAY(SELECT jsonb_array_elements_text(x.option_keys)), x.barcodes, x.availability,
            x.media, x.url, x.seller, x.description
       FROM jsonb_to_recordset($1::jsonb) AS x(sku text, name text, category text, inventory_level int,
            product_id text, variant_id text, title text, position int, options jsonb, option_keys jsonb,
            barcodes jsonb, availability text, media jsonb, url text, seller text, description jsonb)`;
const VARIANTS_UPSERT = `     ON CONFLICT (sku) DO UPDATE SET name = EXCLUDED.name, category = EXCLUDED.category,
        inventory_level = EXCLUDED.inventory_level, product_id = EXCLUDED.product_id,
        variant_id = EXCLUDED.variant_id, title = EXCLUDED.title, position = EXCLUDED.position,
        options = EXCLUDED.options, option_keys = EXCLUDED.option_keys, barcodes = EXCLUDED.barcodes,
        availability = EXCLUDED.availability,
        media = EXCLUDED.media, url = EXCLUDED.url, seller = EXCLUDED.seller, description = EXCLUDED.description
      WHERE (catalog_products.name, catalog_products.category, catalog_products.inventory_level,
             catalog_products.product_id, catalog_products.variant_id, catalog_products.title,
             catalog_products.position, catalog_products.options, catalog_products.barcodes,
             catalog_products.availability, catalog_products.media, catalog_products.url, catalog_products.seller,
             catalog_products.description)
         IS DISTINCT FROM (EXCLUDED.name, EXCLUDED.category, EXCLUDED.inventory_level, EXCLUDED.product_id,
             EXCLUDED.variant_id, EXCLUDED.title, EXCLUDED.position, EXCLUDED.options, EXCLUDED.barcodes,
             EXCLUDED.availability, EXCLUDED.media, EXCLUDED.url, EXCLUDED.seller, EXCLUDED.description)
     RETURNING sku`;

const PRICES_INSERT = `INSERT INTO catalog_base_prices (sku, currency, amount, list_amount)
     SELECT x.sku, x.currency, x.amount, x.list_amount
       FROM jsonb_to_recordset($1::jsonb) AS x(sku text, currency text, amount numeric, list_amount numeric)`;
const PRICES_UPSERT = `     ON CONFLICT (sku, currency) DO UPDATE SET amount = EXCLUDED.amount, list_amount = EXCLUDED.list_amount,
        updated_at = now()
      WHERE (catalog_base_prices.amount, catalog_base_prices.list_amount)
            IS DISTINCT FROM (EXCLUDED.amount, EXCLUDED.list_amount)
     RETURNING sku`;

/** What changed for the prices and stock other instances keep (events.ts). */
export interface ProductsWritten {
  /** SKUs whose base price, stock or availability changed, or which are new. */
  readonly changedSkus: readonly string[];
  /** SKUs that are gone (their product dropped them, or the product is gone). */
  readonly removedSkus: readonly string[];
}

/**
 * Writes whole products: each replaces what was stored under its product id (variants it no
 * longer has are removed, with their prices; currencies it no longer prices are removed). Run it
 * in a transaction. `hash` of each product lets an unchanged product cost no write. `fresh`: none
 * of the products is stored yet (the seed of an empty catalog), so nothing of theirs is removed.
 */
export async function writeProducts(
  q: Queryable,
  products: readonly (CatalogProductInput & { hash?: string })[],
  source: 'seed' | 'feed',
  o: { fresh?: boolean } = {},
): Promise<ProductsWritten> {
  if (products.length === 0) return { changedSkus: [], removedSkus: [] };
  const upsert = (insert: string, clause: string) => (o.fresh ? insert : `${insert}\n${clause}`);
  const groups = products.map((p) => ({
    product_id: p.productId,
    handle: p.handle ?? null,
    title: p.title,
    description_plain: p.description.plain,
    description_html: p.description.html ?? null,
    url: p.url ?? null,
    brand: p.brand ?? null,
    categories: p.categories,
    category_paths: categoryPaths(p.categories),
    condition: p.condition,
    media: mediaJson(p.media),
    options: p.options,
    tags: p.tags,
    category_text: p.categories.join(' '),
    option_text: [...p.options.flatMap((o) => o.values), ...p.tags].join(' '),
    content_hash: p.hash ?? '',
  }));
  await q.query(upsert(GROUPS_INSERT, GROUPS_UPSERT), [JSON.stringify(groups), source]);

  const variants = products.flatMap((p) =>
    p.variants.map((v, position) => ({
      sku: v.sku,
      name: v.name,
      category: v.category,
      inventory_level: v.inventoryLevel,
      product_id: p.productId,
      variant_id: v.variantId,
      title: v.title,
      position,
      options: v.options,
      option_keys: v.options.map((o) => optionKey(o.name, o.value)),
      barcodes: v.barcodes,
      availability: v.availability ?? null,
      media: mediaJson(v.media),
      url: v.url ?? null,
      seller: v.seller ?? null,
      description: v.description ?? null,
    })),
  );
  const skus = variants.map((v) => v.sku);
  const removed = o.fresh
    ? []
    : await q.query<{ sku: string }>(
        `DELETE FROM catalog_products WHERE product_id = ANY($1::text[]) AND NOT (sku = ANY($2::text[])) RETURNING sku`,
        [products.map((p) => p.productId), skus],
      );
  const changedVariants = await q.query<{ sku: string }>(upsert(VARIANTS_INSERT, VARIANTS_UPSERT), [
    JSON.stringify(variants),
  ]);

  const prices = products.flatMap((p) =>
    p.variants.flatMap((v) =>
      Object.entries(v.prices).map(([currency, amount]) => ({
        sku: v.sku,
        currency,
        amount,
        list_amount: v.listPrices?.[currency] ?? null,
      })),
    ),
  );
  if (!o.fresh)
    await q.query(
      `DELETE FROM catalog_base_prices bp WHERE bp.sku = ANY($1::text[])
        AND NOT EXISTS (SELECT 1 FROM jsonb_to_recordset($2::jsonb) AS x(sku text, currency text)
                         WHERE x.sku = bp.sku AND x.currency = bp.currency)`,
      [skus, JSON.stringify(prices)],
    );
  const changedPrices = await q.query<{ sku: string }>(upsert(PRICES_INSERT, PRICES_UPSERT), [
    JSON.stringify(prices),
  ]);

  const words = [...new Set(products.flatMap(searchWords))];
  if (words.length > 0)
    await q.query(
      'INSERT INTO catalog_search_words (word) SELECT unnest($1::text[]) ON CONFLICT (word) DO NOTHING',
      [words],
    );
  return {
    changedSkus: o.fresh ? skus : [...new Set([...changedVariants, ...changedPrices].map((r) => r.sku))],
    removedSkus: removed.map((r) => r.sku),
  };
}

/** Removes products (their variants and prices with them); returns the SKUs removed. */
export async function removeProducts(q: Queryable, productIds: readonly string[]): Promise<string[]> {
  if (productIds.length === 0) return [];
  const rows = await q.query<{ sku: string }>(
    'SELECT sku FROM catalog_products WHERE product_id = ANY($1::text[])',
    [productIds],
  );
  await q.query('DELETE FROM catalog_product_groups WHERE product_id = ANY($1::text[])', [productIds]);
  return rows.map((r) => r.sku);
}

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

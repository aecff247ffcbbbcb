import type { Queryable } from '../../../lib/db/index.ts';
import { type CatalogProductInput, categoryPaths, mediaJson } from './model.ts';

/**
 * Products and their variants written in SQL, for the seed and the feed import: a batch is
 * written as a few set-based statements (products, variants, prices, search words), each taking
 * the batch as one JSON parameter, so a thousand products cost a few round trips, not thousands.
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

/** The writes of writeProducts; the upserts' clauses apart, which a fresh load does without. */
const GROUPS_INSERT = `INSERT INTO catalog_product_groups (product_id, handle, title, description_plain, description_html, url,
        brand, categories, category_paths, condition, media, options, tags, category_text, option_text, source,
        content_hash, option_values, variant_option_keys)
     SELECT x.product_id, x.handle, x.title, x.description_plain, x.description_html, x.url, x.brand,
            ARRAY(SELECT jsonb_array_elements_text(x.categories)), ARRAY(SELECT jsonb_array_elements_text(x.category_paths)),
            x.condition, x.media, x.options, ARRAY(SELECT jsonb_array_elements_text(x.tags)), x.category_text,
            x.option_text, $2, x.content_hash,
            ARRAY(SELECT lower(v) FROM jsonb_array_elements(x.options) o, jsonb_array_elements_text(o->'values') v),
            ARRAY(SELECT jsonb_array_elements_text(x.variant_option_keys))
       FROM jsonb_to_recordset($1::jsonb) AS x(product_id text, handle text, title text, description_plain text,
            description_html text, url text, brand text, categories jsonb, category_paths jsonb, condition text,
            media jsonb, options jsonb, tags jsonb, category_text text, option_text text, content_hash text,
            variant_option_keys jsonb)`;
const GROUPS_UPSERT = `     ON CONFLICT (product_id) DO UPDATE SET handle = EXCLUDED.handle, title = EXCLUDED.title,
        description_plain = EXCLUDED.description_plain, description_html = EXCLUDED.description_html,
        url = EXCLUDED.url, brand = EXCLUDED.brand, categories = EXCLUDED.categories,
        category_paths = EXCLUDED.category_paths, condition = EXCLUDED.condition, media = EXCLUDED.media,
        options = EXCLUDED.options, tags = EXCLUDED.tags, category_text = EXCLUDED.category_text,
        option_text = EXCLUDED.option_text, source = EXCLUDED.source, content_hash = EXCLUDED.content_hash,
        option_values = EXCLUDED.option_values, variant_option_keys = EXCLUDED.variant_option_keys,
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
  /** SKUs whose base price, stock or availability changed, which are new, or whose product changed (its title, texts, categories or options). */
  readonly changedSkus: readonly string[];
  /** SKUs that are gone (their product dropped them, or the product is gone). */
  readonly removedSkus: readonly string[];
}

/** The catalog_product_groups rows of `products`, as GROUPS_INSERT reads them. */
const groupRows = (products: readonly (CatalogProductInput & { hash?: string })[]) =>
  products.map((p) => ({
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
    variant_option_keys: [
      ...new Set(p.variants.flatMap((v) => v.options.map((o) => optionKey(o.name, o.value)))),
    ].sort(),
  }));

/** The catalog_products rows (variants) of `products`, as VARIANTS_INSERT reads them. */
const variantRows = (products: readonly CatalogProductInput[]) =>
  products.flatMap((p) =>
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

/** The catalog_base_prices rows of `products`, as PRICES_INSERT reads them. */
const priceRows = (products: readonly CatalogProductInput[]) =>
  products.flatMap((p) =>
    p.variants.flatMap((v) =>
      Object.entries(v.prices).map(([currency, amount]) => ({
        sku: v.sku,
        currency,
        amount,
        list_amount: v.listPrices?.[currency] ?? null,
      })),
    ),
  );

/**
 * Runs `write` with the foreign keys' per-row checks off (session_replication_role = replica,
 * for this transaction, then back), when the role may (a superuser; PGlite always is). For
 * rows consistent by construction only: every variant written names a product of the same
 * batch, every price a variant of it. The deletes stay outside: their cascades are triggers
 * too. On the embedded store the checks were a quarter of a commit's inserts.
 */
async function unchecked<T>(q: Queryable, write: () => Promise<T>): Promise<T> {
  const [set] = await q.query<{ was: string }>(
    `SELECT current_setting('session_replication_role') AS was,
            set_config('session_replication_role', 'replica', true) AS now
      WHERE current_setting('is_superuser') = 'on'`,
  );
  const out = await write();
  if (set && set.was !== 'replica')
    await q.query(`SELECT set_config('session_replication_role', $1, true)`, [set.was]);
  return out;
}

/**
 * What of a batch the catalog may hold already (the import's commit knows): its products stored
 * before, and its SKUs not allocated now. Only their variants and prices may need removing: a new
 * product has no variants yet, and a SKU allocated now no prices.
 */
export interface StoredBefore {
  readonly productIds: readonly string[];
  readonly skus: readonly string[];
}

/**
 * Writes whole products: each replaces what was stored under its product id (variants it no
 * longer has are removed, with their prices; currencies it no longer prices are removed). Run it
 * in a transaction. `hash` of each product lets an unchanged product cost no write. `fresh`: none
 * of the products is stored yet (the seed of an empty catalog), so nothing of theirs is removed;
 * `stored`: what of them may be (the removals look at those only; absent, at all of them).
 */
export async function writeProducts(
  q: Queryable,
  products: readonly (CatalogProductInput & { hash?: string })[],
  source: 'seed' | 'feed',
  o: { fresh?: boolean; stored?: StoredBefore } = {},
): Promise<ProductsWritten> {
  if (products.length === 0) return { changedSkus: [], removedSkus: [] };
  const upsert = (insert: string, clause: string) => (o.fresh ? insert : `${insert}\n${clause}`);
  const variants = variantRows(products);
  const prices = priceRows(products);
  const skus = variants.map((v) => v.sku);
  const storedIds = o.fresh ? [] : (o.stored?.productIds ?? products.map((p) => p.productId));
  const maybe = o.stored && new Set(o.stored.skus);
  const storedSkus = o.fresh ? [] : maybe ? skus.filter((s) => maybe.has(s)) : skus;
  const removed =
    storedIds.length === 0
      ? []
      : await q.query<{ sku: string }>(
          `DELETE FROM catalog_products WHERE product_id = ANY($1::text[]) AND NOT (sku = ANY($2::text[])) RETURNING sku`,
          [storedIds, skus],
        );
  if (storedSkus.length > 0)
    await q.query(
      `DELETE FROM catalog_base_prices bp WHERE bp.sku = ANY($1::text[])
        AND NOT EXISTS (SELECT 1 FROM jsonb_to_recordset($2::jsonb) AS x(sku text, currency text)
                         WHERE x.sku = bp.sku AND x.currency = bp.currency)`,
      [storedSkus, JSON.stringify(prices)],
    );
  // The products' option values are counted by the database (option-values.ts).
  const groups = JSON.stringify(groupRows(products));
  const changed = await unchecked(q, async () => {
    // A product whose own fields changed (title, description, brand, categories, options: the
    // search vector) with no variant or price change still changes what a search finds and
    // shows: its SKUs are announced as changed, so every process forgets its remembered
    // searches (search/remembered.ts) and cached entries of them.
    const changedGroups = new Set(
      (
        await q.query<{ product_id: string }>(
          o.fresh ? GROUPS_INSERT : `${upsert(GROUPS_INSERT, GROUPS_UPSERT)}\n     RETURNING product_id`,
          [groups, source],
        )
      ).map((r) => r.product_id),
    );
    const changedVariants = await q.query<{ sku: string }>(upsert(VARIANTS_INSERT, VARIANTS_UPSERT), [
      JSON.stringify(variants),
    ]);
    const changedPrices = await q.query<{ sku: string }>(upsert(PRICES_INSERT, PRICES_UPSERT), [
      JSON.stringify(prices),
    ]);
    return [
      ...changedVariants.map((r) => r.sku),
      ...changedPrices.map((r) => r.sku),
      ...variants.filter((v) => changedGroups.has(v.product_id)).map((v) => v.sku),
    ];
  });
  const words = [...new Set(products.flatMap(searchWords))];
  if (words.length > 0)
    await q.query(
      'INSERT INTO catalog_search_words (word) SELECT unnest($1::text[]) ON CONFLICT (word) DO NOTHING',
      [words],
    );
  return { changedSkus: o.fresh ? skus : [...new Set(changed)], removedSkus: removed.map((r) => r.sku) };
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

import { type Db, type Migration, migrate } from '../../../lib/db/index.ts';
import { trigram, trigramSchema } from './migrations-trigram.ts';
import { OPTION_VALUE_MIGRATIONS } from './option-values.ts';

export { trigramSchema } from './migrations-trigram.ts';

import { FRESHNESS_KEY } from './search/freshness-key.ts';

/**
 * The catalog: products (groups of variants, with what a merchant publishes about them), their
 * variants (the SKUs, `catalog_products` since the first release), base prices per currency
 * (the spec's "source of truth"), and what search needs. One statement per migration: `migrate`
 * runs each through query(), which PGlite limits to one.
 */
const base: readonly Migration[] = [
  {
    id: 'pricing:001-catalog-products',
    sql: `CREATE TABLE catalog_products (
        sku text PRIMARY KEY CHECK (sku ~ '^SKU-[A-Z]{3}-[0-9]{6}$'),
        name text NOT NULL,
        category text NOT NULL,
        inventory_level integer NOT NULL CHECK (inventory_level >= 0)
      )`,
  },
  {
    id: 'pricing:002-catalog-products-category',
    sql: 'CREATE INDEX catalog_products_category ON catalog_products (category)',
  },
  {
    id: 'pricing:003-catalog-base-prices',
    sql: `CREATE TABLE catalog_base_prices (
        sku text NOT NULL REFERENCES catalog_products (sku),
        currency text NOT NULL CHECK (currency ~ '^[A-Z]{3}$'),
        amount numeric(14, 2) NOT NULL CHECK (amount > 0),
        updated_at timestamptz NOT NULL DEFAULT now(),
        PRIMARY KEY (sku, currency)
      )`,
  },
  {
    // A product groups variants. The text columns feed the weighted search vector (a generated
    // column may only use immutable functions, so lists are joined by the writer): title and
    // brand weigh most, then the taxonomy, then option values and tags, then the description.
    id: 'pricing:004-catalog-product-groups',
    sql: `CREATE TABLE catalog_product_groups (
        product_id text PRIMARY KEY CHECK (char_length(product_id) BETWEEN 1 AND 256),
        handle text,
        title text NOT NULL,
        description_plain text NOT NULL DEFAULT '',
        description_html text,
        url text,
        brand text,
        categories text[] NOT NULL DEFAULT '{}',
        category_paths text[] NOT NULL DEFAULT '{}',
        condition text NOT NULL DEFAULT 'new',
        media jsonb NOT NULL DEFAULT '[]',
        options jsonb NOT NULL DEFAULT '[]',
        tags text[] NOT NULL DEFAULT '{}',
        category_text text NOT NULL DEFAULT '',
        option_text text NOT NULL DEFAULT '',
        source text NOT NULL DEFAULT 'seed',
        content_hash text NOT NULL DEFAULT '',
        updated_at timestamptz NOT NULL DEFAULT now(),
        search tsvector GENERATED ALWAYS AS (
          setweight(to_tsvector('english', title), 'A') ||
          setweight(to_tsvector('english', coalesce(brand, '')), 'A') ||
          setweight(to_tsvector('english', category_text), 'B') ||
          setweight(to_tsvector('english', option_text), 'C') ||
          setweight(to_tsvector('english', description_plain), 'D')
        ) STORED
      )`,
  },
  {
    id: 'pricing:005-catalog-product-groups-search',
    sql: 'CREATE INDEX catalog_product_groups_search ON catalog_product_groups USING gin (search) WITH (fastupdate = off)',
  },
  {
    id: 'pricing:006-catalog-product-groups-category-paths',
    sql: 'CREATE INDEX catalog_product_groups_category_paths ON catalog_product_groups USING gin (category_paths) WITH (fastupdate = off)',
  },
  {
    id: 'pricing:007-catalog-product-groups-brand',
    sql: 'CREATE INDEX catalog_product_groups_brand ON catalog_product_groups (lower(brand))',
  },
  { id: 'pricing:008-variant-product', sql: 'ALTER TABLE catalog_products ADD COLUMN product_id text' },
  { id: 'pricing:009-variant-id', sql: 'ALTER TABLE catalog_products ADD COLUMN variant_id text' },
  { id: 'pricing:010-variant-title', sql: 'ALTER TABLE catalog_products ADD COLUMN title text' },
  {
    id: 'pricing:011-variant-position',
    sql: 'ALTER TABLE catalog_products ADD COLUMN position integer NOT NULL DEFAULT 0',
  },
  {
    id: 'pricing:012-variant-options',
    sql: `ALTER TABLE catalog_products ADD COLUMN options jsonb NOT NULL DEFAULT '[]'`,
  },
  {
    id: 'pricing:013-variant-barcodes',
    sql: `ALTER TABLE catalog_products ADD COLUMN barcodes jsonb NOT NULL DEFAULT '[]'`,
  },
  {
    id: 'pricing:014-variant-availability',
    sql: 'ALTER TABLE catalog_products ADD COLUMN availability text',
  },
  {
    id: 'pricing:015-variant-media',
    sql: `ALTER TABLE catalog_products ADD COLUMN media jsonb NOT NULL DEFAULT '[]'`,
  },
  { id: 'pricing:016-variant-url', sql: 'ALTER TABLE catalog_products ADD COLUMN url text' },
  { id: 'pricing:017-variant-seller', sql: 'ALTER TABLE catalog_products ADD COLUMN seller text' },
  { id: 'pricing:018-variant-description', sql: 'ALTER TABLE catalog_products ADD COLUMN description jsonb' },
  {
    // A catalog seeded before products existed: each SKU becomes its own product, its name the
    // title and its category the taxonomy, so nothing is lost and search finds it.
    id: 'pricing:019-backfill-product-groups',
    sql: `INSERT INTO catalog_product_groups (product_id, title, categories, category_paths, category_text)
          SELECT 'prod_' || lower(replace(substr(sku, 5), '-', '_')), name, ARRAY[initcap(category)],
                 ARRAY[lower(category)], initcap(category)
            FROM catalog_products WHERE product_id IS NULL`,
  },
  {
    id: 'pricing:020-backfill-variants',
    sql: `UPDATE catalog_products
             SET product_id = 'prod_' || lower(replace(substr(sku, 5), '-', '_')), variant_id = sku, title = name
           WHERE product_id IS NULL`,
  },
  {
    id: 'pricing:021-variant-product-required',
    sql: 'ALTER TABLE catalog_products ALTER COLUMN product_id SET NOT NULL',
  },
  {
    id: 'pricing:022-variant-id-required',
    sql: 'ALTER TABLE catalog_products ALTER COLUMN variant_id SET NOT NULL',
  },
  {
    id: 'pricing:023-variant-title-required',
    sql: 'ALTER TABLE catalog_products ALTER COLUMN title SET NOT NULL',
  },
  {
    id: 'pricing:024-variant-product-fk',
    sql: `ALTER TABLE catalog_products ADD CONSTRAINT catalog_products_product
          FOREIGN KEY (product_id) REFERENCES catalog_product_groups (product_id) ON DELETE CASCADE`,
  },
  {
    id: 'pricing:025-variant-id-unique',
    sql: 'CREATE UNIQUE INDEX catalog_products_variant_id ON catalog_products (variant_id)',
  },
  {
    id: 'pricing:026-variants-by-product',
    sql: 'CREATE INDEX catalog_products_product ON catalog_products (product_id, position)',
  },
  {
    id: 'pricing:027-variant-options-index',
    sql: 'CREATE INDEX catalog_products_options ON catalog_products USING gin (options jsonb_path_ops) WITH (fastupdate = off)',
  },
  {
    id: 'pricing:028-list-prices',
    sql: 'ALTER TABLE catalog_base_prices ADD COLUMN list_amount numeric(14, 2) CHECK (list_amount > 0)',
  },
  {
    // Removing a product removes its variants (above) and their prices.
    id: 'pricing:029-prices-cascade',
    sql: `ALTER TABLE catalog_base_prices DROP CONSTRAINT catalog_base_prices_sku_fkey,
          ADD CONSTRAINT catalog_base_prices_sku_fkey FOREIGN KEY (sku) REFERENCES catalog_products (sku) ON DELETE CASCADE`,
  },
  {
    id: 'pricing:030-prices-by-currency-amount',
    sql: 'CREATE INDEX catalog_base_prices_currency_amount ON catalog_base_prices (currency, amount)',
  },
  {
    // A merchant's variant keeps its SKU for good: a product removed by one full import and
    // published again by the next gets its old SKU back (orders name SKUs).
    id: 'pricing:031-sku-map',
    sql: `CREATE TABLE catalog_sku_map (
        variant_id text PRIMARY KEY,
        sku text NOT NULL UNIQUE CHECK (sku ~ '^SKU-[A-Z]{3}-[0-9]{6}$')
      )`,
  },
  {
    // The words of titles, brands, categories and option values, for correcting a misspelt query
    // word to the nearest one the catalog has (pg_trgm; search/sql.ts).
    id: 'pricing:032-search-words',
    sql: 'CREATE TABLE catalog_search_words (word text PRIMARY KEY)',
  },
  {
    // A variant's option values as `name=value`, lower case: what the option filter and the
    // option facets read (the writer derives it from `options`).
    id: 'pricing:035-variant-option-keys',
    sql: `ALTER TABLE catalog_products ADD COLUMN option_keys text[] NOT NULL DEFAULT '{}'`,
  },
  {
    id: 'pricing:036-variant-option-keys-index',
    sql: 'CREATE INDEX catalog_products_option_keys ON catalog_products USING gin (option_keys) WITH (fastupdate = off)',
  },
  {
    // A merchant's feed import (import/): opened, appended to in chunks, committed (docs/catalog.md).
    id: 'pricing:037-catalog-imports',
    sql: `CREATE TABLE catalog_imports (
        id text PRIMARY KEY,
        mode text NOT NULL CHECK (mode IN ('FULL', 'PARTIAL')),
        status text NOT NULL CHECK (status IN ('OPEN', 'COMMITTING', 'DONE', 'FAILED', 'CANCELLED')),
        metadata jsonb NOT NULL,
        lines_read integer NOT NULL DEFAULT 0,
        accepted integer NOT NULL DEFAULT 0,
        refused integer NOT NULL DEFAULT 0,
        created integer NOT NULL DEFAULT 0,
        updated integer NOT NULL DEFAULT 0,
        unchanged integer NOT NULL DEFAULT 0,
        removed integer NOT NULL DEFAULT 0,
        committed integer NOT NULL DEFAULT 0,
        replaced boolean,
        note text,
        started_by text,
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now(),
        finished_at timestamptz
      )`,
  },
  {
    // The accepted lines of an import, each a whole feed Product, until its commit applies them.
    id: 'pricing:038-catalog-import-products',
    sql: `CREATE TABLE catalog_import_products (
        import_id text NOT NULL REFERENCES catalog_imports (id) ON DELETE CASCADE,
        product_id text NOT NULL,
        line integer NOT NULL,
        product jsonb NOT NULL,
        hash text NOT NULL,
        PRIMARY KEY (import_id, product_id)
      )`,
  },
  {
    id: 'pricing:039-catalog-import-products-by-line',
    sql: 'CREATE INDEX catalog_import_products_line ON catalog_import_products (import_id, line)',
  },
  {
    // The refused lines of an import (the first 1,000; the count is in catalog_imports.refused).
    id: 'pricing:040-catalog-import-errors',
    sql: `CREATE TABLE catalog_import_errors (
        import_id text NOT NULL REFERENCES catalog_imports (id) ON DELETE CASCADE,
        line integer NOT NULL,
        path text NOT NULL,
        reason text NOT NULL,
        PRIMARY KEY (import_id, line)
      )`,
  },
  {
    // The feeds this catalog is pushed to on agent platforms' Feed APIs (feed/push.ts).
    id: 'pricing:041-catalog-feed-targets',
    sql: `CREATE TABLE catalog_feed_targets (
        api_url text NOT NULL,
        currency text NOT NULL,
        feed_id text NOT NULL,
        created_at timestamptz NOT NULL DEFAULT now(),
        PRIMARY KEY (api_url, currency)
      )`,
  },
  {
    // A product's option values in lower case, for the rank's lift of an option value the query
    // names (search/sql.ts): an array overlap per match, where unnesting `options` (jsonb) for
    // every match cost the embedded store about a fifth of a search. The writer fills it.
    id: 'pricing:043-product-option-values',
    sql: `ALTER TABLE catalog_product_groups ADD COLUMN option_values text[] NOT NULL DEFAULT '{}'`,
  },
  {
    id: 'pricing:044-product-option-values-backfill',
    sql: `UPDATE catalog_product_groups
             SET option_values = ARRAY(SELECT lower(v) FROM jsonb_array_elements(options) o,
                                              jsonb_array_elements_text(o->'values') v)`,
  },
  {
    // No statistics for the columns that are only shown, never searched, filtered, joined or
    // sorted on (search/sql.ts, products-sql.ts): ANALYZE after each import (import/service.ts)
    // sorted their sampled values, jsonb ones costly to compare, for figures no plan reads.
    // On the embedded store, 16,000 SKUs: ANALYZE of both tables 780 → 370 ms (scratch
    // measurement, steady runs of three each). A query that comes to filter on one sets it back.
    id: 'pricing:045-catalog-product-groups-statistics',
    sql: `ALTER TABLE catalog_product_groups ALTER COLUMN media SET STATISTICS 0,
            ALTER COLUMN options SET STATISTICS 0, ALTER COLUMN description_html SET STATISTICS 0,
            ALTER COLUMN description_plain SET STATISTICS 0, ALTER COLUMN url SET STATISTICS 0`,
  },
  {
    id: 'pricing:046-catalog-products-statistics',
    sql: `ALTER TABLE catalog_products ALTER COLUMN media SET STATISTICS 0,
            ALTER COLUMN options SET STATISTICS 0, ALTER COLUMN barcodes SET STATISTICS 0,
            ALTER COLUMN description SET STATISTICS 0, ALTER COLUMN url SET STATISTICS 0`,
  },
  {
    // Whether the catalog's statistics were refreshed since an import's changes (import/analyse.ts):
    // the imports before this column were each followed by an ANALYZE.
    id: 'pricing:047-catalog-imports-analysed',
    sql: 'ALTER TABLE catalog_imports ADD COLUMN analysed boolean NOT NULL DEFAULT true',
  },
  {
    id: 'pricing:048-catalog-imports-analysed-default',
    sql: 'ALTER TABLE catalog_imports ALTER COLUMN analysed SET DEFAULT false',
  },
  {
    // Every option key of a product's variants (`name=value`, as catalog_products.option_keys),
    // for an option filter to narrow the products by an index before it checks their variants
    // (search/statement.ts). At 1,000,000 products, Office > Chairs in Green was a semi-join of
    // 13,685 chairs with 35,329 green variants: 180-200 ms; narrowed first, 27-34 ms
    // (docs/benchmarks.md, "Catalog at 1,000,000 products"). The writer fills it.
    id: 'pricing:049-product-variant-option-keys',
    sql: `ALTER TABLE catalog_product_groups ADD COLUMN variant_option_keys text[] NOT NULL DEFAULT '{}'`,
  },
  {
    id: 'pricing:050-product-variant-option-keys-backfill',
    sql: `UPDATE catalog_product_groups g
             SET variant_option_keys = ARRAY(SELECT DISTINCT k FROM catalog_products v, unnest(v.option_keys) k
                                              WHERE v.product_id = g.product_id ORDER BY k)`,
  },
  {
    id: 'pricing:051-product-variant-option-keys-index',
    sql: 'CREATE INDEX catalog_product_groups_variant_option_keys ON catalog_product_groups USING gin (variant_option_keys) WITH (fastupdate = off)',
  },
  {
    // A broad search ranks only the freshest matches (search/degrade.ts): this index finds the
    // freshness threshold and narrows the text index's matches to the products above it. The
    // hash orders the products changed at once (a seed, an import's batch) stably but not by
    // id: ids group by category, and a slice of them would hold one category only. One column,
    // not (updated_at, md5): the planner estimates a range on it from its own statistics, so it
    // intersects the two indexes; on a row comparison it saw only updated_at, the same for every
    // product of a seed, and read every match's row (docs/benchmarks.md).
    id: 'pricing:052-product-groups-freshness-index',
    sql: `CREATE INDEX catalog_product_groups_freshness ON catalog_product_groups ((${FRESHNESS_KEY}))`,
  },
  {
    // As 045 and 046: no statistics for more columns that no statement filters, joins, groups or
    // sorts on (search/, products-sql.ts, catalog.ts, feed/): a title is searched through
    // lower(title), whose trigram index keeps its own; categories through category_paths; the
    // texts inside the search vector through the vector. An import's ANALYZE sorted their
    // samples for nothing (PostgreSQL, 11,735 products and 26,000 variants: handle, title,
    // categories and tags were 35–125 ms each of the products' 620 ms; scratch, load 10).
    id: 'pricing:053-catalog-shown-statistics',
    sql: `ALTER TABLE catalog_product_groups ALTER COLUMN handle SET STATISTICS 0,
            ALTER COLUMN title SET STATISTICS 0, ALTER COLUMN categories SET STATISTICS 0,
            ALTER COLUMN tags SET STATISTICS 0, ALTER COLUMN category_text SET STATISTICS 0,
            ALTER COLUMN option_text SET STATISTICS 0, ALTER COLUMN source SET STATISTICS 0,
            ALTER COLUMN content_hash SET STATISTICS 0`,
  },
  {
    id: 'pricing:054-catalog-variants-shown-statistics',
    sql: `ALTER TABLE catalog_products ALTER COLUMN name SET STATISTICS 0,
            ALTER COLUMN title SET STATISTICS 0, ALTER COLUMN seller SET STATISTICS 0`,
  },
  {
    // A staged line is kept as its text (strict JSON, judged whole: import/stage.ts), not as
    // jsonb: nothing reads it in SQL, and the commit parses it in JavaScript either way. Into
    // jsonb, 7,204 lines (16.8 MB) took PostgreSQL 673 ms to parse and 259 ms to print back,
    // as text 35 ms and 95 ms (psql, scratch tables, load 1.1). The table holds only the lines
    // of imports not yet committed.
    id: 'pricing:055-import-staged-text',
    sql: 'ALTER TABLE catalog_import_products ALTER COLUMN product TYPE text USING product::text',
  },
];

export interface CatalogSchema {
  /** The schema that holds pg_trgm's functions, operators and operator classes. */
  readonly trigram: string;
}

/** Makes the catalog's tables what this version needs. */
export async function migrateCatalog(db: Db): Promise<CatalogSchema> {
  const ext = await trigramSchema(db);
  if (!/^[a-z_][a-z0-9_]*$/.test(ext)) throw new Error(`pg_trgm lives in a schema named oddly: ${ext}`);
  await migrate(db, [...base, ...OPTION_VALUE_MIGRATIONS, ...trigram(ext)]);
  return { trigram: ext };
}

import type { Migration } from '../../../lib/db/index.ts';

/**
 * The catalog: products and their base prices per currency (the spec's "source of truth").
 * One statement per migration: `migrate` runs each through query(), which PGlite limits to one.
 */
export const catalogMigrations: readonly Migration[] = [
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
];

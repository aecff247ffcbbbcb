/**
 * catalog_option_values (migrations.ts, 056), which the search reads the catalog's option values
 * from (search/option-words.ts): the writer keeps it (products-write.ts), so it holds exactly the
 * values the products hold, through a seed, products rewritten with other values, and removals.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Db } from '../../lib/db/index.ts';
import { seedCatalog } from '../../subgraphs/pricing/catalog/catalog.ts';
import { migrateCatalog } from '../../subgraphs/pricing/catalog/migrations.ts';
import type { CatalogProductInput } from '../../subgraphs/pricing/catalog/model.ts';
import { PRODUCT_JSON, productOfRow } from '../../subgraphs/pricing/catalog/products-sql.ts';
import { removeProducts, writeProducts } from '../../subgraphs/pricing/catalog/products-write.ts';
import { catalogStores } from './support/catalog-stores.ts';

describe.each(catalogStores('optionvalues'))('the catalog option values table: %s', (_name, open) => {
  let db: Db;
  let drop: () => Promise<void>;

  beforeAll(async () => {
    ({ db, drop } = await open());
    await migrateCatalog(db);
    await seedCatalog(db, 1500);
  }, 120_000);
  afterAll(async () => drop());

  /** The table, and the values and counts the products hold, each sorted. */
  const both = async () => {
    const table = await db.query<{ value: string; n: number }>(
      'SELECT value, products AS n FROM catalog_option_values ORDER BY value',
    );
    const held = await db.query<{ value: string; n: number }>(
      `SELECT v AS value, count(DISTINCT g.product_id)::int AS n
         FROM catalog_product_groups g, unnest(g.option_values) AS v GROUP BY v ORDER BY v`,
    );
    return { table: table.map((r) => [r.value, Number(r.n)]), held: held.map((r) => [r.value, Number(r.n)]) };
  };

  /** Stored products holding option values, as the writer takes them. */
  const stored = async (n: number): Promise<CatalogProductInput[]> => {
    const rows = await db.query<{ p: never }>(
      `SELECT ${PRODUCT_JSON} AS p FROM catalog_product_groups g WHERE cardinality(g.option_values) > 0
        ORDER BY g.product_id LIMIT ${n}`,
    );
    return rows.map((r) => productOfRow(r.p) as unknown as CatalogProductInput);
  };

  it('holds after the seed what the products hold', async () => {
    const { table, held } = await both();
    expect(table.length).toBeGreaterThan(5);
    expect(table).toEqual(held);
  });

  it('follows products rewritten with a new value and without an old one', async () => {
    const products = await stored(3);
    const [first, ...rest] = products;
    if (!first) throw new Error('no product with options');
    const renamed = first.options.map((o, i) =>
      i === 0 ? { ...o, values: ['Ultraviolet', ...o.values.slice(1)] } : o,
    );
    await db.transaction((tx) => writeProducts(tx, [{ ...first, options: renamed }, ...rest], 'feed'));
    const { table, held } = await both();
    expect(table).toEqual(held);
    expect(table.map(([v]) => v)).toContain('ultraviolet');
  });

  it('drops a value when the last product holding it is removed', async () => {
    const [only] = (
      await db.query<{ id: string }>(
        `SELECT g.product_id AS id FROM catalog_product_groups g WHERE 'ultraviolet' = ANY(g.option_values)`,
      )
    ).map((r) => r.id);
    expect(only).toBeDefined();
    const others = (await stored(12)).filter((p) => p.productId !== only).slice(0, 10);
    await db.transaction((tx) => removeProducts(tx, [only as string, ...others.map((p) => p.productId)]));
    const { table, held } = await both();
    expect(table).toEqual(held);
    expect(table.map(([v]) => v)).not.toContain('ultraviolet');
  });
});

/**
 * catalog_option_values (option-values.ts), which the search reads the catalog's option values
 * from (search/option-words.ts): the database keeps it (statement triggers), so it holds exactly
 * the values the products hold, through a seed, products rewritten with other values, removals,
 * two writers of one product at once, and a writer that is not products-write.ts.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Db } from '../../lib/db/index.ts';
import { seedCatalog } from '../../subgraphs/pricing/catalog/catalog.ts';
import { migrateCatalog } from '../../subgraphs/pricing/catalog/migrations.ts';
import type { CatalogProductInput } from '../../subgraphs/pricing/catalog/model.ts';
import { PRODUCT_JSON, productOfRow } from '../../subgraphs/pricing/catalog/products-sql.ts';
import { removeProducts, writeProducts } from '../../subgraphs/pricing/catalog/products-write.ts';
import { catalogStores } from './support/catalog-stores.ts';

describe.each(catalogStores('optionvalues', 3))('the catalog option values table: %s', (_name, open) => {
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

  /** `p` with its first option's values replaced by `value`. */
  const holding = (p: CatalogProductInput, value: string): CatalogProductInput => ({
    ...p,
    options: p.options.map((o, i) => (i === 0 ? { ...o, values: [value] } : o)),
  });

  it('counts exactly when two writers rewrite one product at once (the second waits for the first)', async () => {
    const [p] = await stored(1);
    if (!p) throw new Error('no product with options');
    let release = () => {};
    const held = new Promise<void>((r) => {
      release = r;
    });
    let pid: number | undefined;
    let wrote = () => {};
    const written = new Promise<void>((r) => {
      wrote = r;
    });
    const first = db.transaction(async (tx) => {
      await writeProducts(tx, [holding(p, 'Teal')], 'feed');
      pid = Number((await tx.query<{ pid: number }>('SELECT pg_backend_pid() AS pid'))[0]?.pid);
      wrote();
      await held;
    });
    await written;
    // Both read the product as stored before the first commits; the second's write waits for it.
    const second = db.transaction((tx) => writeProducts(tx, [holding(p, 'Plum')], 'feed'));
    if (db.kind === 'postgres')
      for (let waited = 0; ; waited += 20) {
        const [w] = await db.query<{ n: number }>(
          'SELECT count(*)::int AS n FROM pg_stat_activity WHERE $1 = ANY(pg_blocking_pids(pid))',
          [pid],
        );
        if (Number(w?.n) > 0) break;
        if (waited > 10_000) throw new Error('the second writer never waited for the first');
        await new Promise((r) => setTimeout(r, 20));
      }
    release();
    await Promise.all([first, second]);
    const { table, held: holds } = await both();
    expect(table).toEqual(holds);
    expect(table.map(([v]) => v)).toContain('plum');
    expect(table.map(([v]) => v)).not.toContain('teal');
  });

  it('counts what any writer does to the products, in plain SQL too (an older release, a hand fix)', async () => {
    const [a, b] = await stored(2);
    if (!a || !b) throw new Error('no products with options');
    await db.query(
      `UPDATE catalog_product_groups SET option_values = '{saffron,saffron,ochre}' WHERE product_id = $1`,
      [a.productId],
    );
    await db.query('DELETE FROM catalog_product_groups WHERE product_id = $1', [b.productId]);
    const { table, held } = await both();
    expect(table).toEqual(held);
    expect(table).toContainEqual(['saffron', 1]);
  });
});

/**
 * A fresh PostgreSQL schema (harness/services.ts, freshPostgres) holding the generated catalog
 * of `size` SKUs, seeded from this process with the pricing subgraph's own migrations and seed
 * (subgraphs/pricing/catalog/catalog.ts, seedCatalog): a system started on it finds its catalog
 * there and seeds nothing, so a large catalog costs its seed once, outside the system's heap.
 *   tsx bench/catalog/postgres.ts 100000   (times a seed, then drops it)
 */

import { freshPostgres } from '../../harness/services.ts';
import { openPostgres } from '../../lib/db/postgres.ts';
import { seedCatalog } from '../../subgraphs/pricing/catalog/catalog.ts';
import { migrateCatalog } from '../../subgraphs/pricing/catalog/migrations.ts';

export interface SeededPostgres {
  url: string;
  /** SKUs seeded (variants), products (their groups) and the seed's wall time. */
  skus: number;
  products: number;
  seedSeconds: number;
  drop(): Promise<void>;
}

export async function seededPostgres(size: number): Promise<SeededPostgres> {
  const pg = await freshPostgres('catalog');
  try {
    const db = await openPostgres(pg.url, 2);
    const started = performance.now();
    try {
      await migrateCatalog(db);
      const skus = await seedCatalog(db, size);
      const rows = await db.query<{ n: number }>('SELECT count(*)::int AS n FROM catalog_product_groups');
      return {
        url: pg.url,
        skus,
        products: Number(rows[0]?.n ?? 0),
        seedSeconds: (performance.now() - started) / 1000,
        drop: pg.drop,
      };
    } finally {
      await db.close();
    }
  } catch (err) {
    await pg.drop();
    throw err;
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const s = await seededPostgres(Number(process.argv[2] ?? 100_000));
  console.log(`${s.skus} SKUs, ${s.products} products seeded in ${s.seedSeconds.toFixed(1)} s`);
  await s.drop();
}

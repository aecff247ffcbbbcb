import type { Queryable } from '../../../lib/db/index.ts';

/**
 * A load into an empty catalog (the seed) with its secondary indexes set aside: they are dropped,
 * the rows written, and the indexes made again from their own definitions (`pg_get_indexdef`),
 * each built once from sorted keys. Kept up row by row, the GIN indexes (search vector, title
 * trigrams, category paths) were most of a seed: 100,000 SKUs on PostgreSQL took 28 s, 16 of
 * them the products' statement. Primary keys and unique indexes stay (ON CONFLICT and the
 * foreign keys need them). Run it inside the load's transaction: a reader waits for the commit,
 * and sees the indexes, never a catalog without them; a failed load rolls the drop back.
 */
export const BULK_TABLES = [
  'catalog_product_groups',
  'catalog_products',
  'catalog_base_prices',
  'catalog_search_words',
] as const;

export async function withIndexesSetAside<T>(q: Queryable, load: () => Promise<T>): Promise<T> {
  const indexes = await q.query<{ name: string; def: string }>(
    `SELECT quote_ident(c.relname) AS name, pg_get_indexdef(i.indexrelid) AS def
       FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid
      WHERE i.indrelid = ANY(ARRAY[${BULK_TABLES.map((t) => `to_regclass('${t}')`).join(', ')}]::oid[])
        AND NOT i.indisprimary AND NOT i.indisunique
      ORDER BY c.relname`,
  );
  for (const index of indexes) await q.query(`DROP INDEX ${index.name}`);
  const out = await load();
  // Builds sort in memory up to maintenance_work_mem (64 MB by default), then on disk.
  await q.query(`SELECT set_config('maintenance_work_mem', '256MB', true)`);
  for (const index of indexes) await q.query(index.def);
  return out;
}

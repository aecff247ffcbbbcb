import type { Queryable } from '../../../../lib/db/index.ts';

/**
 * The catalog's GIN indexes (the weighted search vector, category paths, title and word
 * trigrams, option values) are made with `fastupdate = off` (migrations.ts: the embedded store
 * has no autovacuum to merge a pending list). Inserted one row at a time, each row's keys are
 * searched for in each tree, and that was most of an import's commit: 1,866 products into the
 * seeded catalog took 2.4–3.8 s of writes on the embedded store, about a second of it the title
 * trigrams alone. While a commit runs, the indexes gather new keys in their pending lists
 * instead, which GIN merges in bulk (sorted by key) when a list outgrows
 * `gin_pending_list_limit` and once more at the end: 0.9 s of writes and 0.08 s of merging for
 * the same products (scratch measurement, in one sitting, rolled back).
 *
 * At the end the indexes are set back to `fastupdate = off` first (no new key can then enter a
 * list) and their lists merged, so the searches after an import read the same trees as before
 * it. A commit that fails does the same; one whose process died leaves them on until the next
 * commit (a resumed one included) ends, or the next start (`settleBulkIndexing`).
 */
export const CATALOG_GIN_INDEXES = [
  'catalog_product_groups_search',
  'catalog_product_groups_category_paths',
  'catalog_product_groups_title_trgm',
  'catalog_product_groups_variant_option_keys',
  'catalog_products_options',
  'catalog_products_option_keys',
  'catalog_search_words_trgm',
] as const;

/**
 * Before a commit's batches: new keys go to the pending lists. Each ALTER is its own statement,
 * outside the batches' transactions: it locks its index for a moment, not for a whole batch.
 */
export async function startBulkIndexing(q: Queryable): Promise<void> {
  for (const index of CATALOG_GIN_INDEXES) await q.query(`ALTER INDEX ${index} SET (fastupdate = on)`);
}

/** After a commit (done or failed): the lists off, then merged into the trees. */
export async function endBulkIndexing(q: Queryable): Promise<void> {
  for (const index of CATALOG_GIN_INDEXES) {
    await q.query(`ALTER INDEX ${index} SET (fastupdate = off)`);
    await q.query('SELECT gin_clean_pending_list($1::regclass)', [index]);
  }
}

/** At a start: ends a bulk indexing that a process stopped in a commit left on, if any. */
export async function settleBulkIndexing(q: Queryable): Promise<void> {
  const on = await q.query<{ relname: string }>(
    `SELECT c.relname FROM pg_class c
      WHERE c.oid = ANY(ARRAY[${CATALOG_GIN_INDEXES.map((i) => `to_regclass('${i}')`).join(', ')}]::oid[])
        AND 'fastupdate=on' = ANY(c.reloptions)`,
  );
  if (on.length > 0) await endBulkIndexing(q);
}

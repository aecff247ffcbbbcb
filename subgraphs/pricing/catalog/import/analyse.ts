import type { Queryable } from '../../../../lib/db/index.ts';
import { analyseCatalog } from '../catalog.ts';

/**
 * After an import's commit, the catalog's statistics are refreshed (ANALYZE) when the products
 * changed since the last refresh are a large share of the catalog, by autovacuum's own rule
 * (autovacuum_analyze_threshold 50 + autovacuum_analyze_scale_factor 0.1 of the rows): the
 * embedded store has no autovacuum, and the search's plans read these figures. A re-import of
 * an unchanged file, or a daily feed that changed a few products, pays no ANALYZE (0.4-1 s on
 * the embedded store with 10,000 SKUs); the changes of such imports add up
 * (`catalog_imports.analysed`) until they are a share that counts.
 */
export const ANALYSE_THRESHOLD = 50;
export const ANALYSE_SCALE = 0.1;

/**
 * Refreshes the statistics if the imports not yet counted changed enough; returns whether it did.
 * `committing`: the import whose commit asks, before it is DONE; its changes are counted as well.
 */
export async function analyseIfChanged(q: Queryable, committing?: string): Promise<boolean> {
  const [r] = await q.query<{ changed: number; rows: number }>(
    `SELECT (SELECT coalesce(sum(created + updated + removed), 0)::int FROM catalog_imports WHERE NOT analysed) AS changed,
            (SELECT reltuples FROM pg_class WHERE oid = 'catalog_product_groups'::regclass)::float8 AS rows`,
  );
  const changed = Number(r?.changed ?? 0);
  const rows = Number(r?.rows ?? -1);
  // reltuples is -1 for a table never analysed (PostgreSQL 14 and later).
  if (changed === 0 || (rows >= 0 && changed <= ANALYSE_THRESHOLD + ANALYSE_SCALE * rows)) return false;
  await analyseCatalog(q);
  // Another import still open or committing has not changed the catalog yet: it counts later.
  // The one that asks has: its products are written and the statistics just read them.
  await q.query(
    `UPDATE catalog_imports SET analysed = true
      WHERE NOT analysed AND (status IN ('DONE', 'FAILED', 'CANCELLED') OR id = $1)`,
    [committing ?? null],
  );
  return true;
}

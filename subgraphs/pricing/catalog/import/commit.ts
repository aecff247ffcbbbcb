import { cutText } from '../../../../lib/json/well-formed.ts';
import type { FeedProduct } from '../feed/line.ts';
import { productOfFeed, promotionCategory } from '../feed/map.ts';
import { removeProducts, writeProducts } from '../products-write.ts';
import { analyseIfChanged } from './analyse.ts';
import { endBulkIndexing, startBulkIndexing } from './gin.ts';
import { assignSkus, type SkuNumbers, skuCode } from './skus.ts';
import type { CatalogImport, ImportDeps } from './types.ts';

/**
 * Products per commit batch (one transaction each): each batch costs a dozen statements and
 * reads what the catalog has of its products, so fewer, larger batches cost less (500 → 2,000).
 */
const COMMIT_BATCH = 2000;

/**
 * An import's commit (./service.ts starts it and answers at once; `get` shows its progress):
 * the staged products written to the catalog in batches (one transaction each, resumable by
 * line), a full import's absent products removed, the GIN indexes fed in bulk and merged, the
 * statistics refreshed when enough changed, then DONE; the changed and removed SKUs announced
 * whatever the outcome.
 */
export function createCommit(deps: ImportDeps, mustRead: (id: string) => Promise<CatalogImport>) {
  const { db } = deps;

  /** One batch of the commit: the products of staging lines after `afterLine`; returns the last line. */
  async function commitBatch(id: string, afterLine: number, numbers: SkuNumbers) {
    return db.transaction(async (tx) => {
      const staged = await tx.query<{ product_id: string; line: number; product: string; hash: string }>(
        `SELECT product_id, line, product, hash FROM catalog_import_products
          WHERE import_id = $1 AND line > $2 ORDER BY line LIMIT $3`,
        [id, afterLine, COMMIT_BATCH],
      );
      if (staged.length === 0) return { last: undefined, changed: [], removed: [] };
      const stored = new Map(
        (
          await tx.query<{ product_id: string; content_hash: string }>(
            'SELECT product_id, content_hash FROM catalog_product_groups WHERE product_id = ANY($1::text[])',
            [staged.map((s) => s.product_id)],
          )
        ).map((r) => [r.product_id, r.content_hash]),
      );
      // A staged line is its own text, strict JSON judged whole (stage.ts): parsed only if written.
      const fresh = staged
        .filter((s) => stored.get(s.product_id) !== s.hash)
        .map((s) => ({ ...s, product: JSON.parse(s.product) as FeedProduct }));
      const codes = fresh.flatMap((s) => {
        const categories = s.product.variants.flatMap((v) => (v.categories ?? []).map((c) => c.value));
        const code = skuCode(promotionCategory(categories));
        return s.product.variants.map((v) => ({ id: v.id, code }));
      });
      const allocated = new Set<string>();
      const skus = await assignSkus(tx, codes, numbers, allocated);
      const products = fresh.map((s) => ({
        ...productOfFeed(s.product, (variantId) => skus.get(variantId) as string),
        hash: s.hash,
      }));
      // The removals look only at products stored before and SKUs not allocated now (a batch of
      // new products removes nothing: two statements fewer).
      const written = await writeProducts(tx, products, 'feed', {
        stored: {
          productIds: fresh.filter((s) => stored.has(s.product_id)).map((s) => s.product_id),
          skus: codes.filter((c) => !allocated.has(c.id)).map((c) => skus.get(c.id) as string),
        },
      });
      const created = fresh.filter((s) => !stored.has(s.product_id)).length;
      await tx.query(
        `UPDATE catalog_imports SET committed = committed + $2, created = created + $3, updated = updated + $4,
                unchanged = unchanged + $5, updated_at = now() WHERE id = $1`,
        [id, staged.length, created, fresh.length - created, staged.length - fresh.length],
      );
      return {
        last: Number(staged.at(-1)?.line),
        changed: written.changedSkus,
        removed: written.removedSkus,
      };
    });
  }

  /** A full import of a clean file: the products its file did not have go, in batches. */
  async function removeAbsent(id: string): Promise<string[]> {
    const removed: string[] = [];
    for (;;) {
      const gone = await db.transaction(async (tx) => {
        const ids = (
          await tx.query<{ product_id: string }>(
            `SELECT g.product_id FROM catalog_product_groups g
              WHERE NOT EXISTS (SELECT 1 FROM catalog_import_products s WHERE s.import_id = $1 AND s.product_id = g.product_id)
              LIMIT $2`,
            [id, COMMIT_BATCH],
          )
        ).map((r) => r.product_id);
        const skus = await removeProducts(tx, ids);
        await tx.query(
          'UPDATE catalog_imports SET removed = removed + $2, updated_at = now() WHERE id = $1',
          [id, ids.length],
        );
        return { ids, skus };
      });
      removed.push(...gone.skus);
      if (gone.ids.length < COMMIT_BATCH) return removed;
    }
  }

  async function runCommit(id: string): Promise<void> {
    const changed: string[] = [];
    const removed: string[] = [];
    // The GIN indexes take the commit's keys in bulk (gin.ts), and are merged before DONE.
    let bulk = false;
    try {
      const [progress] = await db.query<{ line: number | null }>(
        // A resumed commit starts after the products already written (committed counts them in line order).
        `SELECT (SELECT line FROM catalog_import_products WHERE import_id = $1 ORDER BY line OFFSET greatest(c.committed - 1, 0) LIMIT 1) AS line
           FROM catalog_imports c WHERE c.id = $1 AND c.committed > 0`,
        [id],
      );
      let after = progress?.line !== undefined && progress.line !== null ? Number(progress.line) : 0;
      // Only faster: a role that may not ALTER the indexes still commits, row by row.
      bulk = await startBulkIndexing(db).then(
        () => true,
        async (err) => {
          deps.log.warn({ err, importId: id }, 'catalog indexes not set to fastupdate = on');
          await endBulkIndexing(db).catch(() => {});
          return false;
        },
      );
      const numbers: SkuNumbers = new Map();
      for (;;) {
        const batch = await commitBatch(id, after, numbers);
        if (batch.last === undefined) break;
        after = batch.last;
        changed.push(...batch.changed);
        removed.push(...batch.removed);
      }
      const imp = await mustRead(id);
      let replaced: boolean | null = null;
      let note: string | null = null;
      if (imp.mode === 'FULL') {
        replaced = imp.refused === 0;
        if (replaced) removed.push(...(await removeAbsent(id)));
        else
          note = `${imp.refused} line(s) were refused, so no product was removed: fix them and import the file again to replace the catalog.`;
      }
      if (bulk) {
        bulk = false;
        await endBulkIndexing(db);
      }
      // Statistics before DONE, as the indexes' merge: a search that starts when the caller sees
      // DONE is planned on them (one started during the refresh after DONE was slower).
      await analyseIfChanged(db, id);
      await db.query(
        `UPDATE catalog_imports SET status = 'DONE', replaced = $2, note = $3, finished_at = now(), updated_at = now() WHERE id = $1`,
        [id, replaced, note],
      );
      await db.query('DELETE FROM catalog_import_products WHERE import_id = $1', [id]);
    } catch (err) {
      deps.log.error({ err, importId: id }, 'catalog import commit failed');
      await db
        .query(
          `UPDATE catalog_imports SET status = 'FAILED', note = $2, finished_at = now(), updated_at = now() WHERE id = $1`,
          [
            id,
            `the commit failed: ${cutText((err as Error).message, 300)}; the products written so far stay`,
          ],
        )
        .catch(() => {});
    } finally {
      if (bulk)
        await endBulkIndexing(db).catch((err) =>
          deps.log.error({ err, importId: id }, 'catalog indexes not set back to fastupdate = off'),
        );
      if (changed.length + removed.length > 0)
        await deps
          .changed(id, [...new Set(changed)], [...new Set(removed)])
          .catch((err) => deps.log.error({ err, importId: id }, 'catalog change not announced'));
    }
  }

  return runCommit;
}

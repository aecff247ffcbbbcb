/**
 * A merchant's ACP product feed, imported (docs/catalog.md, "Import the merchant's feed"): an
 * import is opened with the feed's `metadata.json`, its `products.jsonl` appended in chunks of
 * lines (each line judged whole and alone: feed/line.ts; a refused line stores nothing and is
 * reported with its number, JSONPath and reason), then committed: the accepted products are
 * written to the catalog in batches, and a full import then removes the products its file did
 * not have. Until the commit, the catalog is as it was; an import cancelled, failed or never
 * committed changes nothing.
 *
 * Decisions where the feed specification is silent:
 * - a full import with refused lines removes nothing (a product whose line was refused would
 *   otherwise vanish for a typo): it says so, and the next clean import replaces the set;
 * - a file that is mostly not a feed (1,000 lines refused, more than twice the accepted ones)
 *   fails at once, and keeps nothing;
 * - a product id that appears twice in one import: the first line counts, the second is refused;
 * - appending the same lines again (a retry) reads nothing twice: a chunk starts at a line
 *   number, and lines already read are skipped;
 * - a product whose line is the same as the last import's is not written again (a re-import of
 *   the same file changes nothing and emits nothing).
 */
import { createHash, randomUUID } from 'node:crypto';
import type { Clock } from '../../../../lib/clock.ts';
import type { Db } from '../../../../lib/db/index.ts';
import type { Logger } from '../../../../lib/logger.ts';
import { type FeedProduct, judgeLine, MAX_LINE_BYTES } from '../feed/line.ts';
import { productOfFeed, promotionCategory } from '../feed/map.ts';
import { feedViolations } from '../feed/schema.ts';
import { removeProducts, writeProducts } from '../products-sql.ts';
import { analyseIfChanged } from './analyse.ts';
import { endBulkIndexing, startBulkIndexing } from './gin.ts';
import { assignSkus, skuCode } from './skus.ts';

export type ImportMode = 'FULL' | 'PARTIAL';
export type ImportStatus = 'OPEN' | 'COMMITTING' | 'DONE' | 'FAILED' | 'CANCELLED';

export interface ImportLineError {
  readonly line: number;
  readonly path: string;
  readonly reason: string;
}

export interface CatalogImport {
  readonly id: string;
  readonly mode: ImportMode;
  readonly status: ImportStatus;
  readonly feedId: string;
  readonly linesRead: number;
  readonly accepted: number;
  readonly refused: number;
  /** Products written by the commit so far (progress), of `accepted`. */
  readonly committed: number;
  readonly created: number;
  readonly updated: number;
  readonly unchanged: number;
  readonly removed: number;
  /** A full import: whether the products its file did not have were removed. */
  readonly replaced: boolean | null;
  readonly note: string | null;
  readonly startedAt: string;
  readonly finishedAt: string | null;
  /** The first refused lines (at most `errorsLimit` of get, 100 by default). */
  readonly errors: readonly ImportLineError[];
}

/** A refusal of the import's input as a whole (400, BAD_USER_INPUT), with a JSONPath or field. */
export class ImportInputError extends Error {
  constructor(
    readonly path: string,
    message: string,
  ) {
    super(message);
  }
}

export class ImportNotFound extends Error {}
/** The import is not in a state the operation needs (409). */
export class ImportStateError extends Error {}

/** Lines one append takes at most (a chunk is a few hundred kilobytes). */
export const MAX_APPEND_LINES = 5000;
/** Refused lines whose reason is stored (the count is always whole). */
const MAX_STORED_ERRORS = 1000;
/** Products per commit batch (one transaction each). */
const COMMIT_BATCH = 500;

export interface ImportDeps {
  readonly db: Db;
  readonly clock: Clock;
  readonly log: Logger;
  /** After a commit changed the catalog: the SKUs changed and removed (events, caches, mirror). */
  readonly changed: (
    importId: string,
    changedSkus: readonly string[],
    removedSkus: readonly string[],
  ) => Promise<void>;
}

export interface CatalogImports {
  start(input: { mode: ImportMode; metadata: unknown; startedBy?: string }): Promise<CatalogImport>;
  /**
   * Lines `firstLine`, `firstLine + 1`, … of products.jsonl (1-based); lines already read are
   * skipped. `oversized`: line numbers the client could not send for their length (refused).
   */
  append(
    id: string,
    firstLine: number,
    lines: readonly string[],
    oversized?: readonly number[],
  ): Promise<CatalogImport>;
  /** Starts (or resumes) the commit; it runs on, `get` shows its progress. */
  commit(id: string): Promise<CatalogImport>;
  cancel(id: string): Promise<CatalogImport>;
  get(id: string, errorsLimit?: number): Promise<CatalogImport | undefined>;
  /** Resolves when no commit of this process is running (tests, shutdown). */
  settled(): Promise<void>;
}

type Row = {
  id: string;
  mode: ImportMode;
  status: ImportStatus;
  metadata: { id: string };
  lines_read: number;
  accepted: number;
  refused: number;
  committed: number;
  created: number;
  updated: number;
  unchanged: number;
  removed: number;
  replaced: boolean | null;
  note: string | null;
  created_at: string | Date;
  finished_at: string | Date | null;
};

const iso = (t: string | Date) => new Date(t).toISOString();
const hashOf = (text: string) => createHash('sha256').update(text).digest('base64url').slice(0, 32);

export function createCatalogImports(deps: ImportDeps): CatalogImports {
  const { db } = deps;
  const running = new Map<string, Promise<void>>();

  async function read(id: string, errorsLimit = 100): Promise<CatalogImport | undefined> {
    const [r] = await db.query<Row>('SELECT * FROM catalog_imports WHERE id = $1', [id]);
    if (!r) return undefined;
    const errors = await db.query<ImportLineError>(
      'SELECT line, path, reason FROM catalog_import_errors WHERE import_id = $1 ORDER BY line LIMIT $2',
      [id, Math.max(0, Math.min(errorsLimit, MAX_STORED_ERRORS))],
    );
    return {
      id: r.id,
      mode: r.mode,
      status: r.status,
      feedId: r.metadata.id,
      linesRead: Number(r.lines_read),
      accepted: Number(r.accepted),
      refused: Number(r.refused),
      committed: Number(r.committed),
      created: Number(r.created),
      updated: Number(r.updated),
      unchanged: Number(r.unchanged),
      removed: Number(r.removed),
      replaced: r.replaced,
      note: r.note,
      startedAt: iso(r.created_at),
      finishedAt: r.finished_at ? iso(r.finished_at) : null,
      errors: errors.map((e) => ({ line: Number(e.line), path: e.path, reason: e.reason })),
    };
  }

  async function mustRead(id: string): Promise<CatalogImport> {
    const found = await read(id);
    if (!found) throw new ImportNotFound(`no catalog import ${id.slice(0, 64)}`);
    return found;
  }

  /** One batch of the commit: the products of staging lines after `afterLine`; returns the last line. */
  async function commitBatch(id: string, afterLine: number) {
    return db.transaction(async (tx) => {
      const staged = await tx.query<{ product_id: string; line: number; product: FeedProduct; hash: string }>(
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
      const fresh = staged.filter((s) => stored.get(s.product_id) !== s.hash);
      const codes = fresh.flatMap((s) => {
        const categories = s.product.variants.flatMap((v) => (v.categories ?? []).map((c) => c.value));
        const code = skuCode(promotionCategory(categories));
        return s.product.variants.map((v) => ({ id: v.id, code }));
      });
      const skus = await assignSkus(tx, codes);
      const products = fresh.map((s) => ({
        ...productOfFeed(s.product, (variantId) => skus.get(variantId) as string),
        hash: s.hash,
      }));
      const written = await writeProducts(tx, products, 'feed');
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
      for (;;) {
        const batch = await commitBatch(id, after);
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
      await db.query(
        `UPDATE catalog_imports SET status = 'DONE', replaced = $2, note = $3, finished_at = now(), updated_at = now() WHERE id = $1`,
        [id, replaced, note],
      );
      await db.query('DELETE FROM catalog_import_products WHERE import_id = $1', [id]);
      await analyseIfChanged(db);
    } catch (err) {
      deps.log.error({ err, importId: id }, 'catalog import commit failed');
      await db
        .query(
          `UPDATE catalog_imports SET status = 'FAILED', note = $2, finished_at = now(), updated_at = now() WHERE id = $1`,
          [
            id,
            `the commit failed: ${(err as Error).message.slice(0, 300)}; the products written so far stay`,
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

  return {
    async start({ mode, metadata, startedBy }) {
      const [first] = feedViolations('FeedMetadata', metadata);
      if (first) throw new ImportInputError(first.path, `metadata.json: ${first.path} ${first.reason}`);
      const id = `imp_${randomUUID().replace(/-/g, '')}`;
      await db.query(
        'INSERT INTO catalog_imports (id, mode, status, metadata, started_by) VALUES ($1, $2, $3, $4, $5)',
        [id, mode, 'OPEN', JSON.stringify(metadata), startedBy ?? null],
      );
      return mustRead(id);
    },

    async append(id, firstLine, lines, oversized = []) {
      if (!Number.isSafeInteger(firstLine) || firstLine < 1)
        throw new ImportInputError('firstLine', 'must be a whole number of at least 1');
      if (lines.length > MAX_APPEND_LINES)
        throw new ImportInputError('lines', `at most ${MAX_APPEND_LINES} lines per append`);
      const before = await mustRead(id);
      if (before.status !== 'OPEN') throw new ImportStateError(`the import is ${before.status}, not OPEN`);
      if (firstLine > before.linesRead + 1)
        throw new ImportInputError(
          'firstLine',
          `lines ${before.linesRead + 1} to ${firstLine - 1} were never sent`,
        );
      const skip = before.linesRead + 1 - firstLine;
      const fresh = lines.slice(skip).map((text, i) => ({ line: firstLine + skip + i, text }));
      if (fresh.length === 0) return before;
      const accepted: { product_id: string; line: number; product: unknown; hash: string }[] = [];
      const refused: ImportLineError[] = [];
      const seen = new Map<string, number>();
      const tooLong = new Set(oversized);
      for (const { line, text } of fresh) {
        if (tooLong.has(line)) {
          refused.push({ line, path: '$', reason: `the line is longer than ${MAX_LINE_BYTES / 1024} KiB` });
          continue;
        }
        // An empty line (a trailing newline, a blank between products) is no product and no error.
        if (text.trim() === '') continue;
        const v = judgeLine(text);
        if (!v.ok) {
          refused.push({ line, path: v.path, reason: v.reason });
          continue;
        }
        const earlier = seen.get(v.product.id);
        if (earlier !== undefined) {
          refused.push({
            line,
            path: '$.id',
            reason: `product ${v.product.id.slice(0, 64)} is on line ${earlier} already`,
          });
          continue;
        }
        seen.set(v.product.id, line);
        accepted.push({ product_id: v.product.id, line, product: v.product, hash: hashOf(text.trim()) });
      }
      return db
        .transaction(async (tx) => {
          // Products already accepted by an earlier chunk keep their first line.
          const dup = new Map(
            (
              await tx.query<{ product_id: string; line: number }>(
                'SELECT product_id, line FROM catalog_import_products WHERE import_id = $1 AND product_id = ANY($2::text[])',
                [id, accepted.map((a) => a.product_id)],
              )
            ).map((r) => [r.product_id, Number(r.line)]),
          );
          const keep = accepted.filter((a) => {
            const line = dup.get(a.product_id);
            if (line === undefined) return true;
            refused.push({
              line: a.line,
              path: '$.id',
              reason: `product ${a.product_id.slice(0, 64)} is on line ${line} already`,
            });
            return false;
          });
          if (keep.length > 0)
            await tx.query(
              `INSERT INTO catalog_import_products (import_id, product_id, line, product, hash)
             SELECT $1, x.product_id, x.line, x.product, x.hash
               FROM jsonb_to_recordset($2::jsonb) AS x(product_id text, line int, product jsonb, hash text)`,
              [id, JSON.stringify(keep)],
            );
          const room = Math.max(0, MAX_STORED_ERRORS - before.refused);
          const stored = refused.sort((a, b) => a.line - b.line).slice(0, room);
          if (stored.length > 0)
            await tx.query(
              `INSERT INTO catalog_import_errors (import_id, line, path, reason)
             SELECT $1, x.line, x.path, left(x.reason, 500)
               FROM jsonb_to_recordset($2::jsonb) AS x(line int, path text, reason text) ON CONFLICT DO NOTHING`,
              [id, JSON.stringify(stored)],
            );
          const lastLine = fresh.at(-1)?.line ?? before.linesRead;
          const acceptedNow = before.accepted + keep.length;
          const refusedNow = before.refused + refused.length;
          // Mostly not a feed: fail now, keep nothing.
          const garbage = refusedNow >= MAX_STORED_ERRORS && refusedNow > 2 * acceptedNow;
          await tx.query(
            `UPDATE catalog_imports SET lines_read = $2, accepted = $3, refused = $4, updated_at = now(),
                  status = CASE WHEN $5 THEN 'FAILED' ELSE status END,
                  note = CASE WHEN $5 THEN $6 ELSE note END,
                  finished_at = CASE WHEN $5 THEN now() ELSE finished_at END
            WHERE id = $1`,
            [
              id,
              lastLine,
              acceptedNow,
              refusedNow,
              garbage,
              `not an ACP product feed: ${refusedNow} of ${lastLine} lines refused; nothing was kept`,
            ],
          );
          if (garbage) await tx.query('DELETE FROM catalog_import_products WHERE import_id = $1', [id]);
          return undefined;
        })
        .then(() => mustRead(id));
    },

    async commit(id) {
      const imp = await mustRead(id);
      if (imp.status !== 'OPEN' && imp.status !== 'COMMITTING')
        throw new ImportStateError(`the import is ${imp.status}: only an OPEN import is committed`);
      if (imp.mode === 'FULL' && imp.accepted === 0)
        throw new ImportStateError(
          'a full import without one accepted product would empty the catalog: nothing was committed',
        );
      if (!running.has(id)) {
        const claimed = await db.query<{ id: string }>(
          `UPDATE catalog_imports SET status = 'COMMITTING', updated_at = now()
            WHERE id = $1 AND status IN ('OPEN', 'COMMITTING')
              AND NOT EXISTS (SELECT 1 FROM catalog_imports o WHERE o.status = 'COMMITTING' AND o.id <> $1)
            RETURNING id`,
          [id],
        );
        if (claimed.length === 0)
          throw new ImportStateError(
            'another import is being committed: commit it again to finish it, or cancel it',
          );
        const job = runCommit(id).finally(() => running.delete(id));
        running.set(id, job);
      }
      return mustRead(id);
    },

    async cancel(id) {
      const imp = await mustRead(id);
      if (imp.status === 'DONE' || imp.status === 'COMMITTING')
        throw new ImportStateError(`the import is ${imp.status}: it cannot be cancelled`);
      await db.transaction(async (tx) => {
        await tx.query(
          `UPDATE catalog_imports SET status = 'CANCELLED', finished_at = coalesce(finished_at, now()), updated_at = now()
            WHERE id = $1 AND status IN ('OPEN', 'FAILED')`,
          [id],
        );
        await tx.query('DELETE FROM catalog_import_products WHERE import_id = $1', [id]);
      });
      return mustRead(id);
    },

    get: read,

    async settled() {
      await Promise.allSettled([...running.values()]);
    },
  };
}

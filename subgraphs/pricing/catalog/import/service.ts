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
import { formatJsonPath } from '../../../../lib/json/json-path.ts';
import { cutText, unstorableString } from '../../../../lib/json/well-formed.ts';
import { judgeLine, MAX_LINE_BYTES } from '../feed/line.ts';
import { feedViolations } from '../feed/schema.ts';
import { createCommit } from './commit.ts';
import { type StagedLine, stageLines } from './stage.ts';
import type { CatalogImport, ImportDeps, ImportLineError, ImportMode, ImportStatus } from './types.ts';

export type { CatalogImport, ImportDeps, ImportLineError, ImportMode, ImportStatus } from './types.ts';

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
    const limit = Math.max(0, Math.min(errorsLimit, MAX_STORED_ERRORS));
    // No refused line, no statement for them (each append and each poll reads the import).
    const errors =
      Number(r.refused) === 0 || limit === 0
        ? []
        : await db.query<ImportLineError>(
            'SELECT line, path, reason FROM catalog_import_errors WHERE import_id = $1 ORDER BY line LIMIT $2',
            [id, limit],
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

  const runCommit = createCommit(deps, mustRead);

  return {
    async start({ mode, metadata, startedBy }) {
      const [first] = feedViolations('FeedMetadata', metadata);
      if (first) throw new ImportInputError(first.path, `metadata.json: ${first.path} ${first.reason}`);
      // Stored as jsonb: what PostgreSQL refuses is refused here, not as the database's error.
      const bad = unstorableString(metadata);
      if (bad) {
        const path = formatJsonPath(bad.segments);
        throw new ImportInputError(path, `metadata.json: ${path} ${bad.reason}`);
      }
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
      const accepted: StagedLine[] = [];
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
            reason: `product ${cutText(v.product.id, 64)} is on line ${earlier} already`,
          });
          continue;
        }
        seen.set(v.product.id, line);
        // Staged as its own text (strict JSON, judged whole): the same jsonb as the parsed
        // product's, without writing it out again.
        const own = text.trim();
        accepted.push({ product_id: v.product.id, line, text: own, hash: hashOf(own) });
      }
      return db
        .transaction(async (tx) => {
          // Products already accepted by an earlier chunk keep their first line: the insert
          // skips them, and only then are their lines looked up (a retry, a duplicate id).
          const staged = await stageLines(tx, id, accepted);
          const again = accepted.filter((a) => !staged.has(a.product_id));
          const firstLines = new Map(
            again.length === 0
              ? []
              : (
                  await tx.query<{ product_id: string; line: number }>(
                    'SELECT product_id, line FROM catalog_import_products WHERE import_id = $1 AND product_id = ANY($2::text[])',
                    [id, again.map((a) => a.product_id)],
                  )
                ).map((r) => [r.product_id, Number(r.line)]),
          );
          for (const a of again)
            refused.push({
              line: a.line,
              path: '$.id',
              reason: `product ${cutText(a.product_id, 64)} is on line ${firstLines.get(a.product_id)} already`,
            });
          const keep = accepted.length - again.length;
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
          const acceptedNow = before.accepted + keep;
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

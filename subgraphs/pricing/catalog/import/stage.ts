import { copyRow } from '../../../../lib/db/copy.ts';
import type { Queryable } from '../../../../lib/db/index.ts';

/** An accepted line, staged as its own text (strict JSON, judged whole). */
export interface StagedLine {
  readonly product_id: string;
  readonly line: number;
  readonly text: string;
  readonly hash: string;
}

/**
 * Stages a chunk's accepted lines in catalog_import_products, skipping products an earlier chunk
 * staged (a retry, a duplicate id: the caller reports them); returns the product ids staged now.
 *
 * On PostgreSQL the lines are COPYed into a temporary table and inserted from it: for a chunk of
 * 2,000 lines (4.4 MB) that took 0.34–0.86 s against 0.56–2.05 s for the same insert from
 * unnest() of text arrays, whose literal escapes every quote of every line (scratch A/B, 5
 * rounds alternated, load average 13–15; COPY straight into the table was faster still,
 * 0.37–0.72 s, but has no ON CONFLICT). PGlite has no COPY FROM STDIN here: the lines go as one
 * JSON array (each line is strict JSON, judged whole, so `[line,line,…]` is one), whose elements
 * are the staged jsonb: an array literal of the lines' texts escaped every quote and was parsed
 * twice (array, then jsonb), 1.5–1.8 s per chunk of 2,000 against 0.6–1.0 s (scratch A/B, in one
 * sitting, load average 10).
 */
export async function stageLines(
  tx: Queryable,
  importId: string,
  lines: readonly StagedLine[],
): Promise<Set<string>> {
  if (lines.length === 0) return new Set();
  const insert = (
    from: string,
    product = 'x.product::jsonb',
  ) => `INSERT INTO catalog_import_products (import_id, product_id, line, product, hash)
     SELECT $1, x.product_id, x.line, ${product}, x.hash FROM ${from}
     ON CONFLICT (import_id, product_id) DO NOTHING RETURNING product_id`;
  let rows: { product_id: string }[];
  if (tx.copyFrom) {
    // Per connection, emptied by each commit: no other transaction sees its rows.
    await tx.query(
      'CREATE TEMP TABLE IF NOT EXISTS catalog_import_lines (product_id text, line int, product text, hash text) ON COMMIT DELETE ROWS',
    );
    await tx.copyFrom(
      'COPY catalog_import_lines (product_id, line, product, hash) FROM STDIN',
      lines.map((l) => copyRow([l.product_id, l.line, l.text, l.hash])),
    );
    rows = await tx.query<{ product_id: string }>(insert('catalog_import_lines x'), [importId]);
  } else
    rows = await tx.query<{ product_id: string }>(
      insert(
        `unnest($2::text[], $3::int[], $4::text[]) WITH ORDINALITY AS x(product_id, line, hash, n)
           JOIN jsonb_array_elements($5::jsonb) WITH ORDINALITY AS e(product, n) USING (n)`,
        'e.product',
      ),
      [
        importId,
        lines.map((a) => a.product_id),
        lines.map((a) => a.line),
        lines.map((a) => a.hash),
        `[${lines.map((a) => a.text).join(',')}]`,
      ],
    );
  return new Set(rows.map((r) => r.product_id));
}

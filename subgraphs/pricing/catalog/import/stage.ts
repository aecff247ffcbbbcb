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
 * A line is stored as its text (migration 055): PostgreSQL parsing it into jsonb was most of the
 * staging's database time.
 *
 * On PostgreSQL the lines are COPYed into a temporary table and inserted from it: for a chunk of
 * 2,000 lines (4.4 MB) that took 0.34–0.86 s against 0.56–2.05 s for the same insert from
 * unnest() of text arrays, whose literal escapes every quote of every line (scratch A/B, 5
 * rounds alternated, load average 13–15; COPY straight into the table was faster still,
 * 0.37–0.72 s, but has no ON CONFLICT). PGlite has no COPY FROM STDIN here: the lines go as one
 * text, cut by `string_to_table` at a separator no line holds (U+001E: strict JSON has no raw
 * control character, in a string or between tokens), which escapes nothing; an array literal of
 * the lines' texts escaped every quote, and one JSON array of them was parsed into jsonb.
 */
/** Between the lines of a chunk sent to PGlite as one text: no line of strict JSON holds it raw. */
const SEPARATOR = '\x1e';

export async function stageLines(
  tx: Queryable,
  importId: string,
  lines: readonly StagedLine[],
): Promise<Set<string>> {
  if (lines.length === 0) return new Set();
  const insert = (
    from: string,
    product = 'x.product',
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
           JOIN string_to_table($5, E'\\x1e') WITH ORDINALITY AS e(product, n) USING (n)`,
        'e.product',
      ),
      [
        importId,
        lines.map((a) => a.product_id),
        lines.map((a) => a.line),
        lines.map((a) => a.hash),
        lines.map((a) => a.text).join(SEPARATOR),
      ],
    );
  return new Set(rows.map((r) => r.product_id));
}

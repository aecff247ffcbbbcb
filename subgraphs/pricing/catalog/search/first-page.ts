import type { Db } from '../../../../lib/db/index.ts';
import { createCorrections } from './corrections.ts';
import { createOptionWords } from './option-words.ts';
import type { SearchRequest } from './request.ts';
import { type Matcher, type PageRow, Params, pageSql } from './statement.ts';

/**
 * How a search's words find their first page (search/sql.ts): as typed; when they match nothing,
 * with each misspelt word corrected (corrections.ts); when that finds nothing either, titles
 * alike (trigrams). A text matcher leaves out the option values its words name (option-words.ts).
 * Both memories are the catalog's, forgotten on its change (`forget`).
 */

export type Row = PageRow & { alternative?: boolean };
/** A first page: how it matched, its rows, and the corrected query when one answered. */
export type Found = { matcher: Matcher; rows: Row[]; correctedQuery?: string };

export interface FirstPages {
  /** A text matcher: the words, and without the option values they name. */
  textOf(query: string): Promise<Matcher>;
  /** A page of `m`: after a cursor's position, or the first one capped at `cap` matches. */
  page(
    req: SearchRequest,
    m: Matcher,
    after?: { rank: number; productId: string },
    cap?: number,
  ): Promise<Row[]>;
  /**
   * The first page: the words as typed; when they match nothing, corrected; then titles alike.
   * When every word's correction is remembered (corrections.ts), the first two are one statement.
   * `cap`: COUNT_CAP in a catalog too large to search exactly (degrade.ts), else none.
   */
  firstPage(req: SearchRequest, cap: number | undefined): Promise<Found>;
  forget(): void;
}

export function createFirstPages(db: Db, ext: string): FirstPages {
  const corrections = createCorrections(db);
  const optionWords = createOptionWords(db);
  const textOf = async (query: string): Promise<Matcher> => {
    const relaxed = await optionWords.relaxed(query);
    return { kind: 'text', query, ...(relaxed ? { relaxed } : {}) };
  };
  const page: FirstPages['page'] = (req, m, after, cap) => {
    const p = new Params();
    return db.query<Row>(pageSql(req, m, ext, p, after, cap), p.values);
  };
  /**
   * The first page of the words as typed and, only when they match nothing, of the corrected
   * words, in one statement: the second is behind a guard on the first (a one-time filter that
   * PostgreSQL evaluates before it runs the second at all). Its rows say which one answered.
   */
  const pageOrElse = (req: SearchRequest, typed: Matcher, fixed: Matcher, cap: number | undefined) => {
    const p = new Params();
    const first = pageSql(req, typed, ext, p, undefined, cap);
    const second = pageSql(req, fixed, ext, p, undefined, cap);
    return db.query<Row>(
      `WITH typed AS MATERIALIZED (${first})
       SELECT t.*, false AS alternative FROM typed t
       UNION ALL
       SELECT f.*, true FROM (${second}) f WHERE NOT EXISTS (SELECT 1 FROM typed)
       ORDER BY rank DESC, product_id`,
      p.values,
    );
  };
  async function firstPage(req: SearchRequest, cap: number | undefined): Promise<Found> {
    if (!req.query) {
      const matcher: Matcher = { kind: 'browse' };
      return { matcher, rows: await page(req, matcher, undefined, cap) };
    }
    const typed = await textOf(req.query);
    const known = corrections.known(req.query);
    if (known?.fixed) {
      const fixed = await textOf(known.fixed);
      const rows = await pageOrElse(req, typed, fixed, cap);
      if (rows[0]?.alternative) return { matcher: fixed, rows, correctedQuery: known.fixed };
      if (rows.length > 0) return { matcher: typed, rows };
    } else {
      const rows = await page(req, typed, undefined, cap);
      if (rows.length > 0) return { matcher: typed, rows };
      const fixed = known ? undefined : await corrections.corrected(req.query);
      if (fixed) {
        const matcher = await textOf(fixed);
        const again = await page(req, matcher, undefined, cap);
        if (again.length > 0) return { matcher, rows: again, correctedQuery: fixed };
      }
    }
    const matcher: Matcher = { kind: 'similar', query: req.query };
    return { matcher, rows: await page(req, matcher, undefined, cap) };
  }
  return {
    textOf,
    page,
    firstPage,
    forget() {
      corrections.forget();
      optionWords.forget();
    },
  };
}

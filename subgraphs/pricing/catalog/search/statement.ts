import { minorUnits } from '../../../../lib/graphql/decimal.ts';
import { PRODUCT_JSON, PRODUCT_JSON_BARE, type ProductRow } from '../products-sql.ts';
import { FRESHNESS, FRESHNESS_KEY_G } from './freshness-key.ts';
import type { SearchRequest } from './request.ts';

/**
 * The SQL a search is written in (search/sql.ts): its parameters, the filters on products and
 * their variants, and the `matched` CTE (every product of a search with its rank), shared by the
 * page, the facets (facets.ts) and the page after a cursor.
 */

export const AVAILABLE_SQL = `coalesce(v.availability, CASE WHEN v.inventory_level <= 0 THEN 'out_of_stock' ELSE 'in_stock' END)
  IN ('in_stock', 'limited_stock', 'backorder', 'preorder')`;

/** Numbered parameters, collected as the statement is written. */
export class Params {
  readonly values: unknown[] = [];
  add(v: unknown): string {
    this.values.push(v);
    return `$${this.values.length}`;
  }
}

/** The condition on one variant `v` (and its price `bp` in the filter's currency). */
export function variantCondition(req: SearchRequest, p: Params): string {
  const f = req.filters;
  const parts: string[] = [];
  // Minor units of the currency (cents; none for JPY), divided exactly in SQL's numeric.
  const scale = f.price ? 10 ** minorUnits(f.price.currency) : 1;
  if (f.price?.min !== undefined) parts.push(`bp.amount >= ${p.add(f.price.min)}::numeric / ${scale}`);
  if (f.price?.max !== undefined) parts.push(`bp.amount <= ${p.add(f.price.max)}::numeric / ${scale}`);
  if (f.price) parts.push('bp.amount IS NOT NULL');
  if (f.pricedIn)
    parts.push(
      `EXISTS (SELECT 1 FROM catalog_base_prices pi WHERE pi.sku = v.sku AND pi.currency = ${p.add(f.pricedIn)})`,
    );
  if (f.available) parts.push(AVAILABLE_SQL);
  for (const o of f.options ?? [])
    parts.push(`v.option_keys && ${p.add(o.values.map((value) => `${o.name}=${value}`))}::text[]`);
  return parts.length > 0 ? parts.join(' AND ') : 'true';
}

export const priceJoin = (req: SearchRequest, p: Params) =>
  req.filters.price
    ? `LEFT JOIN catalog_base_prices bp ON bp.sku = v.sku AND bp.currency = ${p.add(req.filters.price.currency)}`
    : '';

/**
 * The filters on `g`: the product's own, and with `variantsOnly` only those that its variants
 * answer (a remembered search's ranked matches already hold the rest: remembered.ts).
 */
export function productConditions(req: SearchRequest, p: Params, variantsOnly = false): string[] {
  const f = req.filters;
  const parts: string[] = [];
  if (!variantsOnly) ownConditions(req, p, parts);
  const variantFiltered = f.price || f.available || f.options || f.pricedIn;
  if (variantFiltered)
    parts.push(
      `EXISTS (SELECT 1 FROM catalog_products v ${priceJoin(req, p)} WHERE v.product_id = g.product_id AND ${variantCondition(req, p)})`,
    );
  return parts;
}

function ownConditions(req: SearchRequest, p: Params, parts: string[]): void {
  const f = req.filters;
  if (f.categories) parts.push(`g.category_paths && ${p.add(f.categories)}::text[]`);
  if (f.brands) parts.push(`lower(g.brand) = ANY(${p.add(f.brands)}::text[])`);
  if (f.conditions) parts.push(`lower(g.condition) = ANY(${p.add(f.conditions)}::text[])`);
  // Each option filter first narrows the products by their variants' keys (an index), then the
  // variant check below holds them all on one variant.
  for (const o of f.options ?? [])
    parts.push(`g.variant_option_keys && ${p.add(o.values.map((value) => `${o.name}=${value}`))}::text[]`);
}

/**
 * `since`: a broad search's freshness threshold (degrade.ts): only products changed since then
 * match. `ranked`: a remembered search's matches with their ranks (remembered.ts), found by its
 * words, threshold and the product's own filters; what a variant answers still holds.
 */
export type Matcher = (
  | { kind: 'browse' }
  /** `relaxed`: the query without the option values it names (option-words.ts), when it names some. */
  | { kind: 'text'; query: string; relaxed?: string }
  | { kind: 'similar'; query: string }
) & { since?: string; ranked?: { readonly ids: readonly string[]; readonly ranks: readonly number[] } };

/** A freshness threshold (freshness-key.ts) as the store wrote it: safe to write as a literal. */
export const SINCE = FRESHNESS;

/** The `matched` CTE: every product of the search with its rank. */
export function matchedSql(req: SearchRequest, m: Matcher, ext: string, p: Params): string {
  // A remembered search's ranked matches (remembered.ts) are the products its words, threshold
  // and own filters find, with their ranks, which only a catalog change changes (and forgets
  // them): only what their variants answer is checked again; no product row is read.
  if (m.ranked) {
    const where = productConditions(req, p, true);
    return `SELECT g.product_id, g.rank FROM unnest(${p.add(m.ranked.ids)}::text[], ${p.add(m.ranked.ranks)}::float8[]) AS g(product_id, rank)
      ${where.length > 0 ? `WHERE ${where.join(' AND ')}` : ''}`;
  }
  const where = productConditions(req, p);
  if (m.since !== undefined) {
    // A literal, not a parameter: the planner then sees how few products are that fresh and
    // intersects their index with the text's (a BitmapAnd) instead of reading every match's row.
    // Thresholds change only with the catalog, so the statements stay few (and prepared).
    if (!SINCE.test(m.since)) throw new Error(`not a freshness threshold: ${m.since}`);
    where.push(`${FRESHNESS_KEY_G} >= '${m.since}'`);
  }
  let rank = '0::real';
  let from = 'catalog_product_groups g';
  if (m.kind === 'text') {
    // The query behind a fence (OFFSET 0): the planner does not fold it into a constant, so every
    // query text gets the same plan (the search index, then the rank), which a prepared statement
    // then keeps (PGlite: pglite-prepared.ts). Folded, each text looked cheaper to plan afresh,
    // and planning cost the embedded store more than a search of the default catalog did.
    const relaxed = m.relaxed ? `, websearch_to_tsquery('english', ${p.add(m.relaxed)}) AS m` : '';
    from += `, (SELECT websearch_to_tsquery('english', ${p.add(m.query)}) AS q${relaxed} OFFSET 0) AS tq`;
    where.unshift(m.relaxed ? 'g.search @@ tq.m' : 'g.search @@ tq.q');
    // Weights D, C, B, A (description … title and brand); normalisation 1: longer text ranks a
    // little lower, so a title that is mostly the query comes first. A product whose title and
    // brand alone hold every word comes before any that needs its other text: ts_rank weighs
    // how near the words are, so "shea butter body lotion" ranked a lotion whose description
    // lists shea butter above the Shea Butter Body Lotions (bench/catalog: nDCG@10).
    // Title and brand are the vector's weight A: ts_filter keeps their lexemes and positions,
    // the same vector as to_tsvector of the two without parsing the text again for every match.
    // An option value the query names ("tennis racket s", "pasta 250 g") lifts the products
    // that have it by half that: a size's letter is a stop word the vector drops.
    // The query's runs of whole words, each a value the product may have (option_values).
    const words = m.query.toLowerCase().split(' ');
    const runs = words.flatMap((_, i) => words.slice(i).map((__, j) => words.slice(i, i + j + 1).join(' ')));
    const named = p.add(runs);
    const rankOf = (q: string) => `ts_rank('{0.05, 0.2, 0.4, 1.0}', g.search, ${q}, 1)
      + CASE WHEN ts_filter(g.search, '{a}') @@ ${q} THEN 1 ELSE 0 END
      + CASE WHEN g.option_values && ${named}::text[] THEN 0.5 ELSE 0 END`;
    // Relaxed: the products without the option value named come after every product with it
    // (a rank is below 2.5), ranked among themselves by the rest of the words.
    rank = m.relaxed
      ? `CASE WHEN g.search @@ tq.q THEN ${rankOf('tq.q')} ELSE ${rankOf('tq.m')} - 10 END`
      : rankOf('tq.q');
  } else if (m.kind === 'similar') {
    const q = p.add(m.query.toLowerCase());
    where.unshift(`lower(g.title) OPERATOR(${ext}.%) ${q}`);
    rank = `${ext}.similarity(lower(g.title), ${q})`;
  }
  return `SELECT g.product_id, ${rank} AS rank FROM ${from} WHERE ${where.length > 0 ? where.join(' AND ') : 'true'}`;
}

/** A row of a page: the product (variants or none: `req.variants`) and the SKUs the filters let through. */
export interface PageRow {
  product_id: string;
  rank: number;
  total: number;
  p: ProductRow;
  skus: string[];
}

/**
 * One page of a search, `req.limit + 1` rows (the one more says a next page exists), after a
 * cursor's place when given, with the count of every match.
 */
export function pageSql(
  req: SearchRequest,
  m: Matcher,
  ext: string,
  p: Params,
  after?: { rank: number; productId: string },
  cap?: number,
): string {
  const matched = matchedSql(req, m, ext, p);
  // The rank compared as the double it is (a real ts_rank plus the boosts is a double): a rank
  // rounded to a real could be above the row the cursor stands on, which then came again.
  const keyset = after
    ? `WHERE m.rank < ${p.add(after.rank)}::float8 OR (m.rank = ${p.add(after.rank)}::float8 AND m.product_id > ${p.add(after.productId)})`
    : '';
  // The page's variants: those the filters let through (none read when the caller shows none).
  const product = req.variants
    ? `${PRODUCT_JSON} AS p, ARRAY(SELECT v.sku FROM catalog_products v ${priceJoin(req, p)}
         WHERE v.product_id = g.product_id AND ${variantCondition(req, p)}) AS skus`
    : `${PRODUCT_JSON_BARE} AS p, '{}'::text[] AS skus`;
  const limit = p.add(req.limit + 1);
  // The count reads the matches through a fence (OFFSET 0), so that each match's rank is
  // computed below the window and the window buffers narrow rows (id, rank). Unfenced, the
  // planner computed the rank above the window, which then buffered every match with its search
  // vector (~400 bytes): at 1,000,000 products (13,000–17,000 matches for one word) that spilled
  // past work_mem to disk (docs/benchmarks.md, "Catalog at 1,000,000 products").
  // Capped (a first page): the matches read stop at cap + 1, so a broad query costs cap rows,
  // and says so by its total (sql.ts then ranks its freshest matches, degrade.ts).
  const read = cap !== undefined ? `LIMIT ${p.add(cap + 1)}` : 'OFFSET 0';
  return `WITH matched AS (${matched}),
            counted AS (SELECT m.*, count(*) OVER () AS total FROM (SELECT * FROM matched ${read}) m),
            page AS (SELECT * FROM counted m ${keyset} ORDER BY m.rank DESC, m.product_id LIMIT ${limit})
       SELECT page.product_id, page.rank, page.total::int AS total, ${product}
         FROM page JOIN catalog_product_groups g ON g.product_id = page.product_id
        ORDER BY page.rank DESC, page.product_id`;
}

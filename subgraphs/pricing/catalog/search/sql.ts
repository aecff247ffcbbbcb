import distance from 'damerau-levenshtein';
import type { Db } from '../../../../lib/db/index.ts';
import { minorUnits } from '../../../../lib/graphql/decimal.ts';
import type { CatalogProduct } from '../model.ts';
import { PRODUCT_JSON, PRODUCT_JSON_BARE, type ProductRow, productOfRow } from '../products-sql.ts';
import { type Cursors, cursors } from './cursor.ts';
import { SearchInputError, type SearchRequest } from './request.ts';

/**
 * Catalog search in the SQL store the system already runs, the same statements on PGlite
 * (embedded) and PostgreSQL (distributed), no index of its own to keep in step:
 *
 * - full text: a weighted tsvector per product (title and brand, then taxonomy, then option
 *   values and tags, then description; migrations.ts), matched by `websearch_to_tsquery`
 *   (quotes, `or`, `-word`; it never fails on syntax) and ranked by `ts_rank`;
 * - misspellings: when the words as typed match nothing, each word the catalog does not have is
 *   replaced by its nearest catalog word by trigram similarity (pg_trgm, `catalog_search_words`)
 *   and the search runs again; when that finds nothing either, titles similar to the whole query
 *   (trigrams again) are the answer;
 * - filters: taxonomy paths (a category and everything below it), brands, conditions, and on a
 *   variant: its price in a currency (minor units, inclusive), availability, option values;
 * - pages: keyset cursors (cursor.ts) on (rank, product id), so any page costs what the first does;
 * - facets on request: over every match, not the page.
 *
 * Behind `CatalogSearch`, so that a search engine can take over where PostgreSQL stops serving
 * (docs/benchmarks.md, "Catalog", has the measurement).
 */

export interface Facet {
  readonly value: string;
  readonly count: number;
}

export interface PriceBand {
  /** Minor units, inclusive; `max` absent for the last band. */
  readonly min: number;
  readonly max?: number;
  readonly count: number;
}

export interface SearchFacets {
  readonly categories: readonly Facet[];
  readonly brands: readonly Facet[];
  /** By option name (lower case): its values and their counts. */
  readonly options: readonly { readonly name: string; readonly values: readonly Facet[] }[];
  readonly conditions: readonly Facet[];
  /** Products with a variant that can be bought now, and those without. */
  readonly availability: { readonly available: number; readonly unavailable: number };
  /** In the price filter's currency (else none): bands of the lowest variant price. */
  readonly prices: readonly PriceBand[];
}

export interface SearchPage {
  /** Each product's variants are those the filters let through, in the product's order. */
  readonly products: readonly CatalogProduct[];
  /** Where each product stands: a cursor for the page after it (GraphQL's edge cursors). */
  readonly cursors: readonly string[];
  readonly total: number;
  readonly nextCursor?: string;
  readonly facets?: SearchFacets;
  /** The query as it was searched when misspelt words were corrected. */
  readonly correctedQuery?: string;
}

export interface CatalogSearch {
  /** Throws SearchInputError for a cursor this catalog did not give for this search. */
  search(req: SearchRequest): Promise<SearchPage>;
}

/** Price bands of the facets, in major units of the currency. */
const BANDS = [0, 25, 50, 100, 250, 500, 1000];

const AVAILABLE_SQL = `coalesce(v.availability, CASE WHEN v.inventory_level <= 0 THEN 'out_of_stock' ELSE 'in_stock' END)
  IN ('in_stock', 'limited_stock', 'backorder', 'preorder')`;

/** Numbered parameters, collected as the statement is written. */
class Params {
  readonly values: unknown[] = [];
  add(v: unknown): string {
    this.values.push(v);
    return `$${this.values.length}`;
  }
}

/** The condition on one variant `v` (and its price `bp` in the filter's currency). */
function variantCondition(req: SearchRequest, p: Params): string {
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

const priceJoin = (req: SearchRequest, p: Params) =>
  req.filters.price
    ? `LEFT JOIN catalog_base_prices bp ON bp.sku = v.sku AND bp.currency = ${p.add(req.filters.price.currency)}`
    : '';

/** The products' own filters on `g`. */
function productConditions(req: SearchRequest, p: Params): string[] {
  const f = req.filters;
  const parts: string[] = [];
  if (f.categories) parts.push(`g.category_paths && ${p.add(f.categories)}::text[]`);
  if (f.brands) parts.push(`lower(g.brand) = ANY(${p.add(f.brands)}::text[])`);
  if (f.conditions) parts.push(`lower(g.condition) = ANY(${p.add(f.conditions)}::text[])`);
  const variantFiltered = f.price || f.available || f.options || f.pricedIn;
  if (variantFiltered)
    parts.push(
      `EXISTS (SELECT 1 FROM catalog_products v ${priceJoin(req, p)} WHERE v.product_id = g.product_id AND ${variantCondition(req, p)})`,
    );
  return parts;
}

type Matcher = { kind: 'browse' } | { kind: 'text'; query: string } | { kind: 'similar'; query: string };

/** The `matched` CTE: every product of the search with its rank. */
function matchedSql(req: SearchRequest, m: Matcher, ext: string, p: Params): string {
  const where = productConditions(req, p);
  let rank = '0::real';
  let from = 'catalog_product_groups g';
  if (m.kind === 'text') {
    // The query behind a fence (OFFSET 0): the planner does not fold it into a constant, so every
    // query text gets the same plan (the search index, then the rank), which a prepared statement
    // then keeps (PGlite: pglite-prepared.ts). Folded, each text looked cheaper to plan afresh,
    // and planning cost the embedded store more than a search of the default catalog did.
    from += `, (SELECT websearch_to_tsquery('english', ${p.add(m.query)}) AS q OFFSET 0) AS tq`;
    where.unshift('g.search @@ tq.q');
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
    rank = `ts_rank('{0.05, 0.2, 0.4, 1.0}', g.search, tq.q, 1)
      + CASE WHEN ts_filter(g.search, '{a}') @@ tq.q THEN 1 ELSE 0 END
      + CASE WHEN g.option_values && ${named}::text[] THEN 0.5 ELSE 0 END`;
  } else if (m.kind === 'similar') {
    const q = p.add(m.query.toLowerCase());
    where.unshift(`lower(g.title) OPERATOR(${ext}.%) ${q}`);
    rank = `${ext}.similarity(lower(g.title), ${q})`;
  }
  return `SELECT g.product_id, ${rank} AS rank FROM ${from} WHERE ${where.length > 0 ? where.join(' AND ') : 'true'}`;
}

export function createSqlCatalogSearch(db: Db, opts: { trigram: string; secret: string }): CatalogSearch {
  const ext = opts.trigram;
  const cursorsOf: Cursors = cursors(opts.secret);

  async function page(
    req: SearchRequest,
    m: Matcher,
    after: { rank: number; productId: string } | undefined,
  ) {
    const p = new Params();
    const matched = matchedSql(req, m, ext, p);
    const keyset = after
      ? `WHERE m.rank < ${p.add(after.rank)}::real OR (m.rank = ${p.add(after.rank)}::real AND m.product_id > ${p.add(after.productId)})`
      : '';
    const vp = new Params();
    vp.values.push(...p.values);
    // The page's variants: those the filters let through (none read when the caller shows none).
    const product = req.variants
      ? `${PRODUCT_JSON} AS p, ARRAY(SELECT v.sku FROM catalog_products v ${priceJoin(req, vp)}
           WHERE v.product_id = g.product_id AND ${variantCondition(req, vp)}) AS skus`
      : `${PRODUCT_JSON_BARE} AS p, '{}'::text[] AS skus`;
    const limit = vp.add(req.limit + 1);
    const rows = await db.query<{
      product_id: string;
      rank: number;
      total: number;
      p: ProductRow;
      skus: string[];
    }>(
      `WITH matched AS (${matched}),
            counted AS (SELECT m.*, count(*) OVER () AS total FROM matched m),
            page AS (SELECT * FROM counted m ${keyset} ORDER BY m.rank DESC, m.product_id LIMIT ${limit})
       SELECT page.product_id, page.rank, page.total::int AS total, ${product}
         FROM page JOIN catalog_product_groups g ON g.product_id = page.product_id
        ORDER BY page.rank DESC, page.product_id`,
      vp.values,
    );
    return rows;
  }

  /**
   * Catalog words for the query's words it does not have. Candidates are the catalog words most
   * alike by trigrams (pg_trgm's index, at a similarity of 0.2: a transposed letter in a short
   * word, "chiar", shares few trigrams with "chair"; catalog_search_near_words in migrations.ts);
   * the one fewest edits away wins (optimal
   * string alignment: a transposition is one edit), and only within reach: one edit for a word
   * of up to five letters, two for longer ones.
   */
  async function corrected(query: string): Promise<string | undefined> {
    const words = query.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? [];
    const candidates = [...new Set(words.filter((w) => w.length >= 3 && !/^\d+$/.test(w)))];
    if (candidates.length === 0) return undefined;
    const rows = await db.query<{ word: string; known: boolean; near: string[] | null }>(
      'SELECT word, known, near FROM catalog_search_near_words($1::text[])',
      [candidates],
    );
    const fix = new Map<string, string>();
    for (const r of rows) {
      if (r.known || !r.near) continue;
      const reach = r.word.length <= 5 ? 1 : 2;
      let best: { word: string; steps: number } | undefined;
      for (const near of r.near) {
        const steps = distance(r.word, near).steps;
        if (steps <= reach && (!best || steps < best.steps)) best = { word: near, steps };
      }
      if (best) fix.set(r.word, best.word);
    }
    if (fix.size === 0) return undefined;
    return query.replace(/[\p{L}\p{N}]+/gu, (w) => fix.get(w.toLowerCase()) ?? w);
  }

  async function facets(req: SearchRequest, m: Matcher): Promise<SearchFacets> {
    const p = new Params();
    const matched = matchedSql(req, m, ext, p);
    const counts = await db.query<{ kind: string; value: string; n: number }>(
      `WITH matched AS (${matched})
       SELECT 'category' AS kind, c AS value, count(*)::int AS n
         FROM matched m JOIN catalog_product_groups g USING (product_id), unnest(g.category_paths) AS c
        GROUP BY c
       UNION ALL
       SELECT 'brand', g.brand, count(*)::int FROM matched m JOIN catalog_product_groups g USING (product_id)
        WHERE g.brand IS NOT NULL GROUP BY g.brand
       UNION ALL
       SELECT 'condition', lower(g.condition), count(*)::int FROM matched m JOIN catalog_product_groups g USING (product_id)
        GROUP BY lower(g.condition)
       UNION ALL
       SELECT 'option', k, count(DISTINCT v.product_id)::int
         FROM matched m JOIN catalog_products v USING (product_id), unnest(v.option_keys) AS k GROUP BY k
       UNION ALL
       SELECT 'available', (EXISTS (SELECT 1 FROM catalog_products v WHERE v.product_id = m.product_id AND ${AVAILABLE_SQL}))::text,
              count(*)::int FROM matched m GROUP BY 2`,
      p.values,
    );
    const top = (kind: string, n = 20) =>
      counts
        .filter((r) => r.kind === kind)
        .sort((a, b) => b.n - a.n || a.value.localeCompare(b.value))
        .slice(0, n)
        .map((r) => ({ value: r.value, count: Number(r.n) }));
    const byOption = new Map<string, Facet[]>();
    for (const r of counts.filter((c) => c.kind === 'option')) {
      const at = r.value.indexOf('=');
      const name = r.value.slice(0, at);
      const list = byOption.get(name) ?? [];
      list.push({ value: r.value.slice(at + 1), count: Number(r.n) });
      byOption.set(name, list);
    }
    const availableCount = (v: string) =>
      Number(counts.find((r) => r.kind === 'available' && r.value === v)?.n ?? 0);
    return {
      categories: top('category'),
      brands: top('brand'),
      conditions: top('condition'),
      options: [...byOption.entries()]
        .sort(([a], [b]) => a.localeCompare(b))
        .map(([name, values]) => ({
          name,
          values: values.sort((a, b) => b.count - a.count || a.value.localeCompare(b.value)).slice(0, 30),
        })),
      availability: { available: availableCount('true'), unavailable: availableCount('false') },
      prices: req.filters.price ? await priceBands(req, m) : [],
    };
  }

  async function priceBands(req: SearchRequest, m: Matcher): Promise<PriceBand[]> {
    const p = new Params();
    const matched = matchedSql(req, m, ext, p);
    const currency = p.add(req.filters.price?.currency);
    const bands = p.add(BANDS);
    const rows = await db.query<{ band: number; n: number }>(
      `WITH matched AS (${matched}),
            lowest AS (SELECT min(bp.amount) AS amount FROM matched m JOIN catalog_products v USING (product_id)
                         JOIN catalog_base_prices bp ON bp.sku = v.sku AND bp.currency = ${currency}
                        GROUP BY m.product_id)
       SELECT width_bucket(amount, ${bands}::numeric[]) AS band, count(*)::int AS n FROM lowest GROUP BY 1`,
      p.values,
    );
    return BANDS.map((min, i) => ({
      min: min * 100,
      ...(BANDS[i + 1] !== undefined ? { max: (BANDS[i + 1] as number) * 100 - 1 } : {}),
      count: Number(rows.find((r) => Number(r.band) === i + 1)?.n ?? 0),
    }));
  }

  /** The first page: the words as typed; when they match nothing, corrected; then titles alike. */
  async function firstPage(req: SearchRequest) {
    if (!req.query) {
      const matcher: Matcher = { kind: 'browse' };
      return { matcher, rows: await page(req, matcher, undefined) };
    }
    let matcher: Matcher = { kind: 'text', query: req.query };
    let rows = await page(req, matcher, undefined);
    if (rows.length > 0) return { matcher, rows };
    const fixed = await corrected(req.query);
    if (fixed) {
      matcher = { kind: 'text', query: fixed };
      rows = await page(req, matcher, undefined);
      if (rows.length > 0) return { matcher, rows, correctedQuery: fixed };
    }
    matcher = { kind: 'similar', query: req.query };
    return { matcher, rows: await page(req, matcher, undefined) };
  }

  return {
    async search(req) {
      let found: { matcher: Matcher; rows: Awaited<ReturnType<typeof page>>; correctedQuery?: string };
      if (req.cursor) {
        const at = cursorsOf.read(req, req.cursor);
        const matcher = at && matcherOf(at.matcher);
        if (!at || !matcher)
          throw new SearchInputError('/cursor', 'is not a cursor this catalog gave for this search');
        found = {
          matcher,
          rows: await page(req, matcher, at),
          ...(matcher.kind === 'text' && matcher.query !== req.query
            ? { correctedQuery: matcher.query }
            : {}),
        };
      } else found = await firstPage(req);
      const { matcher, rows, correctedQuery } = found;
      const hasNext = rows.length > req.limit;
      const shown = rows.slice(0, req.limit);
      const last = shown.at(-1);
      const products = shown.map((r) => {
        const product = productOfRow(r.p);
        const keep = new Set(r.skus);
        return { ...product, variants: product.variants.filter((v) => keep.has(v.sku)) };
      });
      const cursorAt = (r: (typeof shown)[number]) =>
        cursorsOf.make(req, { rank: Number(r.rank), productId: r.product_id, matcher });
      return {
        products,
        cursors: shown.map(cursorAt),
        total: Number(rows[0]?.total ?? 0),
        ...(hasNext && last
          ? {
              nextCursor: cursorsOf.make(req, {
                rank: Number(last.rank),
                productId: last.product_id,
                matcher,
              }),
            }
          : {}),
        ...(req.facets ? { facets: await facets(req, matcher) } : {}),
        ...(correctedQuery ? { correctedQuery } : {}),
      };
    },
  };
}

/** A matcher as a cursor carries it back (signed, so it is one this code wrote). */
function matcherOf(m: unknown): Matcher | undefined {
  const x = m as { kind?: unknown; query?: unknown } | null;
  if (x?.kind === 'browse') return { kind: 'browse' };
  if ((x?.kind === 'text' || x?.kind === 'similar') && typeof x.query === 'string')
    return { kind: x.kind, query: x.query };
  return undefined;
}

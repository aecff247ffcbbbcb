import type { Db } from '../../../../lib/db/index.ts';
import type { SearchRequest } from './request.ts';
import { AVAILABLE_SQL, type Matcher, matchedSql, Params } from './statement.ts';

/** A search's facets (search/sql.ts): what a storefront shows beside the results to narrow them. */

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

/** Price bands of the facets, in major units of the currency. */
const BANDS = [0, 25, 50, 100, 250, 500, 1000];

/** Counts over every match of a search (not its page); price bands in the price filter's currency. */
export async function searchFacets(
  db: Db,
  ext: string,
  req: SearchRequest,
  m: Matcher,
): Promise<SearchFacets> {
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
    prices: req.filters.price ? await priceBands(db, ext, req, m) : [],
  };
}

async function priceBands(db: Db, ext: string, req: SearchRequest, m: Matcher): Promise<PriceBand[]> {
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

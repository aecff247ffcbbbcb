import type { Db } from '../../../../lib/db/index.ts';
import { FRESHNESS_KEY } from './freshness-key.ts';
import type { Matcher } from './statement.ts';

/**
 * A broad search at scale (issue 47; docs/catalog.md, "Broad searches"): the published answer of
 * search engines, not a home-made index.
 *
 * - The count is exact up to `COUNT_CAP` matches, then said to be a lower bound, as
 *   Elasticsearch's `track_total_hits` does (`hits.total.relation: "gte"`).
 * - A query with more matches than that ranks only the freshest of them (at least MIN_RANKED),
 *   as Vespa's match-phase degradation ranks the best by a stored attribute (`max-hits`): the
 *   freshness is the product's `updated_at`, when the merchant's feed last changed it (then
 *   md5 of its id, a stable order among those changed at once). Every match fresher than the
 *   threshold is ranked exactly; none older is.
 *
 * The threshold starts at the FIRST_SLICE freshest products of the catalog and widens while
 * fewer than MIN_RANKED of them match: each step intersects the text's index with the freshness
 * index, so a step costs what its fresh matches do and what the slice's range of the freshness
 * index does, never every match. A step widens by what its fresh matches say of the query's
 * share of the catalog (`widening`): twice, four or eight times, not always eight. A search
 * found broad is remembered with its slice (search/sql.ts) and every later search pays that
 * slice's range again, so a slice wider than needed is paid on every search: at 1,000,000
 * products a 64,000-product slice cost 3–4 times an 8,000 one (docs/catalog.md).
 */

/** Exact counts up to this; measured at 1,000,000 products (docs/catalog.md). */
export const COUNT_CAP = 1000;
/**
 * A catalog of at most this many products is searched exactly, whatever a query matches: every
 * match counted and ranked, every page of a category reachable. Measured (docs/catalog.md,
 * "Where PostgreSQL stops"): exact search holds the 25 ms p99 at 44,716 products (17.3 ms) and
 * not at 66,994 (33.9 ms). Only a larger catalog caps the count and degrades a broad query.
 */
export const EXACT_UP_TO = 50_000;
/**
 * The freshest products the first step reads: at 1,000,000 products a product-type word finds
 * ~120 among 8,000, a brand and a word ~20 (then 64,000: ~190); 1,000 found ~15, a step more.
 */
export const FIRST_SLICE = 8000;
/** Widen the threshold while fewer matches than this are fresh enough. */
export const MIN_RANKED = 20;
/** A step widens at most this many times (and then when none of its products matched). */
const WIDEN = 8;
/** A widened slice aims at this many fresh matches: a margin over MIN_RANKED for the sample's spread. */
const AIM = 30;

/**
 * How many times wider the next slice is, when the last one held `found` fresh matches (fewer
 * than MIN_RANKED): the least power of two that should hold AIM of them at the same share, at
 * least 2 and at most WIDEN. Powers of two keep the thresholds read (and cached) few.
 */
export function widening(found: number): number {
  if (found <= 0) return WIDEN;
  let times = 2;
  while (times < WIDEN && found * times < AIM) times *= 2;
  return times;
}

export interface Freshness {
  /** The catalog is searched exactly (at most `exactUpTo` products): no cap, no degradation. */
  exact(): Promise<boolean>;
  /**
   * The freshness threshold of the FIRST_SLICE freshest products times `wider` (1, then the
   * product of each step's `widening`); undefined when it would hold every product (then every
   * match is ranked).
   */
  since(wider: number): Promise<string | undefined>;
  forget(): void;
}

export function createFreshness(db: Db, exactUpTo = EXACT_UP_TO): Freshness {
  let sizes: Promise<number> | undefined;
  const thresholds = new Map<number, Promise<string | undefined>>();
  const read = async () => {
    const rows = await db.query<{ n: number }>('SELECT count(*)::int AS n FROM catalog_product_groups');
    return Number(rows[0]?.n ?? 0);
  };
  /** The updated_at of the k-th freshest product, by the index on it. */
  const threshold = async (k: number) => {
    const rows = await db.query<{ t: string }>(
      `SELECT ${FRESHNESS_KEY} AS t FROM catalog_product_groups ORDER BY ${FRESHNESS_KEY} DESC LIMIT 1 OFFSET $1`,
      [k - 1],
    );
    return rows[0]?.t;
  };
  const count = () => {
    sizes ??= read().catch((err) => {
      sizes = undefined;
      throw err;
    });
    return sizes;
  };
  return {
    forget() {
      sizes = undefined;
      thresholds.clear();
    },
    exact: async () => (await count()) <= exactUpTo,
    async since(wider) {
      const products = await count();
      if (products <= exactUpTo) return undefined;
      // A catalog under 64,000 products starts at an eighth of it.
      const k = Math.ceil(Math.min(FIRST_SLICE, products / WIDEN)) * wider;
      if (k >= products) return undefined;
      let t = thresholds.get(k);
      if (!t) {
        t = threshold(k);
        thresholds.set(k, t);
        t.catch(() => thresholds.delete(k));
      }
      return t;
    },
  };
}

/**
 * A broad first page (more than COUNT_CAP matched): the freshest matches of `m` ranked, the
 * threshold widened while fewer than MIN_RANKED of them are fresh enough; every match when the
 * slice would hold the whole catalog (or the catalog is searched exactly).
 */
export async function freshestMatches<R extends { total: number }>(
  freshness: Freshness,
  m: Matcher,
  page: (m: Matcher) => Promise<R[]>,
): Promise<{ matcher: Matcher; rows: R[] }> {
  for (let wider = 1; ; ) {
    const since = await freshness.since(wider);
    if (since === undefined) return { matcher: m, rows: await page(m) };
    const fresh = await page({ ...m, since });
    const found = Number(fresh[0]?.total ?? 0);
    if (found >= MIN_RANKED) return { matcher: { ...m, since }, rows: fresh };
    wider *= widening(found);
  }
}

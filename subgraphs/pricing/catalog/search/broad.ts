import type { Db } from '../../../../lib/db/index.ts';
import type { SearchRequest } from './request.ts';
import { type Matcher, matchedSql, Params } from './statement.ts';

/**
 * Broad searches remembered (degrade.ts; docs/catalog.md, "Broad searches"), until the catalog
 * changes: how a search's first page matched (its words, corrected or not, and its freshness
 * threshold), so that the next time it skips the capped read; and, read once beside it, the
 * products that the words and the product's own filters find among the fresh ones: its
 * candidates. A remembered search then reads those rows by their key instead of intersecting the
 * text index (every match of the words: 13,000–18,000 at 1,000,000 products) with the freshness
 * index (the slice: 8,000 products or more) again, as Lucene's query cache keeps a clause's
 * documents until the index changes. The candidates are the products that the words, the
 * threshold and the product's own filters (category, brand, condition) find: only a catalog
 * change changes that, which every process hears of (CatalogChanged) and then forgets them all.
 * What a variant's stock or price decides (availability, a price range, an option on one
 * variant) changes without one: it is left out of the candidates and checked on every search.
 * The ranks are computed on every search as before, so the page is the one the search without
 * candidates gives.
 */

/** How many broad searches are remembered (the oldest forgotten first). */
export const BROAD_REMEMBERED = 10_000;
/** A search with more fresh candidates than this is remembered without them (its slice is read). */
export const MAX_CANDIDATES = 1_000;
/** Candidates held across all remembered searches at most (~40 bytes each): the oldest searches go first. */
export const CANDIDATES_HELD = 200_000;

export interface RememberedBroad {
  /** With `candidates` once they were read. */
  readonly matcher: Matcher;
  readonly correctedQuery?: string;
}

export interface BroadMemory {
  get(key: string): RememberedBroad | undefined;
  /** Remembers a search found broad (`found.matcher.since` set) and reads its candidates beside it. */
  remember(key: string, req: SearchRequest, found: RememberedBroad): void;
  forget(): void;
}

/** The filters a product's own row answers: what only a catalog change changes. */
const productOnly = (req: SearchRequest): SearchRequest => {
  const { categories, brands, conditions } = req.filters;
  return {
    ...req,
    filters: {
      ...(categories ? { categories } : {}),
      ...(brands ? { brands } : {}),
      ...(conditions ? { conditions } : {}),
    },
  };
};

export function createBroadMemory(db: Db, ext: string): BroadMemory {
  const entries = new Map<string, RememberedBroad>();
  let held = 0;
  /** Bumped by `forget`: candidates read before it are not kept after it. */
  let generation = 0;
  const size = (e: RememberedBroad | undefined) => e?.matcher.candidates?.length ?? 0;
  const drop = (key: string) => {
    held -= size(entries.get(key));
    entries.delete(key);
  };
  const set = (key: string, e: RememberedBroad) => {
    drop(key);
    held += size(e);
    entries.set(key, e);
    for (const oldest of entries.keys()) {
      if (entries.size <= BROAD_REMEMBERED && held <= CANDIDATES_HELD) break;
      drop(oldest);
    }
  };
  const candidates = async (key: string, req: SearchRequest, found: RememberedBroad) => {
    const asked = generation;
    const p = new Params();
    const { candidates: _, ...matcher } = found.matcher;
    const rows = await db.query<{ product_id: string }>(
      `SELECT m.product_id FROM (${matchedSql(productOnly(req), matcher, ext, p)}) m LIMIT ${MAX_CANDIDATES + 1}`,
      p.values,
    );
    // Forgotten meanwhile, or remembered anew: these rows may be of another catalog.
    if (asked !== generation || entries.get(key) !== found || rows.length > MAX_CANDIDATES) return;
    set(key, { ...found, matcher: { ...found.matcher, candidates: rows.map((r) => r.product_id) } });
  };
  return {
    get: (key) => entries.get(key),
    remember(key, req, found) {
      set(key, found);
      // Beside the search: a failure only leaves the search to read its slice, as before.
      candidates(key, req, found).catch(() => {});
    },
    forget() {
      generation++;
      entries.clear();
      held = 0;
    },
  };
}

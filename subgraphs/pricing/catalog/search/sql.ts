import type { Clock } from '../../../../lib/clock.ts';
import type { Db } from '../../../../lib/db/index.ts';
import type { CatalogProduct } from '../model.ts';
import { productOfRow } from '../products-sql.ts';
import { type Cursors, cursors, searchFingerprint } from './cursor.ts';
import { COUNT_CAP, createFreshness, freshestMatches } from './degrade.ts';
import { type SearchFacets, searchFacets } from './facets.ts';
import { createFirstPages, type Found, type Row } from './first-page.ts';
import { createSearchMemory, MAX_CANDIDATES, RANKED_FROM } from './remembered.ts';
import { SearchInputError, type SearchRequest } from './request.ts';
import { type Matcher, SINCE } from './statement.ts';

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
 * - facets on request: over every match, not the page;
 * - broad queries in a catalog past EXACT_UP_TO products (degrade.ts): past COUNT_CAP matches the
 *   count is a lower bound, and only the freshest matches are ranked (and faceted); a smaller
 *   catalog is searched exactly.
 *
 * Behind `CatalogSearch`, so that a search engine can take over where PostgreSQL stops serving
 * (docs/benchmarks.md, "Catalog", has the measurement).
 */

export type { Facet, PriceBand, SearchFacets } from './facets.ts';

export interface SearchPage {
  /** Each product's variants are those the filters let through, in the product's order. */
  readonly products: readonly CatalogProduct[];
  /** Where each product stands: a cursor for the page after it (GraphQL's edge cursors). */
  readonly cursors: readonly string[];
  readonly total: number;
  /** The total is a lower bound (more matched): only the freshest matches were ranked and faceted. */
  readonly totalCapped?: boolean;
  readonly nextCursor?: string;
  readonly facets?: SearchFacets;
  /** The query as it was searched when misspelt words were corrected. */
  readonly correctedQuery?: string;
}

export interface CatalogSearch {
  /** Throws SearchInputError for a cursor this catalog did not give for this search. */
  search(req: SearchRequest): Promise<SearchPage>;
  /**
   * The catalog changed (an import's commit, in this process or another: the CatalogChanged
   * event): the corrections remembered from its words are forgotten.
   */
  catalogChanged(): void;
}

export interface CatalogSearchOptions {
  trigram: string;
  secret: string;
  /** degrade.ts, EXACT_UP_TO (tests: lower). */
  exactUpTo?: number;
  /** How long a remembered search's ranked matches are served before they are read again (remembered.ts). */
  rememberMs?: number;
  clock?: Clock;
}

export function createSqlCatalogSearch(db: Db, opts: CatalogSearchOptions): CatalogSearch {
  const ext = opts.trigram;
  const cursorsOf: Cursors = cursors(opts.secret);
  const pages = createFirstPages(db, ext);
  const freshness = createFreshness(db, opts.exactUpTo);
  /** The catalog is small enough to search exactly (learnt at the first broad query; until a change). */
  let exactCatalog: boolean | undefined;
  /**
   * Searches by their fingerprint (broad ones, and exact ones of many matches): how their first
   * page matched and their ranked matches, until the catalog changes, read again past their
   * life (remembered.ts).
   */
  const remembered = createSearchMemory(db, ext, {
    ...(opts.rememberMs !== undefined ? { lifeMs: opts.rememberMs } : {}),
    ...(opts.clock ? { clock: opts.clock } : {}),
  });

  /** The page after a cursor: the words and the threshold it carries. */
  async function continued(req: SearchRequest, cursor: string): Promise<Found> {
    const at = cursorsOf.read(req, cursor);
    const carried = at && matcherOf(at.matcher);
    if (!at || !carried)
      throw new SearchInputError('/cursor', 'is not a cursor this catalog gave for this search');
    // A cursor carries the words, not what relaxes them: the cursor stays short (request.ts).
    const matcher: Matcher =
      carried.kind === 'text' ? { ...(await pages.textOf(carried.query)), ...sinceOf(carried) } : carried;
    return {
      matcher,
      rows: await pages.page(req, matcher, at),
      ...(matcher.kind === 'text' && matcher.query !== req.query ? { correctedQuery: matcher.query } : {}),
    };
  }

  /**
   * A first page. A search remembered (this catalog) skips its capped read: a broad one reads
   * the freshest matches at once, and either reads its ranked matches once they are known.
   */
  async function first(req: SearchRequest): Promise<Found> {
    const key = searchFingerprint(req);
    const known = remembered.get(key);
    const rows = known ? await pages.page(req, known.matcher) : [];
    if (known && rows.length > 0) return { ...known, rows };
    // Capped until the catalog is known to be searched exactly (degrade.ts, EXACT_UP_TO): a
    // query within the cap never asks, and one past it asks once (it reads the catalog's size)
    // and is read again whole in an exact catalog; later ones are read whole.
    const page = await pages.firstPage(req, exactCatalog ? undefined : COUNT_CAP);
    let found = page;
    if (!exactCatalog && Number(page.rows[0]?.total ?? 0) > COUNT_CAP) {
      exactCatalog = await freshness.exact();
      found = { ...page, ...(await freshestMatches(freshness, page.matcher, (m) => pages.page(req, m))) };
    }
    if (worthRemembering(found))
      remembered.remember(key, req, {
        matcher: found.matcher,
        ...(found.correctedQuery ? { correctedQuery: found.correctedQuery } : {}),
      });
    return found;
  }

  return {
    catalogChanged() {
      pages.forget();
      freshness.forget();
      exactCatalog = undefined;
      remembered.forget();
    },
    async search(req) {
      const found = req.cursor ? await continued(req, req.cursor) : await first(req);
      return {
        ...pageOf(req, found, cursorsOf),
        ...(req.facets ? { facets: await searchFacets(db, ext, req, found.matcher) } : {}),
      };
    },
  };
}

/** The page a search found, with its cursors (which carry the words and the threshold, never ranked matches). */
function pageOf(req: SearchRequest, found: Found, cursorsOf: Cursors): SearchPage {
  const { matcher, rows, correctedQuery } = found;
  const hasNext = rows.length > req.limit;
  const shown = rows.slice(0, req.limit);
  const last = shown.at(-1);
  const products = shown.map((r) => {
    const product = productOfRow(r.p);
    const keep = new Set(r.skus);
    return { ...product, variants: product.variants.filter((v) => keep.has(v.sku)) };
  });
  const since = sinceOf(matcher);
  const carried: Matcher =
    matcher.kind === 'text'
      ? { kind: 'text', query: matcher.query, ...since }
      : matcher.kind === 'similar'
        ? { kind: 'similar', query: matcher.query, ...since }
        : { kind: 'browse', ...since };
  const cursorAt = (r: Row) =>
    cursorsOf.make(req, { rank: Number(r.rank), productId: r.product_id, matcher: carried });
  return {
    products,
    cursors: shown.map(cursorAt),
    ...(matcher.since !== undefined
      ? { total: COUNT_CAP, totalCapped: true }
      : { total: Number(rows[0]?.total ?? 0) }),
    ...(hasNext && last ? { nextCursor: cursorAt(last) } : {}),
    ...(correctedQuery ? { correctedQuery } : {}),
  };
}

/**
 * A first page worth remembering (remembered.ts): a broad one, or an exact one whose ranking is
 * its cost (RANKED_FROM to MAX_CANDIDATES matches; the count is exact, so it is the matches').
 */
function worthRemembering(found: { matcher: Matcher; rows: readonly { total: number }[] }): boolean {
  if (found.matcher.since !== undefined) return true;
  const total = Number(found.rows[0]?.total ?? 0);
  return total >= RANKED_FROM && total <= MAX_CANDIDATES;
}

/** A matcher as a cursor carries it back (signed, so it is one this code wrote). */
function matcherOf(m: unknown): Matcher | undefined {
  const x = m as { kind?: unknown; query?: unknown; since?: unknown } | null;
  if (x?.since !== undefined && (typeof x.since !== 'string' || !SINCE.test(x.since))) return undefined;
  const at = typeof x?.since === 'string' ? { since: x.since } : {};
  if (x?.kind === 'browse') return { kind: 'browse', ...at };
  if ((x?.kind === 'text' || x?.kind === 'similar') && typeof x.query === 'string')
    return { kind: x.kind, query: x.query, ...at };
  return undefined;
}

const sinceOf = (m: Matcher) => (m.since !== undefined ? { since: m.since } : {});

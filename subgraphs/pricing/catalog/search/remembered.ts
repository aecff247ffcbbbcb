import { ExponentialBackoff, type IBackoff } from 'cockatiel';
import { type Clock, systemClock } from '../../../../lib/clock.ts';
import type { Db } from '../../../../lib/db/index.ts';
import type { SearchRequest } from './request.ts';
import { type Matcher, matchedSql, Params } from './statement.ts';

/**
 * Searches remembered until the catalog changes (docs/catalog.md, "Broad searches" and
 * "Remembered searches"): how a search's first page matched (its words, corrected or not, and a
 * broad search's freshness threshold, degrade.ts), so that the next time it skips the capped read;
 * and, read once beside it, its ranked matches: the products that the words, the threshold and
 * the product's own filters (category, brand, condition) find, each with its rank. A remembered
 * search then reads those (product, rank) pairs instead of intersecting the text index with the
 * freshness index and ranking every match again, as Lucene's query cache keeps a clause's
 * documents, and Solr's queryResultCache a query's ordered documents, until the index changes.
 *
 * Which searches: every broad one (degrade.ts), and an exact one that matched at least
 * RANKED_FROM products: ranking is what such a search costs (at 66,994 products a query of
 * 800–955 matches took 3–9 ms of the store's CPU, against 1.4 ms for a remembered broad one at
 * 1,000,000 products; docs/benchmarks.md), and what a search of a few matches costs is its
 * statement, not its ranks.
 *
 * The matches and their ranks depend on the product rows alone (the search vector, title, brand,
 * option values, updated_at), which only a catalog change changes, which every process hears of
 * (CatalogChanged) and then forgets them all. What a variant's stock or price decides
 * (availability, a price range, an option on one variant) changes without one: it is left out
 * of the remembered matches and checked on every search, so the page, its count and its facets
 * are those of the search without memory (test/pricing/catalog-remembered.test.ts).
 *
 * A CatalogChanged message can be lost (pub/sub drops it across a reconnect; each replica
 * remembers on its own), so ranked matches also have a bounded life (`lifeMs`,
 * CATALOG_REMEMBER_MS): a search that finds its matches older than that is still answered from
 * them, and they are read again beside it (one statement, as when it was first remembered), so
 * no search waits for the read; a search not asked for in twice that life is forgotten, and so
 * are the matches whose read failed since. A replica that missed a message serves matches read
 * before it for under twice `lifeMs` (a search asked just before it is forgotten is answered from
 * matches nearly that old; a read's life counts from its end).
 *
 * A read that fails (the store down or overloaded) pauses every read of matches in this process
 * for a backoff (cockatiel's decorrelated jitter from READ_RETRY_MS, doubling up to the life),
 * reset by the next read that succeeds: the searches go on matching and ranking themselves, or on
 * their old matches, instead of sending a failing read beside each one; a search remembered
 * during the pause is read at its first search after it. One pause for all: a search whose read
 * always fails (a statement timeout) delays the others' reads too, by at most the life.
 */

/** How many searches are remembered (the oldest forgotten first). */
export const SEARCHES_REMEMBERED = 10_000;
/** A search with more matches than this is remembered without them (its slice is read). */
export const MAX_CANDIDATES = 1_000;
/** Ranked matches held across all remembered searches at most (~60 bytes each): the oldest searches go first. */
export const CANDIDATES_HELD = 200_000;
/**
 * An exact search (not broad) is remembered from this many matches: below it, ranking costs less
 * than the statement (at 4,531 products no labelled query matches more than 93, 0.7–1.0 ms of the
 * store's CPU each, unchanged).
 */
export const RANKED_FROM = 200;
/** The first pause of the reads of matches after one failed (doubling, with jitter, up to the life). */
export const READ_RETRY_MS = 1_000;
/** How long ranked matches are served before they are read again (CATALOG_REMEMBER_MS's default). */
export const REMEMBER_MS = 30_000;

export interface RememberedSearch {
  /** With `ranked` once they were read. */
  readonly matcher: Matcher;
  readonly correctedQuery?: string;
}

export interface SearchMemory {
  /** The search as remembered; past its life its matches are read again beside the caller. */
  get(key: string): RememberedSearch | undefined;
  /** Remembers a search (broad, or exact with RANKED_FROM to MAX_CANDIDATES matches) and reads its ranked matches beside it. */
  remember(key: string, req: SearchRequest, found: RememberedSearch): void;
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

/** A remembered search with what reading its matches again needs. */
interface Held {
  readonly found: RememberedSearch;
  readonly req: SearchRequest;
  /** When its matches were read (before the first read: when it was remembered). */
  readonly at: number;
  /** A read of its matches is under way. */
  reading: boolean;
  /** Its matches were read once at least (a search remembered while reads were paused was not). */
  readonly read: boolean;
}

/** After a failed read, no read of matches starts until a backoff has passed; a success resets it. */
function createReadPause(clock: Clock, life: number) {
  const backoffs = new ExponentialBackoff({
    initialDelay: READ_RETRY_MS,
    maxDelay: Math.max(READ_RETRY_MS, life),
  });
  let backoff: IBackoff<unknown> | undefined;
  let pausedUntil = Number.NEGATIVE_INFINITY;
  return {
    paused: () => clock.now() < pausedUntil,
    failed() {
      backoff = backoff ? backoff.next(undefined) : backoffs.next();
      pausedUntil = clock.now() + backoff.duration;
    },
    succeeded() {
      backoff = undefined;
    },
  };
}

export function createSearchMemory(
  db: Db,
  ext: string,
  opts: { lifeMs?: number; clock?: Clock } = {},
): SearchMemory {
  const life = opts.lifeMs ?? REMEMBER_MS;
  const clock = opts.clock ?? systemClock;
  const entries = new Map<string, Held>();
  let held = 0;
  /** Bumped by `forget`: matches read before it are not kept after it. */
  let generation = 0;
  const pause = createReadPause(clock, life);
  const size = (h: Held | undefined) => h?.found.matcher.ranked?.ids.length ?? 0;
  const drop = (key: string) => {
    held -= size(entries.get(key));
    entries.delete(key);
  };
  const set = (key: string, h: Held) => {
    drop(key);
    held += size(h);
    entries.set(key, h);
    for (const oldest of entries.keys()) {
      if (entries.size <= SEARCHES_REMEMBERED && held <= CANDIDATES_HELD) break;
      drop(oldest);
    }
  };
  /** Reads the search's ranked matches (again), beside the search that asked. */
  const read = async (key: string, h: Held) => {
    const asked = generation;
    h.reading = true;
    try {
      const p = new Params();
      const { ranked: _, ...matcher } = h.found.matcher;
      const rows = await db.query<{ product_id: string; rank: number }>(
        `SELECT m.product_id, m.rank FROM (${matchedSql(productOnly(h.req), matcher, ext, p)}) m LIMIT ${MAX_CANDIDATES + 1}`,
        p.values,
      );
      // Forgotten meanwhile, or remembered anew: these rows may be of another catalog.
      if (asked !== generation || entries.get(key) !== h) return;
      // More than are kept: the search matches them itself (matched again each life).
      const ranked =
        rows.length > MAX_CANDIDATES
          ? undefined
          : // The rank as the store computed it (a double): written back as a float8 parameter, the same value.
            { ids: rows.map((r) => r.product_id), ranks: rows.map((r) => Number(r.rank)) };
      const found = { ...h.found, matcher: { ...matcher, ...(ranked ? { ranked } : {}) } };
      set(key, { found, req: h.req, at: clock.now(), reading: false, read: true });
      pause.succeeded();
    } catch {
      pause.failed();
    } finally {
      h.reading = false;
    }
  };
  // A failed read only leaves the search to match and rank, or its old matches until twice their
  // life, and pauses the reads (above); `read` catches its own failure.
  const readBeside = (key: string, h: Held) => {
    if (!pause.paused()) void read(key, h);
  };
  return {
    get(key) {
      const h = entries.get(key);
      if (!h) return undefined;
      const age = clock.now() - h.at;
      if (age >= 2 * life) {
        drop(key);
        return undefined;
      }
      // Past its life, or never read (remembered while the reads were paused): read beside.
      if ((age >= life || !h.read) && !h.reading) readBeside(key, h);
      return h.found;
    },
    remember(key, req, found) {
      const h: Held = { found, req, at: clock.now(), reading: false, read: false };
      set(key, h);
      readBeside(key, h);
    },
    forget() {
      generation++;
      entries.clear();
      held = 0;
    },
  };
}

import type { Db } from '../../../../lib/db/index.ts';

/**
 * The words of a query that name an option value ("northfold running shoes 40", "pasta 250 g",
 * "black office chair"), so that a product without that value is still found, below those with
 * it (search/statement.ts: the relaxed match). Every word must match for a product to be found
 * at all; a shopper who names a size or a colour still wants the product in another one, rather
 * than nothing.
 *
 * The catalog's option values (lower case, as `option_values` holds them) are read once and
 * remembered; the owner calls `forget` when an import changes the catalog (the CatalogChanged
 * event), as for the corrections (corrections.ts), and they are read again beside the searches
 * (at most every OPTION_VALUES_REFRESH_MS: not once per event of a large import).
 */
export interface OptionWords {
  /**
   * The query without the runs of words that are option values, or undefined when it has none,
   * is nothing but them, or uses web search syntax (quotes, `or`, `-word`): taking a word out
   * of those would change what they mean.
   */
  relaxed(query: string): Promise<string | undefined>;
  forget(): void;
}

/** Distinct values read at most: a catalog with more relaxes nothing (and says so by `undefined`). */
export const MAX_OPTION_VALUES = 50_000;

const SYNTAX = /["]|(^|\s)-|(^|\s)or(\s|$)/i;

/** The query's words not covered by a run (one or more consecutive words) that is a value. */
export function withoutValues(query: string, values: ReadonlySet<string>): string | undefined {
  if (SYNTAX.test(query)) return undefined;
  const words = query.toLowerCase().split(' ');
  const covered = new Array<boolean>(words.length).fill(false);
  for (let i = 0; i < words.length; i++)
    for (let j = i + 1; j <= words.length; j++)
      if (values.has(words.slice(i, j).join(' '))) covered.fill(true, i, j);
  const rest = words.filter((_, i) => !covered[i]);
  return rest.length === words.length || rest.length === 0 ? undefined : rest.join(' ');
}

/** A catalog change reads the values again at most this often (an import announces 1,000 SKUs an event). */
export const OPTION_VALUES_REFRESH_MS = 10_000;

export function createOptionWords(db: Db, now: () => number = Date.now): OptionWords {
  /** The values read last; undefined for a catalog with too many (nothing relaxed). */
  let values: ReadonlySet<string> | undefined;
  let loaded = false;
  let loading: Promise<void> | undefined;
  let stale = true;
  let readAt = Number.NEGATIVE_INFINITY;
  const read = async () => {
    // The database keeps them (option-values.ts, catalog_option_values): a few dozen rows, where
    // their DISTINCT over every product's option_values took ~1 s at 1,000,000 products.
    const rows = await db.query<{ value: string }>(
      `SELECT value FROM catalog_option_values LIMIT ${MAX_OPTION_VALUES + 1}`,
    );
    values = rows.length > MAX_OPTION_VALUES ? undefined : new Set(rows.map((r) => r.value));
    loaded = true;
  };
  const refresh = () => {
    stale = false;
    readAt = now();
    loading ??= read()
      .catch((err) => {
        stale = true; // read again: at the next search while none succeeded, else after the interval
        if (!loaded) throw err;
      })
      .finally(() => {
        loading = undefined;
      });
    return loading;
  };
  return {
    async relaxed(query) {
      if (stale && (!loaded || now() - readAt >= OPTION_VALUES_REFRESH_MS)) {
        const reading = refresh();
        // The first read is waited for; later ones run beside the searches, which use the
        // values read before (a value missing for a while only leaves a word as strict as typed).
        if (!loaded) await reading;
      } else if (!loaded && loading) await loading;
      return values ? withoutValues(query, values) : undefined;
    },
    forget() {
      stale = true;
    },
  };
}

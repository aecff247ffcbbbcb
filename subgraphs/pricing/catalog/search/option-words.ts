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
 * event), as for the corrections (corrections.ts).
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

export function createOptionWords(db: Db): OptionWords {
  let values: Promise<ReadonlySet<string> | undefined> | undefined;
  const load = async (): Promise<ReadonlySet<string> | undefined> => {
    const rows = await db.query<{ value: string }>(
      `SELECT DISTINCT v AS value FROM catalog_product_groups, unnest(option_values) AS v LIMIT ${MAX_OPTION_VALUES + 1}`,
    );
    return rows.length > MAX_OPTION_VALUES ? undefined : new Set(rows.map((r) => r.value));
  };
  return {
    async relaxed(query) {
      values ??= load();
      const loading = values;
      try {
        const known = await loading;
        return known ? withoutValues(query, known) : undefined;
      } catch (err) {
        // A failed read is not remembered: the next search reads again.
        if (values === loading) values = undefined;
        throw err;
      }
    },
    forget() {
      values = undefined;
    },
  };
}

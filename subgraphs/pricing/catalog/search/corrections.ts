import distance from 'damerau-levenshtein';
import type { Db } from '../../../../lib/db/index.ts';

/**
 * Misspelt words of a query (search/sql.ts): each word the catalog does not have, replaced by
 * the catalog word nearest to it. Candidates are the catalog words most alike by trigrams
 * (pg_trgm's index, at a similarity of 0.2: a transposed letter in a short word, "chiar", shares
 * few trigrams with "chair"; catalog_search_near_words in migrations.ts); the one fewest edits
 * away wins (optimal string alignment: a transposition is one edit), and only within reach: one
 * edit for a word of up to five letters, two for longer ones.
 *
 * Each word's answer (its correction, or none) is remembered: it depends on the catalog's words
 * alone (catalog_search_words), which only an import or the seed changes, and the owner calls
 * `forget` on every such change (the CatalogChanged event, in every process). A query whose
 * words are all remembered is corrected without the store, so that the search can try the words
 * as typed and, when they find nothing, the corrected ones in one statement.
 */
export interface Corrections {
  /**
   * From memory alone: undefined when a word of the query has not been looked up yet; else the
   * query corrected (`fixed`), or no `fixed` when no word of it has a correction.
   */
  known(query: string): { fixed?: string } | undefined;
  /** Looks up the words not remembered yet (one statement), remembers them, and corrects. */
  corrected(query: string): Promise<string | undefined>;
  /** The catalog's words changed: every answer is forgotten. */
  forget(): void;
}

/** Words remembered at most (the oldest forgotten first): a stream of made-up words stays bounded. */
export const MAX_REMEMBERED_WORDS = 10_000;

const WORD = /[\p{L}\p{N}]+/gu;

/** The words a correction may replace: three letters or more, not a number. */
const correctable = (query: string): string[] => [
  ...new Set((query.toLowerCase().match(WORD) ?? []).filter((w) => w.length >= 3 && !/^\d+$/.test(w))),
];

/** The nearest of `near` within reach of `word`, if any. */
function nearest(word: string, near: readonly string[]): string | undefined {
  const reach = word.length <= 5 ? 1 : 2;
  let best: { word: string; steps: number } | undefined;
  for (const candidate of near) {
    const steps = distance(word, candidate).steps;
    if (steps <= reach && (!best || steps < best.steps)) best = { word: candidate, steps };
  }
  return best?.word;
}

export function createCorrections(db: Db): Corrections {
  /** Word → its correction, or null: the catalog has it, or nothing near is within reach. */
  const remembered = new Map<string, string | null>();
  /** Bumped by `forget`: an answer asked for before it is not remembered after it. */
  let generation = 0;

  const remember = (word: string, fix: string | null) => {
    if (remembered.size >= MAX_REMEMBERED_WORDS && !remembered.has(word)) {
      const oldest = remembered.keys().next().value;
      if (oldest !== undefined) remembered.delete(oldest);
    }
    remembered.set(word, fix);
  };

  /** The query with its remembered corrections, or undefined when nothing changes. */
  const apply = (query: string): string | undefined => {
    let changed = false;
    const fixed = query.replace(WORD, (w) => {
      const fix = remembered.get(w.toLowerCase());
      if (!fix) return w;
      changed = true;
      return fix;
    });
    return changed ? fixed : undefined;
  };

  return {
    known(query) {
      if (!correctable(query).every((w) => remembered.has(w))) return undefined;
      const fixed = apply(query);
      return fixed ? { fixed } : {};
    },
    async corrected(query) {
      const missing = correctable(query).filter((w) => !remembered.has(w));
      if (missing.length > 0) {
        const asked = generation;
        const had = new Map(correctable(query).map((w) => [w, remembered.get(w)]));
        const rows = await db.query<{ word: string; known: boolean; near: string[] | null }>(
          'SELECT word, known, near FROM catalog_search_near_words($1::text[])',
          [missing],
        );
        const answers = new Map<string, string | null>(
          rows.map((r) => [r.word, r.known || !r.near ? null : (nearest(r.word, r.near) ?? null)]),
        );
        if (asked !== generation) {
          // Forgotten meanwhile: this query gets the store's answer, which is not remembered.
          const fixed = query.replace(
            WORD,
            (w) => answers.get(w.toLowerCase()) ?? had.get(w.toLowerCase()) ?? w,
          );
          return fixed === query ? undefined : fixed;
        }
        for (const w of missing) remember(w, answers.get(w) ?? null);
      }
      return apply(query);
    },
    forget() {
      generation++;
      remembered.clear();
    },
  };
}

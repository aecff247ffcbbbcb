/**
 * Lone surrogates: JSON may write one (`"\ud800"`, or a high half not followed by a low one) and
 * a JavaScript string may hold one, but it is no Unicode text: UTF-8 cannot encode it, so
 * PostgreSQL's jsonb refuses it ("invalid input syntax for type json") and a text parameter
 * reaches the server as U+FFFD (node-postgres encodes with Buffer, which replaces it). Pure.
 */

/** String.prototype.isWellFormed (ES2024; Node 20 has it, this project's TypeScript lib, ES2023, does not type it). */
type WellFormedString = string & { isWellFormed(): boolean };

/** The escape of a surrogate (`\ud800` to `\udfff`, any case): a JSON text without one writes none. */
const SURROGATE_ESCAPE = /\\u[dD][89a-fA-F]/;

/** Whether `s` holds a lone surrogate (is not well-formed UTF-16). */
export function hasLoneSurrogate(s: string): boolean {
  return !(s as WellFormedString).isWellFormed();
}

/**
 * Whether a JSON text could hold a lone surrogate once parsed: it writes a surrogate escape, or
 * holds a lone one raw (a text decoded from UTF-8 never does: a decoder writes U+FFFD for bytes
 * that are not UTF-8; one taken from a JSON body, such as a GraphQL append's line, can).
 * True does not mean it does (a pair is two escapes): the parsed value is then searched.
 * Cheap: a few percent of judging a line (docs/catalog.md, "Import"; bench/catalog/line-checks.ts).
 */
export function mayHoldLoneSurrogate(jsonText: string): boolean {
  return (jsonText.includes('\\u') && SURROGATE_ESCAPE.test(jsonText)) || hasLoneSurrogate(jsonText);
}

/** `s` cut to at most `units` UTF-16 code units, never between the two halves of a pair. */
export function cutText(s: string, units: number): string {
  if (s.length <= units) return s;
  const code = s.charCodeAt(units - 1);
  return s.slice(0, code >= 0xd800 && code <= 0xdbff ? units - 1 : units);
}

/** Why a string PostgreSQL cannot store is refused, by what it holds (one wording everywhere). */
export const UNSTORABLE = {
  nul: 'holds U+0000 (\\u0000), which PostgreSQL text and jsonb cannot store',
  loneSurrogate:
    'holds a lone surrogate (such as \\ud800 without a low half after it): no Unicode text, which PostgreSQL text and jsonb cannot store',
} as const;

export const hasNul = (s: string): boolean => s.includes('\0');

/** The location of the first string or member name in `value` that `bad` finds, as segments. */
export function stringPath(
  value: unknown,
  bad: (s: string) => boolean,
  path: (string | number)[] = [],
): (string | number)[] | undefined {
  if (typeof value === 'string') return bad(value) ? path : undefined;
  if (Array.isArray(value)) {
    for (const [i, v] of value.entries()) {
      const found = stringPath(v, bad, [...path, i]);
      if (found) return found;
    }
    return undefined;
  }
  if (typeof value === 'object' && value !== null)
    for (const [k, v] of Object.entries(value)) {
      if (bad(k)) return [...path, k];
      const found = stringPath(v, bad, [...path, k]);
      if (found) return found;
    }
  return undefined;
}

/**
 * The first string or member name of a caller's JSON value that PostgreSQL's text and jsonb
 * cannot store (U+0000, a lone surrogate), and why: for a small document stored whole (a feed's
 * metadata, a promotion rule), walked without a look at its text first (feed lines are looked
 * at first: feed/line.ts).
 */
export function unstorableString(
  value: unknown,
): { segments: (string | number)[]; reason: string } | undefined {
  const nul = stringPath(value, hasNul);
  if (nul) return { segments: nul, reason: UNSTORABLE.nul };
  const lone = stringPath(value, hasLoneSurrogate);
  if (lone) return { segments: lone, reason: UNSTORABLE.loneSurrogate };
  return undefined;
}

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

/** String.prototype.toWellFormed (ES2024, in Node 20): each lone surrogate replaced by U+FFFD. */
type ToWellFormedString = string & { toWellFormed(): string };

/** `s` as any store keeps it: each lone surrogate U+FFFD (what node-postgres would send anyway). */
export function wellFormed(s: string): string {
  return (s as ToWellFormedString).toWellFormed();
}

/** Whether a JSON text writes a surrogate escape (`\ud800` to `\udfff`, any case). */
export function writesSurrogateEscape(jsonText: string): boolean {
  return jsonText.includes('\\u') && SURROGATE_ESCAPE.test(jsonText);
}

/** Whether `s` holds a lone surrogate (is not well-formed UTF-16). */
export function hasLoneSurrogate(s: string): boolean {
  return !(s as WellFormedString).isWellFormed();
}

/**
 * Whether a JSON text could hold a lone surrogate once parsed: it writes a surrogate escape, or
 * holds a lone one raw (a text decoded from UTF-8 never does: a decoder writes U+FFFD for bytes
 * that are not UTF-8; one taken from a JSON body, such as a GraphQL append's line, can).
 * True does not mean it does (a pair is two escapes): the parsed value is then searched.
 * Cheap for a line without a surrogate escape: a few percent of judging it (docs/catalog.md,
 * "Import"; bench/catalog/line-checks.ts); a line that writes one (an emoji escaped, as Python's
 * json.dumps does by default) is walked as well.
 */
export function mayHoldLoneSurrogate(jsonText: string): boolean {
  return writesSurrogateEscape(jsonText) || hasLoneSurrogate(jsonText);
}

/** Whether `c`, one code point of a string (as `for…of` gives them), is a lone surrogate. */
export function isLoneSurrogate(c: string): boolean {
  const code = c.charCodeAt(0);
  return c.length === 1 && code >= 0xd800 && code <= 0xdfff;
}

/**
 * `s` with each lone surrogate written as the text of its escape (`\ud800`, six characters), as
 * formatJsonPath writes one in a name: a message or JSON pointer that quotes a caller's string
 * stays Unicode text (storable, and printable by any UTF-8 writer). A pair is kept. Pure.
 */
export function escapeLoneSurrogates(s: string): string {
  if (!hasLoneSurrogate(s)) return s;
  let out = '';
  for (const c of s) out += isLoneSurrogate(c) ? `\\u${c.charCodeAt(0).toString(16)}` : c;
  return out;
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

/**
 * The location of the first string or member name in `value` that `bad` finds, as segments, in
 * document order. Walked with a stack of its own, not by recursion (a promotion rule nested
 * 5,000 arrays deep overflowed the call stack: a 500 where a 400 belongs), and each node keeps
 * its parent and key only, so a path is built once, for the string found.
 */
export function stringPath(value: unknown, bad: (s: string) => boolean): (string | number)[] | undefined {
  interface Node {
    readonly value: unknown;
    readonly parent: Node | undefined;
    readonly key: string | number;
  }
  const pathOf = (n: Node) => {
    const segments: (string | number)[] = [];
    for (let at: Node | undefined = n; at?.parent; at = at.parent) segments.unshift(at.key);
    return segments;
  };
  const stack: Node[] = [{ value, parent: undefined, key: '' }];
  while (stack.length > 0) {
    const n = stack.pop() as Node;
    // A member name is judged where the recursion met it: before its value.
    if (n.parent && typeof n.key === 'string' && bad(n.key)) return pathOf(n);
    const v = n.value;
    if (typeof v === 'string') {
      if (bad(v)) return pathOf(n);
      continue;
    }
    if (typeof v !== 'object' || v === null) continue;
    const children: Node[] = [];
    if (Array.isArray(v)) for (const [i, c] of v.entries()) children.push({ value: c, parent: n, key: i });
    else for (const [k, c] of Object.entries(v)) children.push({ value: c, parent: n, key: k });
    for (let i = children.length - 1; i >= 0; i--) stack.push(children[i] as Node);
  }
  return undefined;
}

/**
 * The first string or member name of a caller's JSON value that PostgreSQL's text and jsonb
 * cannot store (U+0000, a lone surrogate), and why. Given the JSON `text` the value was parsed
 * from, a walk runs only when the text could write such a string: only the escape `\u0000`
 * writes U+0000 in strict JSON, and only a surrogate escape (or a raw lone surrogate) a lone
 * surrogate. A feed line is judged that way (the walk, which builds a path at every member, was
 * 401 ms of a profile's 10 s on 14,408 lines, more than the parse); a small document stored
 * whole (a feed's metadata, a promotion rule) is walked without its text.
 */
export function unstorableString(
  value: unknown,
  text?: string,
): { segments: (string | number)[]; reason: string } | undefined {
  const nul = text === undefined || text.includes('\\u0000') ? stringPath(value, hasNul) : undefined;
  if (nul) return { segments: nul, reason: UNSTORABLE.nul };
  const lone =
    text === undefined || mayHoldLoneSurrogate(text) ? stringPath(value, hasLoneSurrogate) : undefined;
  if (lone) return { segments: lone, reason: UNSTORABLE.loneSurrogate };
  return undefined;
}

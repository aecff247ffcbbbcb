/**
 * An operator's free text (a tracking number, an approval's note, a client's or key's name, a
 * webhook's description): one rule for every entry point, protocol-neutral and pure. Each caller
 * turns a refusal into its own error (GraphQL BAD_USER_INPUT, a problem body) naming its field,
 * as `${field} ${reason}`.
 *
 * The text is trimmed (String.prototype.trim: Unicode white space and line terminators), then
 * must be 1 to `max` characters counted as Unicode code points (an emoji is one, as an operator
 * counts it and as PostgreSQL's char_length does; at most 2 × max UTF-16 units), with no C0 or
 * C1 control character nor DEL (U+0000–U+001F, U+007F–U+009F: a terminal escape or a line break
 * in a log line or a list), no bidirectional embedding, override or isolate control
 * (U+202A–U+202E, U+2066–U+2069: they reorder how the text after them is shown, so an OAuth client
 * named `evil\u202Emoc.elgoog` reads "evilgoogle.com" on the consent page a buyer trusts: the
 * "Trojan Source" display spoofing, CVE-2021-42574), and no lone surrogate (no Unicode text:
 * PostgreSQL's jsonb refuses it, a text parameter is sent as U+FFFD). U+0000 has its own reason:
 * PostgreSQL cannot store it. The marks U+200E and U+200F stay: they override nothing, and
 * right-to-left text needs no control at all.
 */
import { UNSTORABLE } from '../json/well-formed.ts';

export type FreeTextRefusal = 'empty' | 'nul' | 'lone-surrogate' | 'control' | 'bidi-control' | 'too-long';

export type FreeText<T> =
  | { readonly ok: true; readonly text: T }
  | { readonly ok: false; readonly refusal: FreeTextRefusal; readonly reason: string };

export interface FreeTextRule {
  /** Most code points after trimming. */
  readonly max: number;
  /** Whether an empty text (after trimming) is refused; when not, it is `null`. */
  readonly required: boolean;
}

const refuse = (refusal: FreeTextRefusal, reason: string) => ({ ok: false, refusal, reason }) as const;

const hex = (code: number) => `U+${code.toString(16).toUpperCase().padStart(4, '0')}`;

const isControl = (code: number) => code < 0x20 || (code >= 0x7f && code <= 0x9f);

/** LRE, RLE, PDF, LRO, RLO and LRI, RLI, FSI, PDI (Unicode's bidirectional algorithm, UAX #9). */
const isBidiControl = (code: number) =>
  (code >= 0x202a && code <= 0x202e) || (code >= 0x2066 && code <= 0x2069);

/** The text trimmed, or why it is refused (a phrase that reads after the field's name). Never throws. */
export function freeText(
  raw: string | null | undefined,
  rule: FreeTextRule & { required: true },
): FreeText<string>;
export function freeText(raw: string | null | undefined, rule: FreeTextRule): FreeText<string | null>;
export function freeText(raw: string | null | undefined, rule: FreeTextRule): FreeText<string | null> {
  const t = (raw ?? '').trim();
  if (t === '') return rule.required ? refuse('empty', 'must not be empty') : { ok: true, text: null };
  const tooLong = () =>
    refuse('too-long', `is longer than ${rule.max} characters (Unicode code points, after trimming)`);
  // Each code point is one or two units: past 2 × max units the text is too long whatever it holds.
  if (t.length > 2 * rule.max) return tooLong();
  let points = 0;
  for (let i = 0; i < t.length; i++, points++) {
    const code = t.charCodeAt(i);
    if (code === 0) return refuse('nul', UNSTORABLE.nul);
    if (isControl(code))
      return refuse(
        'control',
        `holds the control character ${hex(code)} (no C0 or C1 control character nor DEL)`,
      );
    if (isBidiControl(code))
      return refuse(
        'bidi-control',
        `holds the bidirectional control ${hex(code)} (no embedding, override or isolate: it would change how the text is shown)`,
      );
    if (code < 0xd800 || code > 0xdfff) continue;
    const low = t.charCodeAt(i + 1);
    if (code > 0xdbff || !(low >= 0xdc00 && low <= 0xdfff))
      return refuse('lone-surrogate', UNSTORABLE.loneSurrogate);
    i++;
  }
  return points > rule.max ? tooLong() : { ok: true, text: t };
}

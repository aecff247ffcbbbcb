/**
 * lib/text/free-text.ts: the one rule for an operator's free text (trimmed, 1..max code points,
 * no C0/C1 control character nor DEL, no bidirectional control, no lone surrogate), as a table
 * and as a property over any string.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { type FreeTextRefusal, freeText } from '../../lib/text/free-text.ts';

/** Independent of the code under test: Unicode text iff UTF-8 carries it unchanged. */
const wellFormed = (s: string) => Buffer.from(s, 'utf8').toString('utf8') === s;

const REQUIRED = { max: 5, required: true };
const OPTIONAL = { max: 5, required: false };

describe('freeText', () => {
  it.each<[string, string | null | undefined, string | null]>([
    ['plain text', 'UPS', 'UPS'],
    ['text with spaces around, trimmed', '  1Z 99  ', '1Z 99'],
    ['tabs and line breaks around, trimmed', '\t\r\nab\n', 'ab'],
    ['an emoji, one character of five', 'ok \u{1F600}!', 'ok \u{1F600}!'],
    ['five emoji: ten UTF-16 units, five code points', '\u{1F600}'.repeat(5), '\u{1F600}'.repeat(5)],
    ['accents and other scripts', 'Zoë 東', 'Zoë 東'],
    ['U+00A0 inside (a space, not a control character)', 'a\u00a0b', 'a\u00a0b'],
    ['U+00A0 around (trimmed as white space)', '\u00a0ab\u00a0', 'ab'],
    ['right-to-left text, with no control', 'שלום', 'שלום'],
    ['the marks LRM and RLM (they override nothing)', 'a\u200eb\u200f', 'a\u200eb\u200f'],
    ['a zero-width joiner in an emoji sequence', '\u{1F469}\u200d\u{1F4BB}', '\u{1F469}\u200d\u{1F4BB}'],
  ])('accepts %s', (_what, raw, text) => {
    expect(freeText(raw, REQUIRED)).toEqual({ ok: true, text });
  });

  it.each<[string, string | null | undefined, FreeTextRefusal, RegExp]>([
    ['null', null, 'empty', /must not be empty/],
    ['undefined', undefined, 'empty', /must not be empty/],
    ['the empty text', '', 'empty', /must not be empty/],
    ['only white space', ' \t\n ', 'empty', /must not be empty/],
    ['U+0000', 'a\u0000b', 'nul', /U\+0000/],
    ['U+0007 (BEL)', 'a\u0007b', 'control', /U\+0007/],
    ['U+001B (ESC)', '\u001b[31m', 'control', /U\+001B/],
    ['DEL', 'a\u007f', 'control', /U\+007F/],
    ['U+0085 (NEL, C1)', 'a\u0085b', 'control', /U\+0085/],
    ['U+009B (CSI, C1)', 'a\u009bb', 'control', /U\+009B/],
    ['a line break inside', 'a\nb', 'control', /U\+000A/],
    ['U+202E (RLO: "ab" + RLO + "dc" shows as abcd)', 'ab\u202edc', 'bidi-control', /U\+202E/],
    ['U+202A (LRE)', 'a\u202ab', 'bidi-control', /U\+202A/],
    ['U+2066 (LRI)', 'a\u2066b', 'bidi-control', /U\+2066/],
    ['U+2069 (PDI)', 'a\u2069', 'bidi-control', /U\+2069/],
    ['a lone high surrogate', 'ok\ud800', 'lone-surrogate', /lone surrogate/],
    ['a lone low surrogate', '\udc00ok', 'lone-surrogate', /lone surrogate/],
    ['a pair written low first', '\ude00\ud83d', 'lone-surrogate', /lone surrogate/],
    ['six characters', 'abcdef', 'too-long', /longer than 5 characters/],
    ['six emoji', '\u{1F600}'.repeat(6), 'too-long', /longer than 5 characters/],
    ['a long text holding U+0000 (too long first)', `${'a'.repeat(20)}\u0000`, 'too-long', /longer than 5/],
  ])('refuses %s', (_what, raw, refusal, reason) => {
    const r = freeText(raw, REQUIRED);
    expect(r).toMatchObject({ ok: false, refusal });
    if (!r.ok) expect(r.reason).toMatch(reason);
  });

  it('answers an optional empty text with null, and judges a non-empty one alike', () => {
    expect(freeText(null, OPTIONAL)).toEqual({ ok: true, text: null });
    expect(freeText('  ', OPTIONAL)).toEqual({ ok: true, text: null });
    expect(freeText('a\u0001', OPTIONAL)).toMatchObject({ ok: false, refusal: 'control' });
  });

  it('writes reasons that are themselves storable text', () => {
    for (const raw of ['\ud800', '\u0000', '\u0085', 'x'.repeat(20)]) {
      const r = freeText(raw, REQUIRED);
      expect(r.ok).toBe(false);
      if (!r.ok) expect(wellFormed(r.reason) && !r.reason.includes('\0')).toBe(true);
    }
  });

  it('for any string, accepts storable text within bounds or refuses with a reason, never throws (property)', () => {
    const unit = fc.oneof(
      fc.string({ unit: 'binary', maxLength: 4 }),
      fc.constantFrom(
        '\ud800',
        '\udfff',
        '\u{1F600}',
        '\u0000',
        '\u0085',
        '\u007f',
        ' ',
        '\n',
        '\u2028',
        '\u202e',
        '\u2066',
        '\u200f',
        'a',
      ),
    );
    const raw = fc.oneof(
      fc.string({ unit: 'binary' }),
      fc.array(unit, { maxLength: 8 }).map((p) => p.join('')),
      fc.constantFrom(null, undefined),
    );
    fc.assert(
      fc.property(raw, fc.integer({ min: 1, max: 12 }), fc.boolean(), (s, max, required) => {
        const r = freeText(s, { max, required });
        if (!r.ok) {
          expect(r.reason.length).toBeGreaterThan(0);
          return;
        }
        if (r.text === null) {
          expect(required).toBe(false);
          expect((s ?? '').trim()).toBe('');
          return;
        }
        expect(r.text).toBe((s ?? '').trim());
        expect(wellFormed(r.text)).toBe(true);
        expect(r.text.includes('\0')).toBe(false);
        // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what is checked
        expect(/[\u0000-\u001f\u007f-\u009f]/.test(r.text)).toBe(false);
        expect(/[\u202a-\u202e\u2066-\u2069]/.test(r.text)).toBe(false);
        const points = [...r.text].length;
        expect(points).toBeGreaterThanOrEqual(1);
        expect(points).toBeLessThanOrEqual(max);
      }),
      { numRuns: 2000 },
    );
  });

  it('accepts every well-formed text without control characters within bounds (property)', () => {
    const text = fc
      .string({ unit: 'grapheme', minLength: 1, maxLength: 12 })
      .map((s) => s.trim())
      // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters have their own refusal
      .filter((s) => s !== '' && !/[\u0000-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/.test(s));
    fc.assert(
      fc.property(text, (s) => {
        expect(freeText(s, { max: [...s].length, required: true })).toEqual({ ok: true, text: s });
      }),
    );
  });
});

/**
 * Lone surrogates in a feed line, judged purely (subgraphs/pricing/catalog/feed/line.ts, issue
 * 47): refused wherever they are, escaped or raw, with the JSONPath at fault; a pair, escaped in
 * any case or raw, accepted. And the pieces it rests on (lib/json/well-formed.ts): a JSONPath
 * escapes a lone surrogate in a member name, a cut never splits a pair.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { formatJsonPath, parseJsonPath } from '../../lib/json/json-path.ts';
import { cutText } from '../../lib/json/well-formed.ts';
import { judgeLine } from '../../subgraphs/pricing/catalog/feed/line.ts';

/** A one-variant feed line whose title is written as `titleJson` (raw JSON text). */
const feedLine = (titleJson: string, variantTitleJson = '"V"') =>
  `{"id":"p-1","title":${titleJson},"variants":[{"id":"p-1-v","title":${variantTitleJson},"price":{"amount":100,"currency":"USD"}}]}`;

/** Independent of the code under test: a string is Unicode text iff UTF-8 carries it unchanged. */
const wellFormed = (s: string) => Buffer.from(s, 'utf8').toString('utf8') === s;

const LONE = /lone surrogate/;

describe('judgeLine and surrogates', () => {
  const refused: [string, string, string][] = [
    ['a lone high escape', feedLine('"a\\ud800"'), '$.title'],
    ['a lone low escape', feedLine('"\\udc00b"'), '$.title'],
    ['a high escape before a letter', feedLine('"\\ud83dx"'), '$.title'],
    ['a high escape at the end', feedLine('"abc\\udbff"'), '$.title'],
    ['two high escapes, upper case', feedLine('"\\uD800\\uD800"'), '$.title'],
    ['a pair written low first', feedLine('"\\ude00\\ud83d"'), '$.title'],
    ['a pair split by a letter', feedLine('"\\ud83da\\ude00"'), '$.title'],
    ['one in a variant', feedLine('"ok"', '"\\uDFFF"'), '$.variants[0].title'],
    ['a raw lone high one (a line taken from a JSON body)', feedLine('"a\ud800"'), '$.title'],
    ['a raw lone low one', feedLine('"\udc00"'), '$.title'],
  ];
  it.each(refused)('refuses %s, naming its JSONPath', (_what, text, path) => {
    const v = judgeLine(text);
    expect(v).toMatchObject({ ok: false, path, productId: 'p-1' });
    expect(v.ok ? '' : v.reason).toMatch(LONE);
  });

  it('refuses a member name holding one, its path escaping it', () => {
    const v = judgeLine(feedLine('"ok"').replace('{"id"', '{"x\\udfff":1,"id"'));
    expect(v).toMatchObject({ ok: false, path: "$['x\\udfff']" });
    expect(parseJsonPath(v.ok ? '' : v.path)).toEqual(['x\udfff']);
  });

  const accepted: [string, string, string][] = [
    ['a pair, lower case', feedLine('"Smile \\ud83d\\ude00"'), 'Smile \u{1F600}'],
    ['a pair, upper and mixed case', feedLine('"\\uD83D\\uDE00\\uD83d\\uDe00"'), '\u{1F600}\u{1F600}'],
    ['a raw pair', feedLine('"\u{1F600}"'), '\u{1F600}'],
    ['an escaped backslash before "ud800" (no escape at all)', feedLine('"\\\\ud800"'), '\\ud800'],
    ['U+FFFD, what a decoder writes for bytes that are not UTF-8', feedLine('"a\uFFFDb"'), 'a\uFFFDb'],
    ['the escapes around the surrogates', feedLine('"\\ud7ff\\ue000"'), '\uD7FF\uE000'],
  ];
  it.each(accepted)('accepts %s', (_what, text, title) => {
    const v = judgeLine(text);
    expect(v.ok ? v.product.title : v).toBe(title);
  });

  it('accepts a title iff it is Unicode text, written escaped or raw, and says so of no other', () => {
    const units = fc.oneof(
      fc.constantFrom('\ud800', '\udbff', '\udc00', '\udfff', '\ud83d', '\ude00', '\u{1F600}', 'a', ' ', 'é'),
      fc.string({ unit: 'binary', maxLength: 3 }),
    );
    const title = fc.array(units, { maxLength: 8 }).map((parts) => parts.join(''));
    fc.assert(
      fc.property(title, fc.boolean(), (s, raw) => {
        // JSON.stringify escapes a lone surrogate and keeps a pair raw; `raw` unescapes the lone
        // ones too (the text a JSON body's string can carry).
        let json = JSON.stringify(s);
        if (raw)
          json = json.replace(
            /(?<!\\)((?:\\\\)*)\\u(d[89a-f][0-9a-f]{2})/g,
            (_m, before: string, hex: string) => `${before}${String.fromCharCode(Number.parseInt(hex, 16))}`,
          );
        const v = judgeLine(feedLine(json));
        if (s.includes('\0')) expect(v.ok).toBe(false);
        else if (wellFormed(s)) expect(v.ok ? v.product.title : v).toBe(s);
        else {
          expect(v).toMatchObject({ ok: false, path: '$.title' });
          expect(v.ok ? '' : v.reason).toMatch(LONE);
        }
      }),
      { numRuns: 500 },
    );
  });
});

describe('the pieces', () => {
  it.each([
    [['x\ud800'], "$['x\\ud800']"],
    [['\udc00', 0], "$['\\udc00'][0]"],
    [['\ud83d\ude00'], "$['\u{1F600}']"],
    [['a\u0001'], "$['a\\u0001']"],
  ] as [(string | number)[], string][])('formats %j as %s, and reads it back', (segments, path) => {
    expect(formatJsonPath(segments)).toBe(path);
    expect(wellFormed(path)).toBe(true);
    expect(parseJsonPath(path)).toEqual(segments);
  });

  it.each([
    ['abc', 2, 'ab'],
    ['abc', 5, 'abc'],
    ['ab\u{1F600}', 3, 'ab'],
    ['ab\u{1F600}', 4, 'ab\u{1F600}'],
    ['a\u{1F600}c', 2, 'a'],
    ['a\udc00c', 2, 'a\udc00'],
  ])('cuts %j to %i units as %j', (s, n, cut) => {
    expect(cutText(s, n)).toBe(cut);
  });

  it('never leaves a lone half where the text had none', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'grapheme', maxLength: 20 }), fc.nat({ max: 40 }), (s, n) => {
        const cut = cutText(s, n);
        expect(wellFormed(cut)).toBe(true);
        expect(s.startsWith(cut)).toBe(true);
        expect(cut.length).toBeGreaterThanOrEqual(Math.min(s.length, n) - 1);
      }),
    );
  });
});

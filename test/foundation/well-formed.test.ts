/**
 * lib/json/well-formed.ts: where a caller's JSON value holds a string no store keeps (a lone
 * surrogate), found without recursion, in document order; and text cut and made well-formed as
 * the audit stores a reason.
 */
import { describe, expect, it } from 'vitest';
import { parseStrictJson } from '../../lib/json/strict-json.ts';
import {
  cutText,
  escapeLoneSurrogates,
  hasLoneSurrogate,
  stringPath,
  wellFormed,
} from '../../lib/json/well-formed.ts';

describe('stringPath', () => {
  it('finds the first bad string or member name in document order', () => {
    const v = { a: ['ok', { b: 'x\ud800' }], c: '\udc00', ['d\udfff']: 1 };
    expect(stringPath(v, hasLoneSurrogate)).toEqual(['a', 1, 'b']);
    expect(stringPath({ a: 1, ['k\ud800']: 'v\ud800' }, hasLoneSurrogate)).toEqual(['k\ud800']);
    expect(stringPath({ a: ['\ud83d\ude00'] }, hasLoneSurrogate)).toBeUndefined();
  });

  it('walks a value nested 100,000 deep without overflowing the stack', () => {
    let v: unknown = '\ud800';
    for (let i = 0; i < 100_000; i++) v = [v];
    const path = stringPath(v, hasLoneSurrogate);
    expect(path).toHaveLength(100_000);
    expect(path?.every((s) => s === 0)).toBe(true);
  });
});

describe('escapeLoneSurrogates', () => {
  it('writes each lone surrogate as the text of its escape and keeps a pair', () => {
    expect(escapeLoneSurrogates('/x\ud800/\udfff')).toBe('/x\\ud800/\\udfff');
    expect(escapeLoneSurrogates('\ude00\ud83d')).toBe('\\ude00\\ud83d');
    expect(escapeLoneSurrogates('ok \u{1F600}')).toBe('ok \u{1F600}');
    expect(hasLoneSurrogate(escapeLoneSurrogates('a\udbff'))).toBe(false);
  });
});

describe('reasons stored as text', () => {
  it('cuts before a pair, never inside it, and makes a lone half U+FFFD', () => {
    const s = `${'a'.repeat(63)}\u{1F600}`;
    expect(cutText(s, 64)).toBe('a'.repeat(63));
    expect(hasLoneSurrogate(s.slice(0, 64))).toBe(true);
    expect(wellFormed('x\ud800y')).toBe('x\ufffdy');
  });

  it("quotes a duplicate member name as JSON writes it: the strict parser's reason is well-formed", () => {
    const pair = `${'a'.repeat(63)}\u{1F600}`;
    for (const text of [`{"${pair}":1,"${pair}":2}`, '{"\\ud800":1,"\\ud800":2}']) {
      const r = parseStrictJson(text);
      expect(r.ok).toBe(false);
      if (!r.ok) expect(hasLoneSurrogate(r.reason)).toBe(false);
    }
  });
});

/**
 * lib/ap2/canonical.ts's JCS (RFC 8785) against the `canonicalize` package, the RFC's reference
 * code, byte for byte: random JSON of any Unicode (lone surrogates, astral characters, control
 * characters), member names that look like array indexes (an object orders them first, JCS by
 * code unit), RFC 8785's number examples; and what has no JSON form refused, not written.
 */
import { createRequire } from 'node:module';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { jcs } from '../../lib/ap2/canonical.ts';
import { anyJson } from '../support/json-arbitrary.ts';

const canonicalize = createRequire(import.meta.url)('canonicalize') as (v: unknown) => string | undefined;
const text = (v: unknown) => jcs(v).toString('utf8');

describe('JCS (RFC 8785)', () => {
  it('is canonicalize byte for byte over random JSON of any Unicode', () => {
    const json = anyJson(['10', '9', '1', 'a', 'é', '\u{1F600}', '\uFFFF', '\uD800', 'Z', '']);
    fc.assert(
      fc.property(json, (v) => {
        expect(text(v)).toBe(canonicalize(v));
      }),
      { numRuns: 500 },
    );
  });

  it.each([
    // RFC 8785 §3.2.2.3 and Appendix B: numbers as ECMAScript writes them.
    [{ n: [333333333.3333333, 1e30, 4.5, 0.002, 1e-27, -0, 9007199254740992, 5e-324] }],
    [
      {
        '\u20ac': 'Euro Sign',
        '\r': 'Carriage Return',
        '\ufb33': 'Hebrew',
        '1': 'One',
        '\u{1f600}': 'Emoji',
        '\u0080': 'Control',
        '\u00f6': 'Latin',
      },
    ],
    [{ b: [undefined, 1], a: undefined, c: { toJSON: () => ({ z: 1, y: 2 }) } }],
    [{ s: '\u0000\u001f"\\/\u2028\ud834' }],
  ])('writes %j as canonicalize does', (v) => {
    expect(text(v)).toBe(canonicalize(v));
  });

  it.each([
    ['NaN', { a: Number.NaN }],
    ['Infinity', [Number.POSITIVE_INFINITY]],
    ['a BigInt', { a: 1n }],
    ['undefined', undefined],
  ])('refuses %s (no JSON form)', (_what, v) => {
    expect(() => jcs(v)).toThrow();
  });

  it('refuses a cycle', () => {
    const o: Record<string, unknown> = { a: 1 };
    o.self = o;
    expect(() => jcs(o)).toThrow();
  });
});

/**
 * Random JSON values of any Unicode (lone surrogates, astral and control characters), for the
 * property tests of canonical JSON (test/ap2/canonical.test.ts, test/acp/fingerprint.test.ts):
 * member names random, index-like (an object orders those first, JCS by code unit) or one of
 * `names`; numbers integer and double.
 */
import fc from 'fast-check';

export function anyJson(names: readonly string[]): fc.Arbitrary<unknown> {
  const key = fc.oneof(
    fc.string({ unit: 'binary', maxLength: 6 }),
    fc.nat({ max: 1000 }).map(String),
    fc.constantFrom(...names),
  );
  return fc.letrec((tie) => ({
    value: fc.oneof(
      { depthSize: 'small' },
      fc.constant(null),
      fc.boolean(),
      fc.double({ noNaN: true, noDefaultInfinity: true }),
      fc.integer(),
      fc.string({ unit: 'binary', maxLength: 12 }),
      fc.array(tie('value'), { maxLength: 4 }),
      fc.dictionary(key, tie('value'), { maxKeys: 5 }),
    ),
  })).value;
}

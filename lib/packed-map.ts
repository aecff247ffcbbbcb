/**
 * `xs.map(f)` whose result has the same elements kind whichever tier runs it: packed.
 *
 * V8 gives `Array.prototype.map`'s result packed elements when the builtin runs it (the caller
 * interpreted or baseline-compiled) but holey ones when TurboFan inlines it into an optimised
 * caller (Node 20 and 24 alike: `%HasHoleyElements`, test/runtime/packed-map.test.ts). An array
 * carries its elements kind in its map, so a function optimised on the arrays its producer made
 * in one tier is thrown away ("wrong map") when the producer is optimised and its arrays change
 * kind. In the quote path that happened after ready, under the first callers' load, in six
 * functions at once (`priceLines`, `livePrices`, `quoteOf`, `cartHash`, `calculateMany`: docs/
 * performance.md, "Arrays whose kind follows the tier"). A loop that pushes onto `[]` makes packed
 * arrays in every tier. Written by hand: no library sets an array's elements kind.
 */
export function packedMap<T, U>(xs: readonly T[], f: (x: T, i: number) => U): U[] {
  const out: U[] = [];
  for (let i = 0; i < xs.length; i++) out.push(f(xs[i] as T, i));
  return out;
}

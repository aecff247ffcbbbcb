/** The package ships no types: its one function, as its README documents it. */
declare module 'damerau-levenshtein' {
  /** Optimal string alignment distance: insertions, deletions, substitutions and adjacent transpositions. */
  export default function distance(
    a: string,
    b: string,
    limit?: number,
  ): { steps: number; relative: number; similarity: number };
}

/**
 * Just enough of a Dockerfile reader for the image tests: instructions with their arguments,
 * line continuations joined, comments and parser directives dropped. Hand-written because the
 * tests need no more than this split (a parser package would be a dependency for 15 lines).
 */
export interface Instruction {
  op: string;
  args: string;
}

export function parseDockerfile(text: string): Instruction[] {
  const joined = text
    .split('\n')
    .filter((l) => !/^\s*#/.test(l))
    .join('\n')
    .replace(/\\\n/g, ' ');
  return joined
    .split('\n')
    .map((l) => l.trim())
    .filter(Boolean)
    .map((l) => {
      const [op = '', ...rest] = l.split(/\s+/);
      return { op: op.toUpperCase(), args: rest.join(' ') };
    });
}

/** The instructions of each build stage, in order (ARGs before the first FROM are global). */
export function stages(instructions: readonly Instruction[]): Instruction[][] {
  const out: Instruction[][] = [];
  for (const i of instructions) {
    if (i.op === 'FROM') out.push([]);
    out.at(-1)?.push(i);
  }
  return out;
}

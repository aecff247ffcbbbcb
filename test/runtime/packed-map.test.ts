/**
 * lib/packed-map.ts: an array made by `packedMap` has packed elements whichever tier runs the
 * code that makes it, where `Array.prototype.map`'s result is packed from the builtin and holey
 * once TurboFan inlines it. Read with `%HasHoleyElements` in a child started with
 * `--allow-natives-syntax` (the system itself never is), each maker run first as the interpreter
 * runs it, then optimised (`%OptimizeFunctionOnNextCall`), on this Node and, when
 * NODE_NEXT_BINARY names one, on the next.
 */
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const root = fileURLToPath(new URL('../../', import.meta.url));

const PROBE = `
import { packedMap } from './lib/packed-map.ts';
const xs = [1, 2, 3];
const kinds = (make) => {
  const interpreted = %HasHoleyElements(make(xs));
  %PrepareFunctionForOptimization(make);
  make(xs);
  make(xs);
  %OptimizeFunctionOnNextCall(make);
  return { interpreted, optimised: %HasHoleyElements(make(xs)) };
};
const builtin = kinds((a) => a.map((x) => ({ v: x })));
const packed = kinds((a) => packedMap(a, (x) => ({ v: x })));
console.log(JSON.stringify({ builtin, packed }));
`;

const nodes = [process.execPath, ...(process.env.NODE_NEXT_BINARY ? [process.env.NODE_NEXT_BINARY] : [])];

describe('packedMap: one elements kind in every tier', () => {
  it.each(nodes)('on %s', (node) => {
    const r = spawnSync(
      node,
      [
        '--allow-natives-syntax',
        '--no-concurrent-recompilation',
        '--import',
        'tsx',
        '--input-type=module',
        '-e',
        PROBE,
      ],
      { cwd: root, encoding: 'utf8', timeout: 60_000 },
    );
    if (r.status !== 0) throw new Error(r.stderr);
    const { builtin, packed } = JSON.parse(r.stdout.trim().split('\n').at(-1) ?? '{}');
    // What packedMap is for: the builtin's result changes kind when its maker is optimised (this
    // also shows the probe reached optimised code).
    expect(builtin).toEqual({ interpreted: false, optimised: true });
    expect(packed).toEqual({ interpreted: false, optimised: false });
  });
});

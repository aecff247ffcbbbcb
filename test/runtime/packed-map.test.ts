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
const f = (x) => ({ v: x });
// A maker run first as the interpreter runs it, then optimised with whatever it calls inlined.
const kinds = (make) => {
  const interpreted = %HasHoleyElements(make(xs));
  %PrepareFunctionForOptimization(make);
  make(xs);
  make(xs);
  %OptimizeFunctionOnNextCall(make);
  return { interpreted, optimised: %HasHoleyElements(make(xs)) };
};
const builtin = kinds((a) => a.map(f));
const inlined = kinds((a) => packedMap(a, f));
// packedMap optimised on its own, as it is once hot.
const own = kinds((a) => packedMap(a, f));
%PrepareFunctionForOptimization(packedMap);
packedMap(xs, f);
packedMap(xs, f);
%OptimizeFunctionOnNextCall(packedMap);
const alone = %HasHoleyElements(packedMap(xs, f));
console.log(JSON.stringify({ builtin, inlined, own, alone }));
`;

const nodes = [process.execPath, ...(process.env.NODE_NEXT_BINARY ? [process.env.NODE_NEXT_BINARY] : [])];

const probe = (node: string) => {
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
  return JSON.parse(r.stdout.trim().split('\n').at(-1) ?? '{}');
};

describe('packedMap: one elements kind in every tier', () => {
  it.each(nodes)(
    'packed whether run interpreted, inlined into an optimised caller or optimised alone, on %s',
    (node) => {
      const { inlined, own, alone } = probe(node);
      expect(inlined).toEqual({ interpreted: false, optimised: false });
      expect(own).toEqual({ interpreted: false, optimised: false });
      expect(alone).toBe(false);
    },
  );

  it.each(nodes)(
    'the reason for it: Array.prototype.map turns holey once its caller is optimised, on %s (if this fails, this V8 no longer does, and packedMap may go)',
    (node) => {
      expect(probe(node).builtin).toEqual({ interpreted: false, optimised: true });
    },
  );
});

/**
 * graphql-shield 7.6.5 (its last release) imports `isUndefined` from `util`, which Node 23
 * removed: on Node 23 and later the gateway died at start with a SyntaxError. The upstream fix
 * (maticzav/graphql-shield#1552, merged, never released) compares with `undefined` instead;
 * `patches/graphql-shield+7.6.5.patch` applies it at install (`postinstall: patch-package`).
 * These tests fail when the patch is missing, on any Node: they load graphql-shield in a child
 * process whose `util` lacks what Node 23 removed, and on a Node ≥ 23 binary when one is given.
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';

const root = fileURLToPath(new URL('../../', import.meta.url));
const installed = JSON.parse(
  readFileSync(join(root, 'node_modules/graphql-shield/package.json'), 'utf8'),
) as {
  version: string;
};

/** util's deprecated type checks and friends that Node 23 removed (DEP0044–DEP0058 and others). */
const REMOVED_IN_NODE_23 = [
  'isBoolean',
  'isBuffer',
  'isDate',
  'isError',
  'isFunction',
  'isNull',
  'isNullOrUndefined',
  'isNumber',
  'isObject',
  'isPrimitive',
  'isRegExp',
  'isString',
  'isSymbol',
  'isUndefined',
  'log',
  '_extend',
];

// ESM loader hooks: graphql-shield's `util` becomes Node 23's `util` (the removed names gone).
const HOOKS = `
const removed = new Set(${JSON.stringify(REMOVED_IN_NODE_23)});
export async function resolve(specifier, context, next) {
  if ((specifier === 'util' || specifier === 'node:util') && context.parentURL?.includes('/graphql-shield/')) {
    const util = await import('node:util');
    const names = Object.keys(util).filter((n) => n !== 'default' && !removed.has(n) && /^[A-Za-z_$][\\w$]*$/.test(n));
    const source = "import * as u from 'node:util'; export const { " + names.join(', ') + " } = u; export default u;";
    return { url: 'data:text/javascript,' + encodeURIComponent(source), shortCircuit: true };
  }
  return next(specifier, context);
}`;

// What the gateway does with graphql-shield, plus the two rules whose code the patch touches.
const PROBE = `
import { allow, chain, race, rule, shield } from 'graphql-shield';
const yes = rule({ cache: 'no_cache' })(() => true);
const no = rule({ cache: 'no_cache' })(() => false);
const options = { debug: false, allowExternalErrors: false, fallbackError: new Error('denied'), hashFunction: () => 'h' };
const chained = await chain(yes, yes).resolve({}, {}, {}, {}, options);
const raced = await race(no, yes).resolve({}, {}, {}, {}, options);
const refused = await chain(yes, no).resolve({}, {}, {}, {}, options);
console.log(JSON.stringify({ shield: typeof shield({}, { fallbackRule: allow }), chained, raced, refused }));
`;

const dir = mkdtempSync(join(tmpdir(), 'ac-shield-'));
writeFileSync(join(dir, 'hooks.mjs'), HOOKS);
writeFileSync(
  join(dir, 'register.mjs'),
  `import { register } from 'node:module'; register(${JSON.stringify(`file://${join(dir, 'hooks.mjs')}`)});`,
);
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function probe(node: string, args: string[] = []) {
  const run = spawnSync(node, [...args, '--input-type=module', '-e', PROBE], { cwd: root, encoding: 'utf8' });
  return { status: run.status, stdout: run.stdout.trim(), stderr: run.stderr };
}

const EXPECTED = { shield: 'object', chained: true, raced: true, refused: false };

describe('graphql-shield on Node 23 and later (patches/)', () => {
  it('has the patch for exactly the installed graphql-shield version', () => {
    const patches = readdirSync(join(root, 'patches')).filter((f) => f.startsWith('graphql-shield+'));
    expect(patches).toEqual([`graphql-shield+${installed.version}.patch`]);
    const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as {
      scripts: Record<string, string>;
      dependencies: Record<string, string>;
    };
    expect(pkg.scripts.postinstall).toMatch(/\bpatch-package\b/);
    // A dependency, not a devDependency: the image's `npm ci --omit=dev` must apply it too.
    expect(pkg.dependencies['patch-package']).toBeDefined();
  });

  it('loads and evaluates chain and race rules with a util that lacks what Node 23 removed', () => {
    const run = probe(process.execPath, ['--import', join(dir, 'register.mjs')]);
    expect(run.status, run.stderr).toBe(0);
    expect(JSON.parse(run.stdout)).toEqual(EXPECTED);
  });

  it('the Node 23 stand-in is real: an unpatched import of isUndefined fails under it', () => {
    // The import graphql-shield 7.6.5 had, in a module whose path the hook treats as graphql-shield's.
    mkdirSync(join(dir, 'graphql-shield'));
    const unpatched = join(dir, 'graphql-shield', 'rules.mjs');
    writeFileSync(unpatched, "import { isUndefined } from 'util';\nconsole.log(typeof isUndefined);\n");
    const bare = spawnSync(process.execPath, [unpatched], { encoding: 'utf8' });
    if (Number(process.versions.node.split('.')[0]) < 23)
      expect([bare.status, bare.stdout.trim()]).toEqual([0, 'function']); // Node 20/22 still have it
    else expect(bare.stderr).toMatch(/does not provide an export named 'isUndefined'/); // the real thing
    const hooked = spawnSync(process.execPath, ['--import', join(dir, 'register.mjs'), unpatched], {
      encoding: 'utf8',
    });
    expect(hooked.status).not.toBe(0);
    expect(hooked.stderr).toMatch(/does not provide an export named 'isUndefined'/);
  });

  it.runIf(process.env.NODE_NEXT_BINARY)(
    'loads on the Node binary in NODE_NEXT_BINARY (Node 23 or later)',
    () => {
      const run = probe(process.env.NODE_NEXT_BINARY as string);
      expect(run.status, run.stderr).toBe(0);
      expect(JSON.parse(run.stdout)).toEqual(EXPECTED);
    },
  );
});

import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { diffSchemas, failed, gitBase, readSchemaDir } from './diff-gate.ts';
import { lintSdlRoles } from './roles.ts';

const dir = (name: string) => new URL(`../fixtures/graphql/${name}/`, import.meta.url).pathname;
const base = readSchemaDir(dir('base'));
const variant = (name: string) => readSchemaDir(dir(name));

const HEADER = `
  directive @requiresRole(anyOf: [String!]!) on FIELD_DEFINITION
  type Query { ping: Boolean }
`;

describe('the GraphQL diff gate', () => {
  it('fails a mutation added without @requiresRole, naming the field', async () => {
    const [shop] = await diffSchemas(base, variant('added-unrestricted'));
    expect(shop && failed(shop)).toBe(true);
    expect(shop?.breaking.map((c) => c.message)).toEqual([
      "Mutation field 'Mutation.cancelOrder' was added without @requiresRole",
    ]);
  });

  it('passes the same mutation added with @requiresRole', async () => {
    const [shop] = await diffSchemas(base, variant('added-restricted'));
    expect(shop?.breaking).toEqual([]);
    expect(shop && failed(shop)).toBe(false);
    expect(shop?.safe).toBeGreaterThan(0);
  });

  it('fails breaking changes: a removed field and a changed type', async () => {
    const [shop] = await diffSchemas(base, variant('breaking'));
    expect(shop && failed(shop)).toBe(true);
    expect(shop?.breaking.map((c) => c.type).sort()).toEqual(['FIELD_REMOVED', 'FIELD_TYPE_CHANGED']);
  });

  it('fails a mutation stripped of its role restriction', async () => {
    const [shop] = await diffSchemas(base, variant('role-removed'));
    expect(shop?.breaking.map((c) => c.message)).toEqual([
      "Mutation field 'Mutation.placeOrder' lost its @requiresRole: role restriction removed",
    ]);
  });

  it('fails an unrestricted mutation in a schema the base does not have, whatever else changed', async () => {
    const added = new Map([...base, ['new.graphql', `${HEADER} type Mutation { wipe: Boolean }`]]);
    const diffs = await diffSchemas(base, added);
    const fresh = diffs.find((d) => d.file === 'new.graphql');
    expect(fresh?.breaking.map((c) => c.message)).toEqual([
      "Mutation field 'Mutation.wipe' was added without @requiresRole",
    ]);
  });

  it('fails a schema that was removed', async () => {
    const diffs = await diffSchemas(base, new Map());
    expect(diffs[0]?.error).toContain('schema removed');
  });

  it('lets a field deprecated in the base be removed', async () => {
    const before = new Map([
      ['a.graphql', `${HEADER} type Order { id: ID! old: Int @deprecated(reason: "x") }`],
    ]);
    const after = new Map([['a.graphql', `${HEADER} type Order { id: ID! }`]]);
    const [a] = await diffSchemas(before, after);
    expect(a?.breaking).toEqual([]);
  });
});

describe('the diff base of a pull request (--base <git-ref>)', () => {
  it('reads every SDL file at the merge base of the ref and HEAD', () => {
    const root = fileURLToPath(new URL('../..', import.meta.url));
    const base = gitBase('HEAD', root);
    const head = execFileSync('git', ['show', 'HEAD:schemas/supergraph.graphql'], {
      cwd: root,
      encoding: 'utf8',
    });
    expect(base.files.get('supergraph.graphql')).toBe(head);
    expect([...base.files.keys()].every((f) => f.endsWith('.graphql'))).toBe(true);
    expect(base.label).toContain('merge base of HEAD');
  });

  it("fails with git's message for a ref that does not exist", () => {
    const root = fileURLToPath(new URL('../..', import.meta.url));
    expect(() => gitBase('no-such-ref-anywhere', root)).toThrow(/no-such-ref-anywhere/);
  });
});

describe('the role lint of the current SDL (independent of any base)', () => {
  it('names every Mutation field without @requiresRole', () => {
    const [sdl] = variant('added-unrestricted').values();
    expect(lintSdlRoles(sdl ?? '').map((f) => f.coordinate)).toEqual(['Mutation.cancelOrder']);
  });

  it('passes a schema whose mutations all declare roles', () => {
    const [sdl] = variant('added-restricted').values();
    expect(lintSdlRoles(sdl ?? '')).toEqual([]);
  });

  it.each([
    [
      'an extension of Mutation',
      `${HEADER} type Mutation { a: Int @requiresRole(anyOf: ["x"]) } extend type Mutation { b: Int }`,
      'Mutation.b',
    ],
    ['an empty role list', `${HEADER} type Mutation { a: Int @requiresRole(anyOf: []) }`, 'Mutation.a'],
    [
      'a renamed mutation root',
      `${HEADER} schema { query: Query mutation: Writes } type Writes { w: Int }`,
      'Writes.w',
    ],
  ])('catches %s', (_name, sdl, coordinate) => {
    expect(lintSdlRoles(sdl).map((f) => f.coordinate)).toEqual([coordinate]);
  });

  it('reports SDL that does not parse instead of passing it', () => {
    expect(lintSdlRoles('type Mutation {')[0]?.message).toContain('does not parse');
  });
});

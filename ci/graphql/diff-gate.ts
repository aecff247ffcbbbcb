/**
 * The GraphQL diff gate: every subgraph SDL and the supergraph compared with their base by
 * @graphql-inspector. Breaking changes fail, and so does a Mutation field added (or stripped of
 * its role restriction) without @requiresRole (requireRoleOnNewMutations).
 *
 * The base is either the committed baseline (schemas/baseline/, the default: it moves only when
 * someone runs `npm run contract:baseline` and commits it) or a git ref (`--base origin/main`:
 * the merge base of that ref and HEAD, for pull requests).
 */
import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { type Change, CriticalityLevel, DiffRule, diff } from '@graphql-inspector/core';
import { buildSdl, requireRoleOnNewMutations } from './roles.ts';

/** File name (`pricing.graphql`) → SDL. */
export type SchemaFiles = ReadonlyMap<string, string>;

export interface SchemaBase {
  readonly label: string;
  readonly files: SchemaFiles;
}

const isSdl = (name: string) => name.endsWith('.graphql');

/** The SDL files directly in `dir` (not its subfolders, so the baseline is not compared with itself). */
export function readSchemaDir(dir: string): Map<string, string> {
  const files = new Map<string, string>();
  if (!existsSync(dir)) return files;
  for (const name of readdirSync(dir).filter(isSdl).sort())
    files.set(name, readFileSync(join(dir, name), 'utf8'));
  return files;
}

export const baselineBase = (dir: string): SchemaBase => ({
  label: `committed baseline ${dir}`,
  files: readSchemaDir(dir),
});

const git = (args: string[], cwd: string) =>
  execFileSync('git', args, { cwd, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });

/** The schemas at the merge base of `ref` and HEAD (`schemasPath` is relative to the repo root). */
export function gitBase(ref: string, repoRoot: string, schemasPath = 'schemas'): SchemaBase {
  const sha = git(['merge-base', ref, 'HEAD'], repoRoot).trim();
  const names = git(['ls-tree', '--name-only', `${sha}:${schemasPath}`], repoRoot)
    .split('\n')
    .filter(isSdl);
  const files = new Map<string, string>();
  for (const name of names) files.set(name, git(['show', `${sha}:${schemasPath}/${name}`], repoRoot));
  return { label: `merge base of ${ref} (${sha.slice(0, 12)})`, files };
}

export interface FileDiff {
  readonly file: string;
  readonly breaking: readonly Change[];
  readonly dangerous: readonly Change[];
  readonly safe: number;
  /** Set when a side does not build: reported as a failure. */
  readonly error?: string;
}

const RULES = [
  // A field deprecated in the base may be removed (the deprecation was the notice).
  DiffRule.suppressRemovalOfDeprecatedField,
  requireRoleOnNewMutations,
];

async function diffOne(
  file: string,
  before: string | undefined,
  after: string | undefined,
): Promise<FileDiff> {
  if (after === undefined)
    return {
      file,
      breaking: [],
      dangerous: [],
      safe: 0,
      error: 'schema removed: every operation it served breaks',
    };
  let oldSchema: ReturnType<typeof buildSdl> | null = null;
  let newSchema: ReturnType<typeof buildSdl>;
  try {
    newSchema = buildSdl(after);
    if (before !== undefined) oldSchema = buildSdl(before);
  } catch (err) {
    return { file, breaking: [], dangerous: [], safe: 0, error: `does not build: ${(err as Error).message}` };
  }
  const changes = await diff(oldSchema, newSchema, RULES);
  return {
    file,
    breaking: changes.filter((c) => c.criticality.level === CriticalityLevel.Breaking),
    dangerous: changes.filter((c) => c.criticality.level === CriticalityLevel.Dangerous),
    safe: changes.filter((c) => c.criticality.level === CriticalityLevel.NonBreaking).length,
  };
}

/** Compares every file present on either side. */
export async function diffSchemas(base: SchemaFiles, current: SchemaFiles): Promise<FileDiff[]> {
  const names = [...new Set([...base.keys(), ...current.keys()])].sort();
  return Promise.all(names.map((n) => diffOne(n, base.get(n), current.get(n))));
}

export const failed = (d: FileDiff) => d.error !== undefined || d.breaking.length > 0;

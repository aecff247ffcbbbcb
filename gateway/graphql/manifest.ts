import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { Kind, parse, print } from 'graphql';
import { z } from 'zod';

/**
 * The persisted-operation manifest: the repository's own operations (schemas/operations/*.graphql),
 * built by `npm run operations:manifest` (ci/operations.ts) and committed. Apollo's manifest
 * format, so Apollo Client's persisted-query link and Apollo Router read the same file.
 */
export const DEFAULT_MANIFEST_URL = new URL('../../schemas/operations/manifest.json', import.meta.url);

const operation = z.object({
  id: z.string().regex(/^[0-9a-f]{64}$/),
  name: z.string().min(1),
  type: z.enum(['query', 'mutation', 'subscription']),
  body: z.string().min(1),
});
const manifestSchema = z.object({
  format: z.literal('apollo-persisted-query-manifest'),
  version: z.literal(1),
  operations: z.array(operation),
});
export type OperationManifest = z.infer<typeof manifestSchema>;
export type ManifestOperation = z.infer<typeof operation>;

/** An operation's id: the sha256 (hex) of its exact body, as APQ's `sha256Hash` is. */
export const operationId = (body: string): string => createHash('sha256').update(body).digest('hex');

/** Persisted operations by id, from a manifest whose every id matches its body. */
export type PersistedOperations = ReadonlyMap<string, string>;

export class ManifestError extends Error {
  override name = 'ManifestError';
}

export function parseManifest(json: string, where = 'manifest'): PersistedOperations {
  let parsed: OperationManifest;
  try {
    parsed = manifestSchema.parse(JSON.parse(json));
  } catch (err) {
    throw new ManifestError(`${where} is not a persisted-operation manifest: ${(err as Error).message}`);
  }
  const byId = new Map<string, string>();
  for (const op of parsed.operations) {
    if (operationId(op.body) !== op.id)
      throw new ManifestError(`${where}: ${op.name}'s id is not the sha256 of its body`);
    byId.set(op.id, op.body);
  }
  return byId;
}

export const readManifest = (path: string | URL = DEFAULT_MANIFEST_URL): PersistedOperations =>
  parseManifest(readFileSync(path, 'utf8'), String(path));

/**
 * One source file → one manifest entry. A file holds exactly one named operation (and the
 * fragments it uses); the body is graphql-js's print of it, so formatting and comments in the
 * file do not change the id.
 */
export function manifestOperation(source: string, file: string): ManifestOperation {
  const doc = parse(source);
  const ops = doc.definitions.filter((d) => d.kind === Kind.OPERATION_DEFINITION);
  const [op] = ops;
  if (ops.length !== 1 || !op) throw new ManifestError(`${file}: holds ${ops.length} operations, not one`);
  if (!op.name) throw new ManifestError(`${file}: the operation has no name`);
  const body = print(doc);
  return { id: operationId(body), name: op.name.value, type: op.operation, body };
}

/**
 * The manifest of these sources, sorted by operation name; names must be unique. `retired`
 * sources are earlier texts of operations that clients may still send (an operation's id is the
 * hash of its text, so a changed operation is a new id): they follow the current ones, may share
 * a current name, and a text that is also current is listed once. A lookup by name therefore
 * finds the current text first.
 */
export function buildManifest(
  sources: readonly { file: string; source: string }[],
  retired: readonly { file: string; source: string }[] = [],
): OperationManifest {
  const operations = sources.map(({ file, source }) => manifestOperation(source, file));
  const seen = new Map<string, number>();
  for (const op of operations) seen.set(op.name, (seen.get(op.name) ?? 0) + 1);
  const twice = [...seen].filter(([, n]) => n > 1).map(([name]) => name);
  if (twice.length) throw new ManifestError(`operation names used more than once: ${twice.join(', ')}`);
  operations.sort((a, b) => a.name.localeCompare(b.name));
  const ids = new Set(operations.map((op) => op.id));
  const earlier = retired
    .map(({ file, source }) => manifestOperation(source, file))
    .filter((op) => !ids.has(op.id) && ids.add(op.id))
    .sort((a, b) => a.name.localeCompare(b.name) || a.id.localeCompare(b.id));
  return { format: 'apollo-persisted-query-manifest', version: 1, operations: [...operations, ...earlier] };
}

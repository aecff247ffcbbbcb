import type { JsonSchema, UcpDocument } from './files.ts';

/**
 * The release's quirks that need code, each explained in schemas/ucp/v<version>/README.md,
 * "Quirks and how they are handled". Nothing here edits a schema.
 */

/** Where a vendored file would live if its `$id` followed its place in the tree (as all but one do). */
export const UCP_ID_BASE = 'https://ucp.dev/';

const isObject = (v: unknown): v is JsonSchema => typeof v === 'object' && v !== null && !Array.isArray(v);

// Keywords whose values are data: a `$ref`-shaped value inside them is not a reference.
const DATA_KEYWORDS = new Set(['const', 'enum', 'default', 'examples']);

/** Every `$ref` of a schema document (fragment-only references included). */
export function referencesOf(value: unknown, out: string[] = []): string[] {
  if (Array.isArray(value)) for (const v of value) referencesOf(v, out);
  else if (isObject(value)) {
    for (const [keyword, v] of Object.entries(value)) {
      if (keyword === '$ref' && typeof v === 'string') out.push(v);
      else if (!DATA_KEYWORDS.has(keyword)) referencesOf(v, out);
    }
  }
  return out;
}

/** An extra URI a document is registered under, so that a reference that misses it still finds it. */
export interface UcpAlias {
  readonly uri: string;
  readonly document: UcpDocument;
}

const withoutFragment = (uri: string): string => uri.split('#')[0] as string;

/**
 * A reference resolves against its file's `$id`. discovery/profile_schema.json has the `$id`
 * https://ucp.dev/schemas/discovery/profile.json, yet refers to `../schemas/ucp.json` as from its
 * place in the tree (source/discovery/): against its `$id` that is
 * https://ucp.dev/schemas/schemas/ucp.json, which no file is. For every reference that resolves
 * to no file by `$id` but to one by the referring file's place in the tree, the target is also
 * registered under the URI the reference resolves to. A reference that finds no file either
 * way throws, so a new release cannot leave one dangling.
 */
export function referenceAliases(docs: readonly UcpDocument[]): UcpAlias[] {
  const byId = new Map(docs.map((d) => [d.schema.$id, d]));
  const byPlace = new Map(docs.map((d) => [`${UCP_ID_BASE}${d.path}`, d]));
  const aliases = new Map<string, UcpAlias>();
  for (const doc of docs) {
    for (const ref of referencesOf(doc.schema)) {
      if (ref.startsWith('#')) continue;
      const target = withoutFragment(new URL(ref, doc.schema.$id).href);
      if (byId.has(target) || aliases.has(target)) continue;
      const found = byPlace.get(withoutFragment(new URL(ref, `${UCP_ID_BASE}${doc.path}`).href));
      if (!found) throw new Error(`UCP schema: ${doc.path} refers to ${ref}, which no vendored file is`);
      aliases.set(target, { uri: target, document: found });
    }
  }
  return [...aliases.values()];
}

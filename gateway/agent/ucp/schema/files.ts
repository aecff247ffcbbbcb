import { readdirSync, readFileSync } from 'node:fs';

/** The UCP release this merchant follows (the tag is `v` + this date). */
export const UCP_VERSION = '2026-04-08';

/**
 * The vendored release (schemas/ucp/v<version>/: unchanged upstream files; its README says
 * where from). The build copies schemas/ beside dist/, so the same relative URL finds it from
 * this source file under tsx and from the compiled module.
 */
export const UCP_DIR = new URL(`../../../../schemas/ucp/v${UCP_VERSION}/`, import.meta.url);

/** The folders of the release that hold JSON Schema files (upstream `source/schemas`, `source/discovery`). */
export const UCP_SCHEMA_FOLDERS = ['schemas', 'discovery'] as const;

/** A JSON Schema document or subschema, as JSON. */
export type JsonSchema = { [keyword: string]: unknown };

/** One schema file of the release: where it lies in the vendored folder, and its JSON. */
export interface UcpDocument {
  /** Relative to UCP_DIR: `schemas/shopping/checkout.json`. */
  readonly path: string;
  readonly schema: JsonSchema & { readonly $id: string };
}

function walk(folder: string): string[] {
  return readdirSync(new URL(`${folder}/`, UCP_DIR), { withFileTypes: true })
    .flatMap((entry) => (entry.isDirectory() ? walk(`${folder}/${entry.name}`) : [`${folder}/${entry.name}`]))
    .filter((path) => path.endsWith('.json'))
    .sort();
}

/** Reads every vendored JSON Schema file, sorted by path (the one I/O of this module). */
export function readUcpDocuments(): UcpDocument[] {
  return UCP_SCHEMA_FOLDERS.flatMap(walk).map((path) => {
    const schema = JSON.parse(readFileSync(new URL(path, UCP_DIR), 'utf8')) as UcpDocument['schema'];
    if (typeof schema.$id !== 'string') throw new Error(`UCP schema: ${path} has no $id`);
    return { path, schema };
  });
}

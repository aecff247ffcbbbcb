import { readFileSync } from 'node:fs';

/** The ACP release this merchant follows. */
export const ACP_VERSION = '2026-04-17';

/**
 * The vendored release (schemas/acp/<version>/, unchanged upstream files; its README says
 * where from). The build copies schemas/ beside dist/, so the same relative URL finds it from
 * this source file under tsx and from the compiled module.
 */
export const ACP_DIR = new URL(`../../../../schemas/acp/${ACP_VERSION}/`, import.meta.url);

/** A JSON Schema document or subschema, as JSON. */
export type JsonSchema = { [keyword: string]: unknown };

/** A schema file of the bundle: an `$id` and its definitions. */
export interface SchemaDocument extends JsonSchema {
  readonly $id: string;
  readonly $defs: Record<string, JsonSchema>;
}

/** The JSON Schema files of the checkout and cart APIs, each as released. */
export interface AcpDocuments {
  /** schema.agentic_checkout.json: every request, response and object of the checkout API. */
  readonly checkout: SchemaDocument;
  /** schema.discount.json: the discount extension's shapes. */
  readonly discount: SchemaDocument;
  /** schema.extension.json: the extensions framework's shapes. */
  readonly extension: SchemaDocument;
  /** schema.cart.json: the Cart API's shapes (Cart, CartCreateRequest, CartUpdateRequest). */
  readonly cart: SchemaDocument;
}

const readJson = (path: string): unknown => JSON.parse(readFileSync(new URL(path, ACP_DIR), 'utf8'));

/** Reads the vendored JSON Schema files (the one I/O of this module). */
export function readAcpDocuments(): AcpDocuments {
  return {
    checkout: readJson('json-schema/schema.agentic_checkout.json') as SchemaDocument,
    discount: readJson('json-schema/schema.discount.json') as SchemaDocument,
    extension: readJson('json-schema/schema.extension.json') as SchemaDocument,
    cart: readJson('json-schema/schema.cart.json') as SchemaDocument,
  };
}

import { readFileSync } from 'node:fs';
import { parse } from 'yaml';

/**
 * The OpenAPI 3.1 document of the agent purchase gateway, the one source of the request
 * contract: the runtime validator is compiled from its PurchaseOrderRequest schema.
 */
export const OPENAPI_FILE = new URL('../../../schemas/openapi/procurement.yaml', import.meta.url);

export interface OpenApiDocument {
  readonly openapi: string;
  readonly components: { readonly schemas: Record<string, Record<string, unknown>> };
  readonly [key: string]: unknown;
}

let cached: OpenApiDocument | undefined;

export function procurementOpenApi(): OpenApiDocument {
  cached ??= parse(readFileSync(OPENAPI_FILE, 'utf8')) as OpenApiDocument;
  return cached;
}

export function componentSchema(name: string): Record<string, unknown> {
  const schema = procurementOpenApi().components.schemas[name];
  if (!schema) throw new Error(`schemas/openapi/procurement.yaml has no components.schemas.${name}`);
  return schema;
}

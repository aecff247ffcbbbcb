import type { JsonSchema, UcpDocument } from './files.ts';
import type { UcpOperation, UcpVisibility } from './keywords.ts';

/**
 * The request and response views of the annotated schemas, as the tag's generator
 * (generate_schemas.py, `transform_schema`) and the ucp-schema resolver make them: one source
 * schema, a different set of fields per direction and operation. Pure: a view is a transformed
 * copy, the released documents are untouched.
 *
 * - In every object schema with `properties`, a field whose `ucp_request` (string, or the
 *   operation's entry of the object form) is `omit` is removed from `properties` and `required`;
 *   `required` adds it to `required`; `optional` takes it out; no annotation keeps the released
 *   `required`. An object form without the operation keeps the field as released.
 * - A file marked `ucp_shared_request` has one request shape: the `create` one.
 * - Responses drop the fields marked `ucp_response: omit`.
 *
 * The schemas stay open (`additionalProperties` as released): an omitted field is not
 * validated, not refused, exactly as upstream's non-strict resolution.
 */

/** Which shape of the annotated schemas a validator judges. */
export type UcpView = 'response' | UcpOperation;

const isObject = (v: unknown): v is JsonSchema => typeof v === 'object' && v !== null && !Array.isArray(v);

/** A field's visibility in `view`, or undefined when it carries no annotation for it. */
function visibilityOf(field: unknown, view: UcpView): UcpVisibility | undefined {
  if (!isObject(field)) return undefined;
  if (view === 'response') return field.ucp_response === 'omit' ? 'omit' : undefined;
  const marker = field.ucp_request;
  if (typeof marker === 'string') return marker as UcpVisibility;
  if (isObject(marker)) return marker[view] as UcpVisibility | undefined;
  return undefined;
}

// Keywords whose values are data, never schemas: copied as they are.
const DATA_KEYWORDS = new Set(['const', 'enum', 'default', 'examples', 'ucp_request']);

/** The object schema `schema` with its `properties` and `required` as `view` sees them. */
function selectFields(schema: JsonSchema, view: UcpView): JsonSchema {
  const properties = schema.properties as JsonSchema;
  const kept: JsonSchema = {};
  const required = new Set<string>(Array.isArray(schema.required) ? (schema.required as string[]) : []);
  for (const [name, field] of Object.entries(properties)) {
    const visibility = visibilityOf(field, view);
    if (visibility === 'omit') {
      required.delete(name);
      continue;
    }
    if (visibility === 'required') required.add(name);
    if (visibility === 'optional') required.delete(name);
    kept[name] = transform(field, view);
  }
  const out: JsonSchema = {};
  for (const [keyword, value] of Object.entries(schema)) {
    if (keyword === 'properties') out.properties = kept;
    else if (keyword === 'required') {
      if (required.size > 0) out.required = [...required];
    } else out[keyword] = DATA_KEYWORDS.has(keyword) ? value : transform(value, view);
  }
  if (!('required' in schema) && required.size > 0) out.required = [...required];
  return out;
}

function transform(value: unknown, view: UcpView): unknown {
  if (Array.isArray(value)) return value.map((v) => transform(v, view));
  if (!isObject(value)) return value;
  if (isObject(value.properties)) return selectFields(value, view);
  const out: JsonSchema = {};
  for (const [keyword, v] of Object.entries(value))
    out[keyword] = DATA_KEYWORDS.has(keyword) ? v : transform(v, view);
  return out;
}

/** The document as `view` sees it (a new object; `released` is untouched). */
export function documentView(released: UcpDocument, view: UcpView): UcpDocument {
  const shared = released.schema.ucp_shared_request === true;
  const effective: UcpView = view !== 'response' && shared ? 'create' : view;
  return { path: released.path, schema: transform(released.schema, effective) as UcpDocument['schema'] };
}

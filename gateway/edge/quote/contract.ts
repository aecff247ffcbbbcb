import { readFileSync } from 'node:fs';
import { Ajv2020, type ErrorObject, type ValidateFunction } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import { parse } from 'yaml';
import { type Violation, violationOf } from '../../../lib/json/ajv-violation.ts';
import { CHECKED_SCHEMAS } from '../../../lib/json/checked-schemas.ts';

/**
 * The edge's contract, schemas/openapi/edge.yaml, is the one source of the shapes it accepts:
 * the query parameters of GET /cart/quote and the body of POST /cart/quote/verify are
 * validated at runtime by schemas compiled from that document, never restated here.
 */
export const EDGE_OPENAPI_URL = new URL('../../../schemas/openapi/edge.yaml', import.meta.url);
const DOC_ID = 'edge.yaml';

type Json = Record<string, unknown>;
interface Parameter {
  name: string;
  in: string;
  required?: boolean;
  schema: Json;
}

export const edgeDocument = (): Json => parse(readFileSync(EDGE_OPENAPI_URL, 'utf8')) as Json;

function operation(doc: Json, path: string, method: string): Json {
  const op = ((doc.paths as Json)[path] as Json | undefined)?.[method] as Json | undefined;
  if (!op) throw new Error(`edge.yaml has no ${method.toUpperCase()} ${path}`);
  return op;
}

/** A parameter shared under components.parameters, named by a local `$ref`. */
function localParameter(doc: Json, ref: string): Parameter {
  const name = /^#\/components\/parameters\/([^/]+)$/.exec(ref)?.[1];
  const p = name ? ((doc.components as Json).parameters as Json | undefined)?.[name] : undefined;
  if (!p) throw new Error(`edge.yaml: unresolved parameter ${ref}`);
  return p as unknown as Parameter;
}

/** The query parameters of an operation as one closed JSON Schema object. */
export function querySchema(doc: Json, path: string, method: string): Json {
  const params = ((operation(doc, path, method).parameters as (Parameter | { $ref: string })[]) ?? [])
    .map((p) => ('$ref' in p ? localParameter(doc, p.$ref) : p))
    .filter((p) => p.in === 'query');
  return {
    type: 'object',
    additionalProperties: false,
    required: params.filter((p) => p.required).map((p) => p.name),
    properties: Object.fromEntries(params.map((p) => [p.name, p.schema])),
  };
}

export type { Violation };

/** Ajv errors as the problem body's `errors`: one per violation, each with a JSON pointer. */
export const violations = (errors: readonly ErrorObject[] | null | undefined): Violation[] =>
  (errors ?? []).map(violationOf);

export interface EdgeContract {
  /** GET /cart/quote's query; coerces a lone repeated parameter into an array. */
  quoteQuery: ValidateFunction;
  verifyBody: ValidateFunction;
  /** Replies, for tests: what the document promises is what the edge sends. */
  cartQuote: ValidateFunction;
  verification: ValidateFunction;
  jwks: ValidateFunction;
}

let compiled: EdgeContract | undefined;

function ajvFor(doc: Json, opts: { coerceTypes?: 'array' }): Ajv2020 {
  // OpenAPI 3.1 schemas are JSON Schema 2020-12; `example(s)` and `description` are annotations.
  const ajv = new Ajv2020({ ...CHECKED_SCHEMAS, allErrors: true, strict: false, ...opts });
  addFormats.default(ajv);
  ajv.addSchema(doc, DOC_ID);
  return ajv;
}

export function edgeContract(): EdgeContract {
  if (compiled) return compiled;
  const doc = edgeDocument();
  // Query strings are text: coerce, and turn a lone repeated parameter into an array.
  const query = ajvFor(doc, { coerceTypes: 'array' });
  // JSON bodies and replies are typed: a number sent as a string is refused, not coerced.
  const json = ajvFor(doc, {});
  const ref = (name: string) => json.compile({ $ref: `${DOC_ID}#/components/schemas/${name}` });
  compiled = {
    quoteQuery: query.compile(querySchema(doc, '/cart/quote', 'get')),
    verifyBody: ref('VerifyRequest'),
    cartQuote: ref('CartQuote'),
    verification: ref('Verification'),
    jwks: ref('Jwks'),
  };
  return compiled;
}

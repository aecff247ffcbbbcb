/**
 * An OpenAPI operation as one closed input object, never described twice: its path
 * parameters, query parameters, Idempotency-Key header and JSON body fields, read from the
 * same document the REST contract is validated with. The MCP tools take it as their input
 * schema (and a tool call is turned back into the operation's HTTP request here), and the
 * JSON body of its success replies as their output schema; the agent quote compiles its query
 * validator from it. The documents are read once.
 */

import { readFileSync } from 'node:fs';
import { parse } from 'yaml';

type Json = Record<string, unknown>;

export interface JsonSchemaObject {
  readonly type: 'object';
  readonly properties: Record<string, Json>;
  readonly required?: string[];
  readonly additionalProperties: false;
  readonly [keyword: string]: unknown;
}

/** What a tool's success result holds (MCP: an object schema), checked by the client. */
export interface OutputSchema {
  readonly type: 'object';
  readonly [keyword: string]: unknown;
}

/** Where a tool argument goes in the HTTP request. */
type Placement = { in: 'path'; name: string } | { in: 'query'; name: string } | { in: 'idempotency-key' };

export interface ToolOperation {
  readonly method: 'GET' | 'POST';
  readonly path: string;
  readonly summary: string;
  readonly inputSchema: JsonSchemaObject;
  /** The JSON body of the operation's 2xx replies; undefined when none has one. */
  readonly outputSchema: OutputSchema | undefined;
  /** Arguments that are not path, query or header parameters form the JSON body. */
  readonly hasBody: boolean;
  readonly placements: ReadonlyMap<string, Placement>;
}

export const IDEMPOTENCY_ARGUMENT = 'idempotency_key';
const MAX_REF_DEPTH = 16;
const MAX_SCHEMA_DEPTH = 32;

/** A node and the document it is in (a `$ref` is read relative to that document). */
interface At {
  readonly node: unknown;
  readonly doc: Json;
  readonly file: URL;
}

const documents = new Map<string, Json>();
function documentAt(file: URL): Json {
  let d = documents.get(file.href);
  if (!d) {
    d = parse(readFileSync(file, 'utf8')) as Json;
    documents.set(file.href, d);
  }
  return d;
}

/** What a `$ref` names: `#/pointer` in the same document, or `other.yaml#/pointer` beside it. */
function deref(at: At, depth = 0): At {
  const { node } = at;
  if (typeof node !== 'object' || node === null) return at;
  const ref = (node as Json).$ref;
  if (typeof ref !== 'string') return at;
  if (depth > MAX_REF_DEPTH) throw new Error(`$ref chain too long at ${ref}`);
  const [target = '', pointer = ''] = ref.split('#');
  const file = target ? new URL(target, at.file) : at.file;
  const doc = target ? documentAt(file) : at.doc;
  let n: unknown = doc;
  for (const part of pointer.split('/').slice(1))
    n = (n as Json | undefined)?.[part.replace(/~1/g, '/').replace(/~0/g, '~')];
  if (n === undefined) throw new Error(`unresolved $ref ${ref}`);
  return deref({ node: n, doc, file }, depth + 1);
}

/** A schema with every `$ref` inlined: a tool schema has no document around it. */
function inline(at: At, depth = 0): unknown {
  if (depth > MAX_SCHEMA_DEPTH) throw new Error('schema nested too deeply');
  const r = deref(at);
  const n = r.node;
  if (Array.isArray(n)) return n.map((x) => inline({ ...r, node: x }, depth + 1));
  if (typeof n !== 'object' || n === null) return n;
  return Object.fromEntries(Object.entries(n).map(([k, v]) => [k, inline({ ...r, node: v }, depth + 1)]));
}

/** OpenAPI's own keywords, which no JSON Schema validator of a tool client knows. */
const OPENAPI_ONLY = new Set(['discriminator', 'xml', 'externalDocs', 'example']);
const SCHEMA_MAPS = new Set(['properties', 'patternProperties', '$defs', 'definitions', 'dependentSchemas']);
const SCHEMA_LISTS = new Set(['allOf', 'anyOf', 'oneOf', 'prefixItems']);
const SCHEMA_ONES = new Set([
  'items',
  'additionalProperties',
  'not',
  'contains',
  'propertyNames',
  'if',
  'then',
  'else',
  'unevaluatedItems',
  'unevaluatedProperties',
]);

/**
 * An inlined OpenAPI schema as plain JSON Schema for any validator. A fractional `multipleOf`
 * goes: validators test it in binary floating point (4999.99 / 0.01 is 499998.99999999994),
 * so an exact reply would fail it. The route's reply is exact by construction, and the
 * field's description still says "at most 2 decimals".
 */
function portable(schema: unknown): unknown {
  if (typeof schema !== 'object' || schema === null || Array.isArray(schema)) return schema;
  const out: Json = {};
  for (const [k, v] of Object.entries(schema)) {
    if (OPENAPI_ONLY.has(k) || k.startsWith('x-')) continue;
    if (k === 'multipleOf' && !Number.isInteger(v)) continue;
    if (SCHEMA_MAPS.has(k) && typeof v === 'object' && v !== null)
      out[k] = Object.fromEntries(Object.entries(v).map(([name, s]) => [name, portable(s)]));
    else if (SCHEMA_LISTS.has(k) && Array.isArray(v)) out[k] = v.map(portable);
    else if (SCHEMA_ONES.has(k)) out[k] = portable(v);
    else out[k] = v;
  }
  return out;
}

/**
 * The JSON body of the operation's 2xx replies: one schema when they share it (201 and 202 of
 * an order), else any of them. MCP wants an object; anything else is a mistake in the mapping.
 */
function outputSchemaOf(op: Json, at: (node: unknown) => At, name: string): OutputSchema | undefined {
  const seen = new Map<string, Json>();
  for (const [code, response] of Object.entries((op.responses as Json | undefined) ?? {})) {
    if (!/^2\d\d$/.test(code)) continue;
    const r = deref(at(response));
    const media = ((r.node as Json).content as Json | undefined)?.['application/json'] as Json | undefined;
    if (!media?.schema) continue;
    const schema = portable(inline({ ...r, node: media.schema })) as Json;
    seen.set(JSON.stringify(schema), schema);
  }
  const schemas = [...seen.values()];
  if (schemas.length === 0) return undefined;
  const schema = schemas.length === 1 ? (schemas[0] as Json) : { type: 'object', anyOf: schemas };
  if (schema.type !== 'object') throw new Error(`${name}: a tool's output must be a JSON object`);
  return schema as OutputSchema;
}

/** `orderId` → `order_id`: tool arguments read like the JSON body's fields. */
const snake = (name: string) => name.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);

/**
 * The operation `method path` of `doc` as a tool, or undefined when the document does not
 * have it (a tool exists only where its REST operation does).
 */
export function toolOperation(file: URL, path: string, method: 'GET' | 'POST'): ToolOperation | undefined {
  const doc = documentAt(file);
  const at = (node: unknown): At => ({ node, doc, file });
  const op = ((doc.paths as Json | undefined)?.[path] as Json | undefined)?.[method.toLowerCase()] as
    | Json
    | undefined;
  if (!op) return undefined;
  const properties: Record<string, Json> = {};
  const required: string[] = [];
  const placements = new Map<string, Placement>();
  for (const p of (op.parameters as unknown[] | undefined) ?? []) {
    const ref = deref(at(p));
    const param = ref.node as {
      name: string;
      in: string;
      required?: boolean;
      schema: Json;
      description?: string;
    };
    let arg: string;
    if (param.in === 'path') {
      arg = snake(param.name);
      placements.set(arg, { in: 'path', name: param.name });
    } else if (param.in === 'query') {
      arg = param.name;
      placements.set(arg, { in: 'query', name: param.name });
    } else if (param.in === 'header' && param.name.toLowerCase() === 'idempotency-key') {
      arg = IDEMPOTENCY_ARGUMENT;
      placements.set(arg, { in: 'idempotency-key' });
    } else continue; // X-Spiffe-Id, X-Trace-Id: carried by the MCP request itself.
    const schema = inline({ ...ref, node: param.schema }) as Json;
    properties[arg] = param.description ? { description: param.description, ...schema } : schema;
    if (param.required) required.push(arg);
  }
  let hasBody = false;
  const body = deref(at(op.requestBody));
  const media = ((body.node as Json | undefined)?.content as Json | undefined)?.['application/json'] as
    | Json
    | undefined;
  if (media?.schema) {
    hasBody = true;
    const s = inline({ ...body, node: media.schema }) as Json;
    for (const [name, schema] of Object.entries((s.properties as Json | undefined) ?? {})) {
      if (placements.has(name))
        throw new Error(`${method} ${path}: body field ${name} clashes with a parameter`);
      properties[name] = schema as Json;
    }
    required.push(...((s.required as string[] | undefined) ?? []));
  }
  const summary = String(op.summary ?? `${method} ${path}`);
  return {
    method,
    path,
    summary: op.description ? `${summary}. ${String(op.description).trim()}` : summary,
    inputSchema: {
      type: 'object',
      properties,
      ...(required.length > 0 ? { required } : {}),
      additionalProperties: false,
    },
    outputSchema: outputSchemaOf(op, at, `${method} ${path}`),
    hasBody,
    placements,
  };
}

export interface HttpCall {
  readonly method: 'GET' | 'POST';
  readonly url: string;
  readonly idempotencyKey?: string;
  /** The body's members: arguments that are not parameters (the contract judges them). */
  readonly body?: Record<string, unknown>;
}

/** A path segment that reaches the route as written: `.` and `..` would be resolved away. */
function segment(value: unknown): string {
  const s = encodeURIComponent(typeof value === 'string' ? value : (JSON.stringify(value) ?? ''));
  // The route answers an id it cannot know with 404; a dot segment would reach another route.
  return s === '' || /^(\.|%2e)+$/i.test(s) ? '-' : s;
}

const queryValue = (v: unknown) => (typeof v === 'string' ? v : JSON.stringify(v));

/**
 * Idempotency-Key as a structured-field string (`"…"`, `\` and `"` escaped): the REST parser
 * reads it back to the very same key, so a key means the same over MCP and REST; a value that
 * no header could carry fails the REST parser (400) like a bad header would.
 */
function idempotencyHeader(v: unknown): string {
  if (typeof v !== 'string') return '';
  return `"${v.replace(/[\\"]/g, (c) => `\\${c}`)}"`;
}

/** The HTTP request a tool call stands for. Arguments are not judged here: the route does that. */
export function httpCallOf(op: ToolOperation, args: Record<string, unknown>): HttpCall {
  let url = op.path;
  const query = new URLSearchParams();
  const body: Record<string, unknown> = {};
  let idempotencyKey: string | undefined;
  for (const [name, where] of op.placements) {
    if (where.in === 'path') url = url.replace(`{${where.name}}`, segment(args[name]));
  }
  for (const [name, value] of Object.entries(args)) {
    const where = op.placements.get(name);
    if (where?.in === 'path') continue;
    if (where?.in === 'idempotency-key') idempotencyKey = idempotencyHeader(value);
    else if (where?.in === 'query' || !op.hasBody) {
      // An argument the operation does not name goes where the route will see (and judge) it.
      for (const v of Array.isArray(value) ? value : [value])
        query.append(where?.name ?? name, queryValue(v));
    } else body[name] = value;
  }
  const qs = query.toString();
  return {
    method: op.method,
    url: qs ? `${url}?${qs}` : url,
    ...(idempotencyKey !== undefined ? { idempotencyKey } : {}),
    ...(op.hasBody ? { body } : {}),
  };
}

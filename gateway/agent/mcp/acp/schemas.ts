import { type JsonSchema, readAcpDocuments, type SchemaDocument } from '../../acp/schema/files.ts';
import type { AcpDef } from '../../acp/schema/index.ts';
import { type AcpSide, loadedCopy } from '../../acp/schema/quirks.ts';

/**
 * The ACP tools' schemas, served self-contained as the MCP binding asks ("Implementers MUST
 * resolve and bundle all $ref targets before serving tool schemas to MCP clients"): a tool's
 * `payload` and its result are the bundle's own definitions, copied with every definition they
 * reach into the tool schema's `$defs`, so the bundle's `#/$defs/…` references resolve inside it.
 * They come from the copy the ACP routes validate with (schema/quirks.ts): requests with the
 * tolerated `Item.quantity`, both sides with `extensions: []` accepted.
 */

/**
 * The binding's `meta` (openrpc.agentic_checkout.json, components.schemas.meta, release
 * 2026-04-17 at c2afc86): ACP's protocol headers as fields. That file is not vendored under
 * schemas/acp/, so this one shape is written here; `additionalProperties: true` as released.
 */
export const META_SCHEMA: JsonSchema = {
  type: 'object',
  description:
    'Protocol metadata mapped from ACP HTTP headers. Authentication is handled at the MCP server level and is not included here.',
  required: ['api_version'],
  additionalProperties: true,
  properties: {
    api_version: {
      type: 'string',
      description: "ACP API version date (e.g. '2026-04-17'). Maps to the API-Version header.",
    },
    idempotency_key: {
      type: 'string',
      description:
        'Unique key for retry safety. Maps to the Idempotency-Key header. This merchant requires it on every tool but get_checkout_session.',
    },
    request_id: {
      type: 'string',
      description: 'Correlation ID for request tracing. Maps to the Request-Id header.',
    },
    user_agent: {
      type: 'string',
      description: 'Agent identification string. Maps to the User-Agent header.',
    },
    accept_language: {
      type: 'string',
      description: "Locale preference (e.g. 'en-US'). Maps to the Accept-Language header.",
    },
    signature: {
      type: 'string',
      description: 'Request signature for integrity verification. Maps to the Signature header.',
    },
    timestamp: {
      type: 'string',
      format: 'date-time',
      description: 'Request signing timestamp (RFC 3339). Maps to the Timestamp header.',
    },
  },
};

/** A tool schema: MCP wants an object at the root. */
export type ObjectSchema = JsonSchema & { type: 'object' };

const SESSION_ID_SCHEMA: JsonSchema = {
  type: 'string',
  description: 'The checkout session ID. Maps to the checkout_session_id path parameter.',
};

/** OpenAPI's `example`, which no JSON Schema validator knows (the bundle carries 82 of them). */
function withoutExamples(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(withoutExamples);
  if (typeof value !== 'object' || value === null) return value;
  return Object.fromEntries(
    Object.entries(value)
      .filter(([k]) => k !== 'example')
      .map(([k, v]) => [k, withoutExamples(v)]),
  );
}

const LOCAL_REF = /^#\/\$defs\/([^/]+)$/;

/** The definitions `roots` reach through `$ref`, each once (the bundle refers only to its own `$defs`). */
export function reachableDefs(doc: SchemaDocument, roots: readonly string[]): Record<string, JsonSchema> {
  const out: Record<string, JsonSchema> = {};
  const visit = (value: unknown): void => {
    if (Array.isArray(value)) {
      value.forEach(visit);
      return;
    }
    if (typeof value !== 'object' || value === null) return;
    for (const [k, v] of Object.entries(value)) {
      if (k === '$ref' && typeof v === 'string') {
        const name = LOCAL_REF.exec(v)?.[1];
        if (name === undefined) throw new Error(`ACP tool schema: $ref ${v} is not a local definition`);
        add(name);
      } else visit(v);
    }
  };
  const add = (name: string): void => {
    if (name in out) return;
    const def = doc.$defs[name];
    if (!def) throw new Error(`ACP tool schema: no definition ${name} in the bundle`);
    out[name] = withoutExamples(def) as JsonSchema;
    visit(def);
  };
  roots.forEach(add);
  return out;
}

const copies = new Map<AcpSide, SchemaDocument>();
const loaded = (side: AcpSide): SchemaDocument => {
  let doc = copies.get(side);
  if (!doc) {
    doc = loadedCopy(readAcpDocuments(), side).checkout;
    copies.set(side, doc);
  }
  return doc;
};

/** How a tool takes the session id and the request body (the binding's argument table). */
export interface AcpArgumentShape {
  readonly id: boolean;
  /** The bundle definition of `payload`, if the tool has one. */
  readonly payload?: AcpDef;
  readonly payloadRequired?: boolean;
}

/** A tool's inputSchema: `{meta, id?, payload?}`, closed, its payload's definitions bundled. */
export function acpInputSchema(shape: AcpArgumentShape): ObjectSchema {
  const properties: JsonSchema = { meta: META_SCHEMA };
  const required = ['meta'];
  if (shape.id) {
    properties.id = SESSION_ID_SCHEMA;
    required.push('id');
  }
  if (shape.payload) {
    properties.payload = {
      $ref: `#/$defs/${shape.payload}`,
      description: 'The ACP request body, exactly as over REST.',
    };
    if (shape.payloadRequired) required.push('payload');
  }
  return {
    type: 'object',
    properties,
    required,
    additionalProperties: false,
    ...(shape.payload ? { $defs: reachableDefs(loaded('request'), [shape.payload]) } : {}),
  };
}

/** A tool's outputSchema: its result definitions (anyOf when several), bundled from the response side. */
export function acpOutputSchema(results: readonly AcpDef[]): ObjectSchema {
  const refs = results.map((d) => ({ $ref: `#/$defs/${d}` }));
  return {
    type: 'object',
    ...(refs.length === 1 ? (refs[0] as JsonSchema) : { anyOf: refs }),
    $defs: reachableDefs(loaded('response'), results),
  };
}

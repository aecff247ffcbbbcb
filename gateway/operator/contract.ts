import { readFileSync } from 'node:fs';
import { Ajv2020, type ErrorObject, type ValidateFunction } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import { parse } from 'yaml';
import { distinctViolations, type Violation } from '../../lib/json/ajv-violation.ts';
import { CHECKED_SCHEMAS } from '../../lib/json/checked-schemas.ts';

/**
 * schemas/openapi/operator.yaml is the one source of the operator API's request shapes: the
 * query string and body validators are compiled from it, never restated in code. Compiled on
 * the first operator call, not at start-up: most processes never serve one (issue 11's budget).
 */
export const OPERATOR_OPENAPI_URL = new URL('../../schemas/openapi/operator.yaml', import.meta.url);
const DOC_ID = 'operator.yaml';

interface Parameter {
  name: string;
  in: string;
  required?: boolean;
  schema: unknown;
  $ref?: string;
}
type Operation = { parameters?: Parameter[] };

export interface OperatorContract {
  listAgentsQuery: ValidateFunction;
  searchAuditQuery: ValidateFunction;
  verifyAuditQuery: ValidateFunction;
  auditConsistencyQuery: ValidateFunction;
  unblockRequest: ValidateFunction;
  /** Replies, for tests: what the document promises is what the gateway sends. */
  reply: (
    schema:
      | 'AgentPage'
      | 'UnblockResult'
      | 'AuditPage'
      | 'AuditVerification'
      | 'AuditConsistency'
      | 'Problem',
  ) => ValidateFunction;
}

let compiled: OperatorContract | undefined;

export function operatorContract(): OperatorContract {
  if (compiled) return compiled;
  const doc = parse(readFileSync(OPERATOR_OPENAPI_URL, 'utf8')) as {
    paths: Record<string, { get?: Operation; post?: Operation }>;
    components: { parameters: Record<string, Parameter> };
  };
  const ajv = new Ajv2020({ ...CHECKED_SCHEMAS, allErrors: true, strict: false });
  addFormats.default(ajv);
  ajv.addSchema(doc, DOC_ID);
  // Query values arrive as strings: a second instance coerces them (limit=20 → 20); a repeated
  // parameter arrives as an array and is refused, never coerced to one of its values.
  const queryAjv = new Ajv2020({ ...CHECKED_SCHEMAS, allErrors: true, strict: false, coerceTypes: true });
  addFormats.default(queryAjv);
  queryAjv.addSchema(doc, DOC_ID);
  const ref = (name: string) => ajv.compile({ $ref: `${DOC_ID}#/components/schemas/${name}` });
  /** The operation's query parameters as one closed object schema: an unknown parameter is refused. */
  const query = (path: string) => {
    const params = (doc.paths[path]?.get?.parameters ?? []).map((p) =>
      p.$ref ? (doc.components.parameters[p.$ref.split('/').pop() as string] as Parameter) : p,
    );
    const properties: Record<string, unknown> = {};
    const required: string[] = [];
    for (const p of params)
      if (p.in === 'query') {
        properties[p.name] = p.schema;
        if (p.required) required.push(p.name);
      }
    return queryAjv.compile({
      type: 'object',
      additionalProperties: false,
      required,
      properties: JSON.parse(
        JSON.stringify(properties).replaceAll('"#/components/', `"${DOC_ID}#/components/`),
      ),
    });
  };
  const replies = new Map<string, ValidateFunction>();
  compiled = {
    listAgentsQuery: query('/api/v2/operator/agents'),
    searchAuditQuery: query('/api/v2/operator/audit'),
    verifyAuditQuery: query('/api/v2/operator/audit/verify'),
    auditConsistencyQuery: query('/api/v2/operator/audit/consistency'),
    unblockRequest: ref('UnblockRequest'),
    reply(name) {
      let v = replies.get(name);
      if (!v) {
        v = ref(name);
        replies.set(name, v);
      }
      return v;
    },
  };
  return compiled;
}

export type { Violation };

/** Ajv errors as violations with JSON pointers (for a query string, the pointer names the parameter). */
export const violations = (errors: readonly ErrorObject[] | null | undefined): Violation[] =>
  distinctViolations(errors).slice(0, 100);

/**
 * Our AI-safety rules for agent-facing operations, as Spectral rule functions. An operation is
 * agent-facing when it carries `x-agent-facing: true` (AGENT_MARKER); the bounded agent contract
 * (schemas/openapi/agent.yaml) holds exactly those operations. Each function receives a path
 * item (`$.paths[*]`, resolved) and reports on its agent-facing operations.
 */
import { createRulesetFunction, type IFunctionResult } from '@stoplight/spectral-core';
import { AGENT_MARKER, METHODS } from './agent-marker.ts';

export { AGENT_MARKER, METHODS };
export const UNSAFE_METHODS: ReadonlySet<string> = new Set(['post', 'put', 'patch', 'delete']);
export const AGENT_ERROR_STATUSES = ['401', '403', '422', '429'] as const;

type Json = Record<string, unknown>;
type Path = (string | number)[];

const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);

export interface AgentOperation {
  readonly method: string;
  readonly op: Json;
  /** Operation-level plus path-level parameters (operation wins on name + in). */
  readonly parameters: { readonly param: Json; readonly path: Path }[];
  readonly path: Path;
  readonly label: string;
}

/** The agent-facing operations of one path item. */
export function agentOperations(pathItem: unknown, itemPath: Path): AgentOperation[] {
  if (!isObject(pathItem)) return [];
  const out: AgentOperation[] = [];
  const route = String(itemPath[itemPath.length - 1] ?? '');
  for (const method of METHODS) {
    const op = pathItem[method];
    if (!isObject(op) || op[AGENT_MARKER] !== true) continue;
    const path = [...itemPath, method];
    const own = (Array.isArray(op.parameters) ? op.parameters : []).map((param, i) => ({
      param: param as Json,
      path: [...path, 'parameters', i],
    }));
    const key = (p: Json) => `${String(p.in)}:${String(p.name).toLowerCase()}`;
    const seen = new Set(own.filter((p) => isObject(p.param)).map((p) => key(p.param)));
    const inherited = (Array.isArray(pathItem.parameters) ? pathItem.parameters : [])
      .map((param, i) => ({ param: param as Json, path: [...itemPath, 'parameters', i] }))
      .filter((p) => isObject(p.param) && !seen.has(key(p.param)));
    out.push({
      method,
      op,
      parameters: [...own, ...inherited].filter((p) => isObject(p.param)),
      path,
      label: `${method.toUpperCase()} ${route}`,
    });
  }
  return out;
}

/** Every schema an agent sends: request bodies of any media type, and parameters. */
function requestSchemas(o: AgentOperation): { schema: unknown; path: Path; where: string }[] {
  const out: { schema: unknown; path: Path; where: string }[] = [];
  const body = o.op.requestBody;
  if (isObject(body) && isObject(body.content)) {
    for (const [media, m] of Object.entries(body.content)) {
      if (isObject(m) && 'schema' in m)
        out.push({
          schema: m.schema,
          path: [...o.path, 'requestBody', 'content', media, 'schema'],
          where: 'request body',
        });
    }
  }
  for (const { param, path } of o.parameters) {
    if ('schema' in param)
      out.push({
        schema: param.schema,
        path: [...path, 'schema'],
        where: `${String(param.in)} parameter ${String(param.name)}`,
      });
  }
  return out;
}

const typesOf = (s: Json): string[] =>
  Array.isArray(s.type) ? s.type.map(String) : typeof s.type === 'string' ? [s.type] : [];

const SUBSCHEMA_LISTS = ['allOf', 'anyOf', 'oneOf', 'prefixItems'] as const;
const SUBSCHEMA_SINGLE = ['items', 'additionalProperties', 'unevaluatedProperties', 'then', 'else'] as const;

interface Visit {
  readonly schema: Json;
  readonly path: Path;
  /** JSON pointer inside the request schema, for messages. */
  readonly pointer: string;
  /** A branch of allOf/anyOf/oneOf whose parent is closed with unevaluatedProperties: false. */
  readonly closedByParent: boolean;
}

/** Walks a (resolved) schema and its subschemas; cycles are visited once. */
function walk(root: unknown, rootPath: Path, each: (v: Visit) => void): void {
  const seen = new Set<unknown>();
  const go = (schema: unknown, path: Path, pointer: string, closedByParent: boolean) => {
    if (!isObject(schema) || seen.has(schema)) return;
    seen.add(schema);
    each({ schema, path, pointer: pointer || '/', closedByParent });
    const closesBranches = schema.unevaluatedProperties === false;
    if (isObject(schema.properties))
      for (const [k, v] of Object.entries(schema.properties))
        go(v, [...path, 'properties', k], `${pointer}/properties/${k}`, false);
    if (isObject(schema.patternProperties))
      for (const [k, v] of Object.entries(schema.patternProperties))
        go(v, [...path, 'patternProperties', k], `${pointer}/patternProperties/${k}`, false);
    for (const key of SUBSCHEMA_LISTS) {
      const list = schema[key];
      if (!Array.isArray(list)) continue;
      list.forEach((v, i) => {
        go(v, [...path, key, i], `${pointer}/${key}/${i}`, key !== 'prefixItems' && closesBranches);
      });
    }
    for (const key of SUBSCHEMA_SINGLE) go(schema[key], [...path, key], `${pointer}/${key}`, false);
  };
  go(root, rootPath, '', false);
}

const isComposed = (s: Json) => SUBSCHEMA_LISTS.some((k) => k !== 'prefixItems' && Array.isArray(s[k]));
const isEnumerated = (s: Json) => Array.isArray(s.enum) || 'const' in s;

function eachRequestSchema(
  pathItem: unknown,
  itemPath: Path,
  check: (v: Visit, o: AgentOperation, where: string) => string | undefined,
): IFunctionResult[] {
  const results: IFunctionResult[] = [];
  for (const o of agentOperations(pathItem, itemPath)) {
    for (const { schema, path, where } of requestSchemas(o)) {
      walk(schema, path, (v) => {
        const problem = check(v, o, where);
        if (problem) results.push({ message: `${o.label}: ${where} ${v.pointer} ${problem}`, path: v.path });
      });
    }
  }
  return results;
}

const pathItemFunction = (fn: (pathItem: unknown, itemPath: Path, root: unknown) => IFunctionResult[]) =>
  createRulesetFunction<unknown, null>({ input: null, options: null }, (target, _opts, ctx) =>
    fn(target, ctx.path as Path, ctx.document.data),
  );

/** Every object an agent sends is closed: unknown fields are refused (spec, Security posture). */
export const agentRequestClosed = pathItemFunction((item, path) =>
  eachRequestSchema(item, path, ({ schema, closedByParent }) => {
    const types = typesOf(schema);
    const objectLike = types.includes('object') || (types.length === 0 && isObject(schema.properties));
    if (objectLike) {
      const closed =
        schema.additionalProperties === false || schema.unevaluatedProperties === false || closedByParent;
      return closed
        ? undefined
        : 'is an open object: set additionalProperties: false (or unevaluatedProperties: false)';
    }
    if (types.length === 0 && !isComposed(schema) && !isEnumerated(schema) && !('not' in schema))
      return 'has no type: it accepts any value';
    return undefined;
  }),
);

/** An anchored pattern bounds a string; `abc` alone matches any string that contains it. */
const anchored = (p: unknown) => typeof p === 'string' && p.startsWith('^') && p.endsWith('$');

/** Every string an agent sends is bounded by maxLength, an anchored pattern, enum, const or format. */
export const agentStringBounded = pathItemFunction((item, path) =>
  eachRequestSchema(item, path, ({ schema }) => {
    if (!typesOf(schema).includes('string')) return undefined;
    const bounded =
      typeof schema.maxLength === 'number' ||
      anchored(schema.pattern) ||
      isEnumerated(schema) ||
      typeof schema.format === 'string';
    return bounded
      ? undefined
      : 'is an unbounded string: give it maxLength, an anchored pattern (^…$), enum, const or format';
  }),
);

/** Every number an agent sends has a lower and an upper bound. */
export const agentNumberBounded = pathItemFunction((item, path) =>
  eachRequestSchema(item, path, ({ schema }) => {
    const types = typesOf(schema);
    if (!types.includes('number') && !types.includes('integer')) return undefined;
    if (isEnumerated(schema)) return undefined;
    const low = typeof schema.minimum === 'number' || typeof schema.exclusiveMinimum === 'number';
    const high = typeof schema.maximum === 'number' || typeof schema.exclusiveMaximum === 'number';
    if (low && high) return undefined;
    const missing = [low ? '' : 'minimum', high ? '' : 'maximum'].filter(Boolean).join(' and ');
    return `is an unbounded number: give it a ${missing} (or exclusive${low ? 'Maximum' : 'Minimum'})`;
  }),
);

/** A non-empty security requirement, with no empty alternative (which would make it optional). */
export const agentSecurity = pathItemFunction((item, path, root) => {
  const rootSecurity = isObject(root) ? root.security : undefined;
  return agentOperations(item, path).flatMap((o) => {
    const security = 'security' in o.op ? o.op.security : rootSecurity;
    const ok =
      Array.isArray(security) &&
      security.length > 0 &&
      security.every((req) => isObject(req) && Object.keys(req).length > 0);
    return ok
      ? []
      : [
          {
            message: `${o.label}: agent-facing operation has no security requirement (or an empty, optional one)`,
            path: 'security' in o.op ? [...o.path, 'security'] : o.path,
          },
        ];
  });
});

/** 401, 403, 422 and 429 declared, each by its own code (a 4XX range does not say enough). */
export const agentErrorResponses = pathItemFunction((item, path) =>
  agentOperations(item, path).flatMap((o) => {
    const responses = isObject(o.op.responses) ? o.op.responses : {};
    return AGENT_ERROR_STATUSES.filter((s) => !(s in responses)).map((s) => ({
      message: `${o.label}: agent-facing operation does not declare a ${s} response`,
      path: [...o.path, 'responses'],
    }));
  }),
);

/** The 429 tells the agent when to come back. */
export const agentRetryAfter = pathItemFunction((item, path) =>
  agentOperations(item, path).flatMap((o) => {
    const responses = isObject(o.op.responses) ? o.op.responses : {};
    const r429 = responses['429'];
    if (!isObject(r429)) return []; // agent-error-responses reports the missing 429
    const headers = isObject(r429.headers) ? Object.keys(r429.headers) : [];
    return headers.some((h) => h.toLowerCase() === 'retry-after')
      ? []
      : [
          {
            message: `${o.label}: the 429 response does not declare a Retry-After header`,
            path: [...o.path, 'responses', '429'],
          },
        ];
  }),
);

/** Agent mutations (POST, PUT, PATCH, DELETE) accept an Idempotency-Key header. */
export const agentIdempotencyKey = pathItemFunction((item, path) =>
  agentOperations(item, path)
    .filter((o) => UNSAFE_METHODS.has(o.method))
    .flatMap((o) =>
      o.parameters.some(
        ({ param }) => param.in === 'header' && String(param.name).toLowerCase() === 'idempotency-key',
      )
        ? []
        : [
            {
              message: `${o.label}: agent mutation does not declare an Idempotency-Key header parameter`,
              path: o.path,
            },
          ],
    ),
);

/** The marker is a boolean: `x-agent-facing: "yes"` must not silently skip the agent rules. */
export const agentMarkerBoolean = createRulesetFunction<unknown, null>(
  { input: null, options: null },
  (target, _opts, ctx) => {
    if (!isObject(target)) return [];
    return METHODS.flatMap((m) => {
      const op = target[m];
      if (!isObject(op) || !(AGENT_MARKER in op) || typeof op[AGENT_MARKER] === 'boolean') return [];
      return [
        {
          message: `${m.toUpperCase()} ${String(ctx.path[ctx.path.length - 1])}: ${AGENT_MARKER} must be true or false`,
          path: [...(ctx.path as Path), m, AGENT_MARKER],
        },
      ];
    });
  },
);

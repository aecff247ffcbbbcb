import {
  type DocumentNode,
  type FieldDefinitionNode,
  GraphQLError,
  type GraphQLSchema,
  isObjectType,
  Kind,
  parse,
  valueFromASTUntyped,
} from 'graphql';
import { applyMiddleware } from 'graphql-middleware';
import type { IRule, IRules } from 'graphql-shield';
import { allow, deny, rule, shield } from 'graphql-shield';

type ShieldRule = IRule;

import { hasAnyRole } from './caller.ts';
import type { RequestContext } from './context.ts';

/** The directive that declares a field's required roles in the SDL (schemas/*.graphql). */
export const ROLE_DIRECTIVE = 'requiresRole';

/** `Type.field` → roles, any one of which grants access. */
export type RoleRequirements = ReadonlyMap<string, readonly string[]>;

/** Reads every @requiresRole from an SDL (a subgraph's or the composed supergraph's). */
export function roleRequirements(sdl: string | DocumentNode): RoleRequirements {
  const doc = typeof sdl === 'string' ? parse(sdl) : sdl;
  const out = new Map<string, string[]>();
  for (const def of doc.definitions) {
    if (def.kind !== Kind.OBJECT_TYPE_DEFINITION && def.kind !== Kind.OBJECT_TYPE_EXTENSION) continue;
    for (const field of def.fields ?? []) {
      const roles = directiveRoles(field);
      if (roles) out.set(`${def.name.value}.${field.name.value}`, roles);
    }
  }
  return out;
}

function directiveRoles(field: FieldDefinitionNode): string[] | undefined {
  const d = field.directives?.find((x) => x.name.value === ROLE_DIRECTIVE);
  if (!d) return undefined;
  const arg = d.arguments?.find((a) => a.name.value === 'anyOf');
  const value = arg ? valueFromASTUntyped(arg.value) : [];
  return Array.isArray(value) ? value.map(String) : [String(value)];
}

export const unauthenticated = (detail = 'a bearer token with the required role is needed') =>
  new GraphQLError(`Unauthenticated: ${detail}`, {
    extensions: { code: 'UNAUTHENTICATED', http: { status: 401 } },
  });
export const forbidden = (what: string) =>
  new GraphQLError(`Forbidden: ${what}`, { extensions: { code: 'FORBIDDEN', http: { status: 403 } } });

/** A shield rule granting any of `roles`; anonymous callers get UNAUTHENTICATED, others FORBIDDEN. */
function requireAnyRole(coordinate: string, roles: readonly string[]): ShieldRule {
  return rule(`role:${coordinate}`, { cache: 'no_cache' })((_p, _a, ctx: RequestContext) => {
    if (!ctx.caller.authenticated) return unauthenticated();
    return hasAnyRole(ctx.caller, roles)
      ? true
      : forbidden(`${coordinate} requires one of: ${roles.join(', ')}`);
  });
}

const denyUnrestrictedMutation = (coordinate: string): ShieldRule =>
  rule(`deny:${coordinate}`, { cache: 'no_cache' })(() =>
    forbidden(`${coordinate} declares no @${ROLE_DIRECTIVE}; mutations are denied by default`),
  );

/**
 * The graphql-shield rule tree of one schema: every Mutation field denied unless it declares
 * roles, every declared field guarded, everything else (incl. `_service`, `_entities`) allowed.
 * One tree per schema, naming only types it has: shield throws on types a schema lacks.
 */
export function shieldRules(schema: GraphQLSchema, requirements: RoleRequirements): IRules {
  const tree: Record<string, Record<string, ShieldRule>> = {};
  const mutationType = schema.getMutationType()?.name;
  for (const type of Object.values(schema.getTypeMap())) {
    if (!isObjectType(type) || type.name.startsWith('__')) continue;
    for (const field of Object.keys(type.getFields())) {
      const coordinate = `${type.name}.${field}`;
      const roles = requirements.get(coordinate);
      const r = roles
        ? requireAnyRole(coordinate, roles)
        : type.name === mutationType
          ? denyUnrestrictedMutation(coordinate)
          : undefined;
      if (!r) continue;
      tree[type.name] = { ...tree[type.name], [field]: r };
    }
  }
  return tree;
}

const shieldOptions = {
  fallbackRule: allow,
  allowExternalErrors: true,
  // shield's default error surfaces as INTERNAL_SERVER_ERROR; ours says FORBIDDEN.
  fallbackError: () => forbidden('not allowed'),
} as const;

/** Defence in depth: a subgraph schema with the same rules applied to its resolvers. */
export function applyShield(schema: GraphQLSchema, requirements: RoleRequirements): GraphQLSchema {
  const tree = shieldRules(schema, requirements);
  if (Object.keys(tree).length === 0) return schema;
  // shield() wraps every field of every type in an async middleware that applies the fallback
  // rule (`allow`): each field of a 10-line quote then resolves through a promise. Only the
  // fields of the tree carry a rule, so only they are wrapped; shield still evaluates them.
  const generated = shield(tree, shieldOptions).generate(schema) as Record<string, Record<string, unknown>>;
  const ruled = Object.fromEntries(
    Object.entries(tree).map(([type, fields]) => [
      type,
      Object.fromEntries(Object.keys(fields as object).map((f) => [f, generated[type]?.[f]])),
    ]),
  );
  return applyMiddleware(schema, ruled as Parameters<typeof applyMiddleware>[1]);
}

/**
 * Evaluates the rule of one field with graphql-shield's own rule objects, outside resolver
 * execution: the gateway runs query plans, not resolvers, so it asks before planning.
 */
export async function checkField(
  tree: IRules,
  typeName: string,
  fieldName: string,
  ctx: RequestContext,
): Promise<GraphQLError | undefined> {
  const typeRules = (tree as Record<string, Record<string, ShieldRule> | undefined>)[typeName];
  const r = typeRules?.[fieldName] ?? (typeRules?.['*'] as ShieldRule | undefined);
  if (!r || (r as unknown) === allow) return undefined;
  if ((r as unknown) === deny) return forbidden(`${typeName}.${fieldName}`);
  const shieldCtx = Object.assign(Object.create(ctx), { _shield: { cache: {} } });
  // Our rules read only the context; shield's resolve also wants info and options.
  type ResolveArgs = Parameters<IRule['resolve']>;
  const info = {} as ResolveArgs[3];
  const options = { ...shieldOptions, debug: false, hashFunction: () => '' } as unknown as ResolveArgs[4];
  const result = await r.resolve({}, {}, shieldCtx, info, options);
  if (result === true) return undefined;
  if (result instanceof GraphQLError) return result;
  return forbidden(`${typeName}.${fieldName}`);
}

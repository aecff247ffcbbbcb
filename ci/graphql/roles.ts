/**
 * Role restriction of mutations, checked on SDL (spec, Versioning 4: a change that adds a
 * mutation without role restriction must be blocked). The directive is the one the gateway
 * and the subgraphs enforce (lib/auth/permissions.ts, ROLE_DIRECTIVE).
 */
import type { Change, Rule } from '@graphql-inspector/core';
import { ChangeType, CriticalityLevel } from '@graphql-inspector/core';
import {
  buildASTSchema,
  type DocumentNode,
  type FieldDefinitionNode,
  type GraphQLField,
  type GraphQLSchema,
  Kind,
  parse,
  valueFromASTUntyped,
} from 'graphql';
import { ROLE_DIRECTIVE } from '../../lib/auth/permissions.ts';

export interface RoleFinding {
  /** `Mutation.fieldName` */
  readonly coordinate: string;
  readonly message: string;
}

/**
 * A subgraph SDL uses federation directives it does not define (@key, @link…): build it without
 * SDL validation; the composition step (ci/compose.ts) is what validates it.
 */
export function buildSdl(sdl: string | DocumentNode): GraphQLSchema {
  return buildASTSchema(typeof sdl === 'string' ? parse(sdl) : sdl, { assumeValidSDL: true });
}

/** The roles a field's @requiresRole grants; undefined without the directive, [] when empty. */
export function declaredRoles(field: GraphQLField<unknown, unknown>): string[] | undefined {
  return field.astNode ? rolesOfNode(field.astNode) : undefined;
}

const restricted = (field: GraphQLField<unknown, unknown>) => (declaredRoles(field)?.length ?? 0) > 0;

/** The mutation root's name: `schema { mutation: X }` (or its extension), else `Mutation`. */
function mutationRootName(doc: DocumentNode): string {
  for (const def of doc.definitions)
    if (def.kind === Kind.SCHEMA_DEFINITION || def.kind === Kind.SCHEMA_EXTENSION)
      for (const op of def.operationTypes ?? []) if (op.operation === 'mutation') return op.type.name.value;
  return 'Mutation';
}

function rolesOfNode(field: FieldDefinitionNode): string[] | undefined {
  const d = field.directives?.find((x) => x.name.value === ROLE_DIRECTIVE);
  if (!d) return undefined;
  const arg = d.arguments?.find((a) => a.name.value === 'anyOf');
  const value = arg ? valueFromASTUntyped(arg.value) : [];
  return (Array.isArray(value) ? value : [value]).filter((r): r is string => typeof r === 'string' && !!r);
}

/**
 * Base-independent lint on the SDL itself (definitions and `extend type` alike, so it needs no
 * buildable schema): every Mutation field declares at least one role.
 */
export function lintSdlRoles(sdl: string): RoleFinding[] {
  let doc: DocumentNode;
  try {
    doc = parse(sdl);
  } catch (err) {
    return [{ coordinate: '(schema)', message: `SDL does not parse: ${(err as Error).message}` }];
  }
  const root = mutationRootName(doc);
  const findings: RoleFinding[] = [];
  for (const def of doc.definitions) {
    if (def.kind !== Kind.OBJECT_TYPE_DEFINITION && def.kind !== Kind.OBJECT_TYPE_EXTENSION) continue;
    if (def.name.value !== root) continue;
    for (const field of def.fields ?? []) {
      const roles = rolesOfNode(field);
      if (roles && roles.length > 0) continue;
      const coordinate = `${root}.${field.name.value}`;
      findings.push({
        coordinate,
        message: roles
          ? `Mutation field '${coordinate}' has @${ROLE_DIRECTIVE} with no role: give anyOf at least one role`
          : `Mutation field '${coordinate}' has no @${ROLE_DIRECTIVE}: add @${ROLE_DIRECTIVE}(anyOf: [...]) (mutations are denied by default and must declare who may call them)`,
      });
    }
  }
  return findings;
}

export const MUTATION_WITHOUT_ROLE_REASON = `Mutations must declare @${ROLE_DIRECTIVE}: an unrestricted mutation is blocked (spec, Versioning 4)`;

const fieldAdded = (
  typeName: string,
  field: GraphQLField<unknown, unknown>,
  message: string,
): Change<typeof ChangeType.FieldAdded> => ({
  type: ChangeType.FieldAdded,
  message,
  path: `${typeName}.${field.name}`,
  criticality: { level: CriticalityLevel.Breaking, reason: MUTATION_WITHOUT_ROLE_REASON },
  meta: {
    typeName,
    addedFieldName: field.name,
    typeType: 'object type',
    addedFieldReturnType: String(field.type),
  },
});

/**
 * @graphql-inspector rule: a Mutation field that is new, or lost its role restriction, without
 * @requiresRole is a breaking change, whatever else changed. (A field that was already
 * unrestricted in the base is the role lint's to report.)
 */
export const requireRoleOnNewMutations: Rule = ({ changes, oldSchema, newSchema }) => {
  const mutation = newSchema?.getMutationType();
  if (!mutation) return changes;
  const before = oldSchema?.getMutationType()?.getFields() ?? {};
  const flagged = new Map<string, Change>();
  for (const field of Object.values(mutation.getFields())) {
    if (restricted(field)) continue;
    const old = before[field.name];
    if (old && !restricted(old)) continue;
    const message = old
      ? `Mutation field '${mutation.name}.${field.name}' lost its @${ROLE_DIRECTIVE}: role restriction removed`
      : `Mutation field '${mutation.name}.${field.name}' was added without @${ROLE_DIRECTIVE}`;
    flagged.set(`${mutation.name}.${field.name}`, fieldAdded(mutation.name, field, message));
  }
  if (flagged.size === 0) return changes;
  // Our change replaces inspector's own FIELD_ADDED / directive-removed for the same field.
  const kept = changes.filter((c) => {
    const path = c.path ?? '';
    const field = path.split('.').slice(0, 2).join('.');
    const ours =
      flagged.has(field) &&
      (c.type === ChangeType.FieldAdded ||
        (c.type === ChangeType.DirectiveUsageFieldDefinitionRemoved && path.endsWith(`@${ROLE_DIRECTIVE}`)));
    return !ours;
  });
  return [...kept, ...flagged.values()];
};

import type { ApolloServerPlugin } from '@apollo/server';
import { type DocumentNode, type GraphQLSchema, TypeInfo, visit, visitWithTypeInfo } from 'graphql';
import type { IRules } from 'graphql-shield';
import type { RequestContext } from '../lib/auth/context.ts';
import { checkField, type RoleRequirements, shieldRules } from '../lib/auth/permissions.ts';

/**
 * Role-restricted operations at the gateway. The gateway executes query plans, not resolvers,
 * so graphql-shield's resolver middleware never runs here; instead the same shield rules,
 * derived from the supergraph SDL, are evaluated for every field of the operation once it is
 * resolved and before any plan is executed: a refused operation never reaches a subgraph.
 * The whole operation is refused when any field is (no partial data for a denied request).
 */
export function permissionsPlugin(requirements: RoleRequirements): ApolloServerPlugin<RequestContext> {
  const trees = new WeakMap<GraphQLSchema, IRules>();
  const treeFor = (schema: GraphQLSchema) => {
    let t = trees.get(schema);
    if (!t) {
      t = shieldRules(schema, requirements);
      trees.set(schema, t);
    }
    return t;
  };
  // Apollo's document store hands back the same DocumentNode for a repeated operation, so the
  // (type, field) pairs of an operation are collected once, not on every request.
  const fieldsByDocument = new WeakMap<DocumentNode, [string, string][]>();
  const fieldsOf = (document: DocumentNode, schema: GraphQLSchema) => {
    const known = fieldsByDocument.get(document);
    if (known) return known;
    const typeInfo = new TypeInfo(schema);
    const seen = new Set<string>();
    const fields: [string, string][] = [];
    visit(
      document,
      visitWithTypeInfo(typeInfo, {
        Field(node) {
          const parent = typeInfo.getParentType();
          const key = `${parent?.name}.${node.name.value}`;
          if (parent && !seen.has(key)) {
            seen.add(key);
            fields.push([parent.name, node.name.value]);
          }
        },
      }),
    );
    fieldsByDocument.set(document, fields);
    return fields;
  };
  return {
    async requestDidStart() {
      return {
        async didResolveOperation({ document, schema, contextValue }) {
          const tree = treeFor(schema);
          for (const [type, field] of fieldsOf(document, schema)) {
            const error = await checkField(tree, type, field, contextValue);
            if (error) throw error;
          }
        },
      };
    },
  };
}

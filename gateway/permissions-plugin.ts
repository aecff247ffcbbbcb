import type { ApolloServerPlugin } from '@apollo/server';
import { type GraphQLSchema, TypeInfo, visit, visitWithTypeInfo } from 'graphql';
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
  return {
    async requestDidStart() {
      return {
        async didResolveOperation({ document, schema, contextValue }) {
          const tree = treeFor(schema);
          const typeInfo = new TypeInfo(schema);
          const fields: [string, string][] = [];
          visit(
            document,
            visitWithTypeInfo(typeInfo, {
              Field(node) {
                const parent = typeInfo.getParentType();
                if (parent) fields.push([parent.name, node.name.value]);
              },
            }),
          );
          for (const [type, field] of fields) {
            const error = await checkField(tree, type, field, contextValue);
            if (error) throw error;
          }
        },
      };
    },
  };
}

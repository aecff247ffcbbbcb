import { GraphQLError, type ValidationRule } from 'graphql';

/**
 * An operation whose type the schema has no root for (a `subscription` here) is a validation
 * error, a 400. graphql 16 has no such rule (17 adds KnownOperationTypesRule); without it the
 * document passes validation and the gateway's query planner throws, which Apollo answers 500.
 * Found by the fault suite's generated documents (test/faults/graphql-fuzz.test.ts).
 */
export const knownOperationTypes: ValidationRule = (context) => ({
  OperationDefinition(node) {
    const schema = context.getSchema();
    const root =
      node.operation === 'query'
        ? schema.getQueryType()
        : node.operation === 'mutation'
          ? schema.getMutationType()
          : schema.getSubscriptionType();
    if (!root)
      context.reportError(
        new GraphQLError(`This schema has no ${node.operation} operations.`, { nodes: node }),
      );
  },
});

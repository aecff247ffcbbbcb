import type { GraphQLDataSource, GraphQLDataSourceProcessOptions } from '@apollo/gateway';
import type { GatewayGraphQLResponse } from '@apollo/server-gateway-interface';
import { type DocumentNode, execute, type GraphQLSchema, parse, validate } from 'graphql';
import type { RequestContext } from '../../lib/auth/context.ts';

const MAX_CACHED_DOCUMENTS = 1000;

/**
 * Embedded topology: the gateway calls a subgraph schema in the same process. Unlike
 * `LocalGraphQLDataSource`, which parses and validates every fetch, this keeps the parsed and
 * validated document of each query-plan fetch: the plan's fetches are the same few strings
 * for every request of an operation, so the work is done once.
 */
export class InProcessDataSource implements GraphQLDataSource<RequestContext> {
  private readonly documents = new Map<string, DocumentNode>();
  constructor(private readonly schema: GraphQLSchema) {}

  async process({
    request,
    context,
  }: GraphQLDataSourceProcessOptions<RequestContext>): Promise<GatewayGraphQLResponse> {
    const query = request.query ?? '';
    let document = this.documents.get(query);
    if (!document) {
      document = parse(query);
      const errors = validate(this.schema, document);
      if (errors.length > 0) return { errors };
      if (this.documents.size >= MAX_CACHED_DOCUMENTS) this.documents.clear();
      this.documents.set(query, document);
    }
    return (await execute({
      schema: this.schema,
      document,
      variableValues: request.variables ?? {},
      ...(request.operationName ? { operationName: request.operationName } : {}),
      contextValue: context,
    })) as GatewayGraphQLResponse;
  }
}

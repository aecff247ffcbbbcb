import type { GraphQLDataSource, GraphQLDataSourceProcessOptions } from '@apollo/gateway';
import type { GatewayGraphQLResponse } from '@apollo/server-gateway-interface';
import {
  type DocumentNode,
  type ExecutionResult,
  execute,
  type GraphQLInputType,
  type GraphQLSchema,
  getNamedType,
  isInputObjectType,
  parse,
  typeFromAST,
  validate,
} from 'graphql';
import { type CompiledQuery, compileQuery, isCompiledQuery } from 'graphql-jit';
import { LRUCache } from 'lru-cache';
import type { RequestContext } from '../../lib/auth/context.ts';

/** Distinct fetch documents kept compiled; a plan's fetches are a few strings per operation. */
const MAX_COMPILED_FETCHES = 500;

/**
 * How one fetch runs: compiled by graphql-jit; through graphql-js where graphql-jit differs
 * (below); or not at all, keeping its validation errors.
 */
type Prepared = CompiledQuery | { interpreted: DocumentNode } | ExecutionResult;

/**
 * graphql-jit 0.8 does not apply an input object field's default value to a variable that
 * leaves the field out (a `quantity: Int! = 1` left out is refused as "not provided"), where
 * graphql-js applies it. A fetch whose variables can hold such a field runs through graphql-js;
 * no operation of ours has one today (test/foundation/in-process-datasource.test.ts).
 * graphql-jit also words a refused variable differently ("…; Expected type Int; …"); only the
 * gateway calls this data source, with variables it has already coerced, so no client sees it.
 */
function variablesHaveInputFieldDefaults(schema: GraphQLSchema, document: DocumentNode): boolean {
  const seen = new Set<string>();
  const check = (type: GraphQLInputType | undefined): boolean => {
    const named = type && getNamedType(type);
    if (!named || !isInputObjectType(named) || seen.has(named.name)) return false;
    seen.add(named.name);
    return Object.values(named.getFields()).some((f) => f.defaultValue !== undefined || check(f.type));
  };
  return document.definitions.some(
    (d) =>
      d.kind === 'OperationDefinition' &&
      (d.variableDefinitions ?? []).some((v) =>
        check(typeFromAST(schema, v.type as never) as GraphQLInputType),
      ),
  );
}

/**
 * Embedded topology: the gateway calls a subgraph schema in the same process. Unlike
 * `LocalGraphQLDataSource`, which parses, validates and interprets every fetch with graphql-js,
 * this compiles each query-plan fetch once with graphql-jit (the plan's fetches are the same
 * few strings for every request of an operation) and then runs the compiled function: the
 * same resolvers (graphql-shield's rules included), variable coercion, null propagation and
 * errors, without walking the document per request. docs/performance.md has the measurement.
 */
export class InProcessDataSource implements GraphQLDataSource<RequestContext> {
  private readonly prepared = new LRUCache<string, Prepared>({ max: MAX_COMPILED_FETCHES });
  constructor(private readonly schema: GraphQLSchema) {}

  /** Parse, validate and compile once per distinct fetch; an invalid fetch keeps its errors. */
  private prepare(query: string, operationName: string | undefined): Prepared {
    const key = operationName ? `${operationName}\n${query}` : query;
    let prepared = this.prepared.get(key);
    if (!prepared) {
      const document = parse(query);
      const errors = validate(this.schema, document);
      prepared =
        errors.length > 0
          ? { errors }
          : variablesHaveInputFieldDefaults(this.schema, document)
            ? { interpreted: document }
            : compileQuery(this.schema, document, operationName);
      this.prepared.set(key, prepared);
    }
    return prepared;
  }

  async process({
    request,
    context,
  }: GraphQLDataSourceProcessOptions<RequestContext>): Promise<GatewayGraphQLResponse> {
    const operationName = request.operationName ?? undefined;
    const variables = request.variables ?? {};
    const prepared = this.prepare(request.query ?? '', operationName);
    if ('interpreted' in prepared) {
      return (await execute({
        schema: this.schema,
        document: prepared.interpreted,
        variableValues: variables,
        ...(operationName ? { operationName } : {}),
        contextValue: context,
      })) as GatewayGraphQLResponse;
    }
    if (isCompiledQuery(prepared)) {
      return (await prepared.query(undefined, context, variables)) as GatewayGraphQLResponse;
    }
    return prepared as GatewayGraphQLResponse;
  }
}

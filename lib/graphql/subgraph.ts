import { readFileSync } from 'node:fs';
import { buildSubgraphSchema } from '@apollo/subgraph';
import type { GraphQLResolverMap } from '@apollo/subgraph/dist/schema-helper/index.js';
import type { FastifyPluginAsync, InjectOptions } from 'fastify';
import { type DocumentNode, type GraphQLSchema, parse } from 'graphql';
import type { RequestContext } from '../auth/context.ts';
import { applyShield, roleRequirements } from '../auth/permissions.ts';
import type { Platform } from '../platform.ts';
import { DecimalScalar, decimalTwinResolvers } from './decimal.ts';

export type SubgraphName = 'pricing' | 'promotions' | 'procurement';

/**
 * What a subgraph package hands to a server: its federated schema (with the role rules of its
 * SDL applied) and its thin REST adapter. Both call the same domain functions.
 */
export interface SubgraphModule {
  readonly name: SubgraphName;
  readonly schema: GraphQLSchema;
  /** REST routes mounted on the same HTTP server (/v1/...). */
  readonly routes?: FastifyPluginAsync;
  /**
   * The hot read requests its own process sends itself before /readyz says ready, in turn
   * (lib/graphql/serve-subgraph.ts): what the gateways send it most. None that writes.
   */
  warmUpRequests?(): Promise<((n: number) => InjectOptions)[]>;
  close?(): Promise<void>;
}

export type SubgraphFactory = (platform: Platform) => Promise<SubgraphModule>;

export const readSubgraphSdl = (name: SubgraphName): string =>
  readFileSync(new URL(`../../schemas/${name}.graphql`, import.meta.url), 'utf8');

/** Federated schema from `schemas/<name>.graphql`, shielded by its own @requiresRole fields. */
export function buildShieldedSubgraphSchema(
  name: SubgraphName,
  resolvers: GraphQLResolverMap<RequestContext>,
): GraphQLSchema {
  const typeDefs = parse(readSubgraphSdl(name));
  return applyShield(
    buildSubgraphSchema({
      typeDefs,
      resolvers: withDecimals(typeDefs, resolvers) as GraphQLResolverMap<unknown>,
    }),
    roleRequirements(typeDefs),
  );
}

/** The Decimal scalar and the twin of every deprecated Float money field (lib/graphql/decimal.ts). */
function withDecimals(
  typeDefs: DocumentNode,
  resolvers: GraphQLResolverMap<RequestContext>,
): GraphQLResolverMap<RequestContext> {
  const twins = decimalTwinResolvers(typeDefs);
  if (Object.keys(twins).length === 0) return resolvers;
  const merged: Record<string, unknown> = { ...resolvers, Decimal: DecimalScalar };
  for (const [type, fields] of Object.entries(twins)) {
    merged[type] = { ...fields, ...(resolvers[type] as object | undefined) };
  }
  return merged as GraphQLResolverMap<RequestContext>;
}

import { readFileSync } from 'node:fs';
import { buildSubgraphSchema } from '@apollo/subgraph';
import type { GraphQLResolverMap } from '@apollo/subgraph/dist/schema-helper/index.js';
import type { FastifyPluginAsync } from 'fastify';
import { type GraphQLSchema, parse } from 'graphql';
import type { RequestContext } from '../auth/context.ts';
import { applyShield, roleRequirements } from '../auth/permissions.ts';
import type { Platform } from '../platform.ts';

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
    buildSubgraphSchema({ typeDefs, resolvers: resolvers as GraphQLResolverMap<unknown> }),
    roleRequirements(typeDefs),
  );
}

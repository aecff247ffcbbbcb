import { composeServices } from '@apollo/composition';
import { ApolloGateway } from '@apollo/gateway';
import { ApolloServer } from '@apollo/server';
import { buildSubgraphSchema } from '@apollo/subgraph';
import { parse } from 'graphql';
import { describe, expect, it } from 'vitest';
import { InProcessDataSource } from '../../gateway/datasources/in-process.ts';
import { permissionsPlugin } from '../../gateway/permissions-plugin.ts';
import { type RequestContext, requestContext } from '../../lib/auth/context.ts';
import { applyShield, roleRequirements } from '../../lib/auth/permissions.ts';

// A subgraph that adds a mutation without @requiresRole beside a restricted one.
const sdl = `
  extend schema
    @link(url: "https://specs.apollo.dev/federation/v2.7", import: ["@key", "@composeDirective"])
    @link(url: "https://agent-commerce.example/roles/v1.0", import: ["@requiresRole"])
    @composeDirective(name: "@requiresRole")
  directive @requiresRole(anyOf: [String!]!) on FIELD_DEFINITION
  type Query { ping: Boolean }
  type Mutation {
    guarded: Boolean @requiresRole(anyOf: ["ops:admin"])
    unguarded: Boolean
  }
`;

async function system() {
  let resolverCalls = 0;
  const resolvers = {
    Query: { ping: () => true },
    Mutation: {
      guarded: () => {
        resolverCalls++;
        return true;
      },
      unguarded: () => {
        resolverCalls++;
        return true;
      },
    },
  };
  const typeDefs = parse(sdl);
  const schema = applyShield(buildSubgraphSchema({ typeDefs, resolvers }), roleRequirements(typeDefs));
  const composed = composeServices([{ name: 'ops', url: 'http://ops.invalid', typeDefs }]);
  if (composed.errors) throw composed.errors[0];
  const apollo = new ApolloServer<RequestContext>({
    gateway: new ApolloGateway({
      supergraphSdl: composed.supergraphSdl,
      buildService: () => new InProcessDataSource(schema),
    }),
    plugins: [permissionsPlugin(roleRequirements(composed.supergraphSdl))],
  });
  await apollo.start();
  return { apollo, schema, calls: () => resolverCalls };
}

const admin = requestContext({
  caller: { roles: new Set(['ops:admin']), authenticated: true, subject: 'a' },
});

describe('a Mutation field without @requiresRole', () => {
  it('is denied at the gateway to every caller, whatever roles they hold', async () => {
    const { apollo, calls } = await system();
    const res = await apollo.executeOperation({ query: 'mutation { unguarded }' }, { contextValue: admin });
    expect(res.body.kind).toBe('single');
    if (res.body.kind !== 'single') return;
    expect(res.body.singleResult.errors?.[0]?.extensions?.code).toBe('FORBIDDEN');
    expect(res.body.singleResult.errors?.[0]?.message).toContain('Mutation.unguarded');
    expect(calls()).toBe(0);
    await apollo.stop();
  });

  it('is denied by the subgraph itself too (defence in depth)', async () => {
    const { schema, calls } = await system();
    const { graphql } = await import('graphql');
    const res = await graphql({ schema, source: 'mutation { unguarded }', contextValue: admin });
    expect(res.errors?.[0]?.extensions?.code).toBe('FORBIDDEN');
    expect(calls()).toBe(0);
  });

  it('while the restricted sibling runs for a caller with its role', async () => {
    const { apollo, calls } = await system();
    const res = await apollo.executeOperation({ query: 'mutation { guarded }' }, { contextValue: admin });
    if (res.body.kind !== 'single') throw new Error('expected a single result');
    expect(res.body.singleResult.errors).toBeUndefined();
    expect(res.body.singleResult.data).toEqual({ guarded: true });
    expect(calls()).toBe(1);
    await apollo.stop();
  });
});

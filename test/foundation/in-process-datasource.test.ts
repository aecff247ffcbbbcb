/**
 * The embedded gateway runs each subgraph fetch through graphql-jit (gateway/datasources/
 * in-process.ts). Federation and clients must not see a difference from graphql-js: every case
 * here runs the same fetch through graphql-js's `execute` and through the data source and
 * compares the whole result (data, error messages, paths), for entity fetches, abstract types,
 * null propagation, thrown and rejected resolvers, variables and graphql-shield's refusals.
 */
import { buildSubgraphSchema } from '@apollo/subgraph';
import { execute, GraphQLError, parse } from 'graphql';
import { describe, expect, it } from 'vitest';
import { InProcessDataSource } from '../../gateway/datasources/in-process.ts';
import { type RequestContext, requestContext } from '../../lib/auth/context.ts';
import { applyShield, roleRequirements } from '../../lib/auth/permissions.ts';

const sdl = `
  extend schema
    @link(url: "https://specs.apollo.dev/federation/v2.7", import: ["@key", "@composeDirective"])
    @link(url: "https://agent-commerce.example/roles/v1.0", import: ["@requiresRole"])
    @composeDirective(name: "@requiresRole")
  directive @requiresRole(anyOf: [String!]!) on FIELD_DEFINITION
  scalar Money
  input LineInput { sku: String!, quantity: Int! = 1 }
  input ProbeInput { sku: String!, quantity: Int! }
  interface Priced { amount: Money! }
  type Product @key(fields: "sku") { sku: String!, name: String, price: Money!, tags: [String!]! }
  type Discount implements Priced { amount: Money!, code: String }
  type Fee implements Priced { amount: Money!, reason: String! }
  type Query {
    products(lines: [LineInput!]!): [Product!]!
    probe(lines: [ProbeInput!]!, limit: Int = 50): [String!]!
    adjustments: [Priced!]!
    broken: Product
    rejected: String
    secret: String @requiresRole(anyOf: ["ops:admin"])
  }
`;

const catalog: Record<string, { name: string | null; price: string | null }> = {
  'SKU-1': { name: 'Widget', price: '19.99' },
  'SKU-2': { name: null, price: '5.00' },
  'SKU-NOPRICE': { name: 'Ghost', price: null },
};

const resolvers = {
  Query: {
    products: (_: unknown, { lines }: { lines: { sku: string; quantity: number }[] }) =>
      lines.map((l) => ({ sku: l.sku, quantity: l.quantity })),
    adjustments: async () => [
      { __typename: 'Discount', amount: '-5.00', code: 'SAVE5' },
      { __typename: 'Fee', amount: '2.50', reason: 'handling' },
    ],
    broken: () => {
      throw new GraphQLError('catalog down', { extensions: { code: 'UNAVAILABLE' } });
    },
    rejected: async () => Promise.reject(new Error('promotions timed out')),
    secret: () => 'x',
    probe: (_: unknown, a: { lines: { sku: string; quantity: number }[]; limit: number }) =>
      a.lines.slice(0, a.limit).map((l) => `${l.sku}:${l.quantity}`),
  },
  Product: {
    __resolveReference: async (ref: { sku: string }) => (catalog[ref.sku] ? { sku: ref.sku } : null),
    name: (p: { sku: string }) => catalog[p.sku]?.name ?? null,
    price: (p: { sku: string }) => catalog[p.sku]?.price ?? null,
    tags: (p: { sku: string; quantity?: number }) => [p.sku.toLowerCase(), `q${p.quantity ?? 0}`],
  },
};

const typeDefs = parse(sdl);
const schema = applyShield(buildSubgraphSchema({ typeDefs, resolvers }), roleRequirements(typeDefs));

const anonymous = requestContext({ caller: { roles: new Set(), authenticated: false, subject: 'anon' } });
const admin = requestContext({
  caller: { roles: new Set(['ops:admin']), authenticated: true, subject: 'ops' },
});

const cases: {
  name: string;
  query: string;
  variables?: Record<string, unknown>;
  context?: RequestContext;
}[] = [
  {
    name: 'a list with variables and an input default',
    query: 'query Q($lines: [LineInput!]!) { products(lines: $lines) { sku name tags } }',
    variables: { lines: [{ sku: 'SKU-1', quantity: 2 }, { sku: 'SKU-2' }] },
  },
  {
    name: 'entity fetch (_entities with representations), one unknown',
    query:
      'query E($representations: [_Any!]!) { _entities(representations: $representations) { ... on Product { sku name price } } }',
    variables: {
      representations: [
        { __typename: 'Product', sku: 'SKU-1' },
        { __typename: 'Product', sku: 'SKU-404' },
        { __typename: 'Product', sku: 'SKU-2' },
      ],
    },
  },
  {
    name: 'a null in a non-null field propagates to the nearest nullable parent',
    query:
      'query E($representations: [_Any!]!) { _entities(representations: $representations) { ... on Product { sku price } } }',
    variables: { representations: [{ __typename: 'Product', sku: 'SKU-NOPRICE' }] },
  },
  {
    name: 'a non-null list item that is null nulls the whole non-null list, then data',
    query: 'query Q($lines: [LineInput!]!) { products(lines: $lines) { sku price } }',
    variables: {
      lines: [
        { sku: 'SKU-1', quantity: 1 },
        { sku: 'SKU-NOPRICE', quantity: 1 },
      ],
    },
  },
  {
    name: 'an interface list resolved by __typename, with inline fragments and __typename',
    query: '{ adjustments { __typename amount ... on Discount { code } ... on Fee { reason } } }',
  },
  { name: 'a thrown GraphQLError keeps its extensions', query: '{ broken { sku } ping: __typename }' },
  { name: 'a rejected promise becomes a field error', query: '{ rejected adjustments { amount } }' },
  { name: 'graphql-shield refuses a field without the role', query: '{ secret }', context: anonymous },
  { name: 'graphql-shield allows it with the role', query: '{ secret }', context: admin },
  {
    name: 'a variable of the wrong type is refused before any resolver (graphql-js: input defaults)',
    query: 'query Q($lines: [LineInput!]!) { products(lines: $lines) { sku } }',
    variables: { lines: [{ sku: 7, quantity: 'two' }] },
  },
  {
    name: 'an argument default and an operation variable default (compiled)',
    query:
      'query Q($lines: [ProbeInput!]!, $limit: Int = 1) { a: probe(lines: $lines) b: probe(lines: $lines, limit: $limit) }',
    variables: {
      lines: [
        { sku: 'SKU-1', quantity: 2 },
        { sku: 'SKU-2', quantity: 1 },
      ],
    },
  },
  {
    name: 'a missing required variable is refused',
    query: 'query Q($lines: [LineInput!]!) { products(lines: $lines) { sku } }',
    variables: {},
  },
];

/** What a client or the gateway can observe of a result: JSON, as it goes over the wire. */
const wire = (r: unknown) => JSON.parse(JSON.stringify(r));

describe('InProcessDataSource (graphql-jit) against graphql-js', () => {
  const source = new InProcessDataSource(schema);

  it.each(cases)('$name', async ({ query, variables, context = admin }) => {
    const expected = await execute({
      schema,
      document: parse(query),
      variableValues: variables ?? {},
      contextValue: context,
    });
    const request = { query, ...(variables ? { variables } : {}) };
    const first = await source.process({ request, context } as never);
    const second = await source.process({ request, context } as never);
    expect(wire(first)).toEqual(wire(expected));
    // The second run uses the compiled fetch kept from the first.
    expect(wire(second)).toEqual(wire(expected));
  });

  it('returns the validation errors of a fetch the subgraph cannot run, every time', async () => {
    const request = { query: '{ products { nope } }' };
    const first = (await source.process({ request, context: admin } as never)) as { errors?: unknown[] };
    const second = (await source.process({ request, context: admin } as never)) as { errors?: unknown[] };
    expect(first.errors?.length).toBeGreaterThan(0);
    expect(wire(second)).toEqual(wire(first));
    expect(String((first.errors as Error[])[0]?.message)).toMatch(/Cannot query field "nope"/);
  });

  it('refuses a wrong variable of a compiled fetch, naming it, before any resolver', async () => {
    const request = {
      query: 'query Q($lines: [ProbeInput!]!) { probe(lines: $lines) }',
      variables: { lines: [{ sku: 7 }] },
    };
    const result = wire(await source.process({ request, context: admin } as never));
    expect(result.data).toBeUndefined();
    expect(result.errors.length).toBeGreaterThan(0);
    for (const e of result.errors) expect(e.message).toMatch(/^Variable "\$/);
  });

  it('keeps a separate compiled fetch per operation name of one document', async () => {
    const query = 'query A { adjustments { amount } } query B { broken { sku } }';
    const a = await source.process({ request: { query, operationName: 'A' }, context: admin } as never);
    const b = await source.process({ request: { query, operationName: 'B' }, context: admin } as never);
    expect(wire(a)).toEqual({ data: { adjustments: [{ amount: '-5.00' }, { amount: '2.50' }] } });
    expect(wire(b).data).toEqual({ broken: null });
  });
});

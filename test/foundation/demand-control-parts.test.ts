/** The demand-control modules alone (gateway/graphql/), on a small schema: no system started. */
import { ApolloServer, type ApolloServerPlugin, HeaderMap } from '@apollo/server';
import { ApolloArmor } from '@escape.tech/graphql-armor';
import { buildSchema, parse, specifiedRules, validate } from 'graphql';
import { Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import { boundedDocumentStore, DOCUMENT_HEAP_PER_SOURCE_CHAR } from '../../gateway/graphql/bounded-cache.ts';
import { demandControl } from '../../gateway/graphql/demand-control.ts';
import { useOperationLimits } from '../../gateway/graphql/limits.ts';
import { buildManifest, ManifestError, operationId, parseManifest } from '../../gateway/graphql/manifest.ts';
import { usePersistedOperations } from '../../gateway/graphql/persisted-operations.ts';
import { ConfigError, loadConfig } from '../../lib/config.ts';

const typeDefs = 'type Query { product(sku: ID): Product } type Product { sku: ID name: String }';
const resolvers = { Query: { product: () => ({ sku: 'A', name: 'a' }) } };
const schema = buildSchema(typeDefs);
/** Limits no test document reaches, for a test of one limit at a time. */
const generous = {
  maxTokens: 1_000_000,
  maxDepth: 100,
  maxAliases: 100_000,
  maxRootFields: 100_000,
  maxDirectives: 100,
  maxCost: 1_000_000,
};

async function send(server: ApolloServer, query: string) {
  const res = await server.executeHTTPGraphQLRequest({
    httpGraphQLRequest: {
      method: 'POST',
      headers: new HeaderMap([['content-type', 'application/json']]),
      search: '',
      body: { query },
    },
    context: async () => ({}),
  });
  const body = JSON.parse(res.body.kind === 'complete' ? res.body.string : '{}') as {
    errors?: { message: string; extensions?: { code?: string } }[];
  };
  return { status: res.status ?? 200, ...body };
}

describe('operation limits', () => {
  it("uses the parser's own token limit: graphql-armor's Apollo max-tokens plugin answers 500 in Apollo Server 5", async () => {
    const doc = `{ ${Array.from({ length: 100 }, (_, i) => `p${i}: product { sku }`).join(' ')} }`;
    const armor = new ApolloArmor({ maxTokens: { n: 50 } }).protect();
    // armor declares its plugins with the types of Apollo's CommonJS build
    const armored = new ApolloServer({
      typeDefs,
      resolvers,
      plugins: armor.plugins as unknown as ApolloServerPlugin[],
    });
    const ours = new ApolloServer({
      typeDefs,
      resolvers,
      ...useOperationLimits({ ...generous, maxTokens: 50 }),
    });
    await Promise.all([armored.start(), ours.start()]);
    try {
      expect((await send(armored, doc)).status).toBe(500);
      expect((await send(ours, doc)).status).toBe(400);
    } finally {
      await Promise.all([armored.stop(), ours.stop()]);
    }
  });

  it('refuses 5,000 aliases by the alias limit when the token limit would let them through', () => {
    const doc = parse(`{ ${Array.from({ length: 5_000 }, (_, i) => `a${i}: product { sku }`).join(' ')} }`);
    const limits = useOperationLimits({ ...generous, maxAliases: 15 });
    const errors = validate(schema, doc, [...specifiedRules, ...limits.validationRules]);
    expect(errors.map((e) => e.extensions.code)).toEqual(['MAX_ALIASES_LIMIT']);
    expect(errors[0]?.message).toBe('Aliases limit of 15 exceeded, found 5000.');
  });

  it('counts __typename aliases too (graphql-armor exempts them by default)', () => {
    const doc = parse('{ a: __typename b: __typename }');
    const limits = useOperationLimits({ ...generous, maxAliases: 1 });
    expect(validate(schema, doc, limits.validationRules).map((e) => e.extensions.code)).toEqual([
      'MAX_ALIASES_LIMIT',
    ]);
  });

  it('measures each operation of a document on its own', () => {
    const doc = parse('query A { product { sku } } query B { p: product { sku } q: product { sku } }');
    const limits = useOperationLimits({ ...generous, maxRootFields: 1 });
    const errors = validate(schema, doc, limits.validationRules);
    expect(errors.map((e) => e.message)).toEqual(['Root fields limit of 1 exceeded, found 2.']);
  });
});

describe('configuration of demand control', () => {
  it.each([
    ['GRAPHQL_MAX_DEPTH', '0'],
    ['GRAPHQL_MAX_TOKENS', 'many'],
    ['GRAPHQL_SAFELIST', 'maybe'],
    ['GRAPHQL_BODY_LIMIT_BYTES', '-1'],
  ])('refuses %s=%s, naming the variable', (name, value) => {
    expect(() => loadConfig({ [name]: value })).toThrow(new RegExp(`${name}:`));
  });

  it('accepts GRAPHQL_SAFELIST=on and is off by default', () => {
    expect(loadConfig({ GRAPHQL_SAFELIST: 'on' }).GRAPHQL_SAFELIST).toBe(true);
    expect(loadConfig({}).GRAPHQL_SAFELIST).toBe(false);
  });

  it('stops at start-up on a manifest that is not one, naming GRAPHQL_OPERATIONS_MANIFEST', () => {
    const config = loadConfig({ GRAPHQL_OPERATIONS_MANIFEST: new URL(import.meta.url).pathname });
    expect(() => demandControl(config, new Registry())).toThrow(ConfigError);
    expect(() => demandControl(config, new Registry())).toThrow(/GRAPHQL_OPERATIONS_MANIFEST: /);
  });

  it('hides "Did you mean" suggestions in production, where Apollo turns introspection off', async () => {
    const base = { GATEWAY_SHARED_SECRET: 'x'.repeat(40), AUTH_JWKS_URL: 'https://idp.example/jwks' };
    const suggestion = async (NODE_ENV: string) => {
      const { server } = demandControl(loadConfig({ ...base, NODE_ENV }), new Registry());
      const apollo = new ApolloServer({ typeDefs, resolvers, ...server });
      await apollo.start();
      try {
        return (await send(apollo, '{ product { nme } }')).errors?.[0]?.message ?? '';
      } finally {
        await apollo.stop();
      }
    };
    expect(await suggestion('development')).toMatch(/Did you mean "name"/);
    expect(await suggestion('production')).not.toMatch(/Did you mean/);
  });
});

describe('bounded caches', () => {
  it('keeps the document store within its byte bound, evicting the least recently used', async () => {
    const source = '{ product { sku name } }';
    const perDocument = source.length * (DOCUMENT_HEAP_PER_SOURCE_CHAR + 2);
    const store = boundedDocumentStore(perDocument * 10);
    await store.set('first', parse(source));
    for (let i = 0; i < 100; i++) {
      await store.set(`doc-${i}`, parse(source));
      if (i === 50) await store.get('doc-45'); // recently used: kept
    }
    expect(store.entries()).toBe(10);
    expect(await store.get('first')).toBeUndefined();
    expect(await store.get('doc-99')).toBeDefined();
  });

  it('serves manifest operations whatever the registrations evict, and keeps registrations bounded', async () => {
    const body = 'query Listed { product { sku } }';
    const { persistedQueries, registrations } = usePersistedOperations({
      manifest: new Map([[operationId(body), body]]),
      registrationBytes: 1_000,
    });
    const cache = persistedQueries.cache;
    if (!cache) throw new Error('no APQ cache');
    for (let i = 0; i < 200; i++) await cache.set(`apq:${i}`, `{ product { sku name } } # ${i}`);
    expect(registrations.entries()).toBeLessThan(30);
    expect(await cache.get('apq:0')).toBeUndefined();
    expect(await cache.get('apq:199')).toBeDefined();
    expect(await cache.get(`apq:${operationId(body)}`)).toBe(body);
    const before = registrations.entries();
    await cache.set(`apq:${operationId(body)}`, body);
    expect(registrations.entries()).toBe(before);
  });
});

describe('operation manifest', () => {
  it('names each operation by the sha256 of its printed body, whatever the file’s formatting', () => {
    const a = buildManifest([{ file: 'a.graphql', source: '# comment\nquery P {product{sku}}' }]);
    const b = buildManifest([{ file: 'b.graphql', source: 'query P {\n  product {\n    sku\n  }\n}\n' }]);
    expect(a.operations[0]?.id).toBe(b.operations[0]?.id);
    expect(a.operations[0]?.id).toBe(operationId(a.operations[0]?.body ?? ''));
  });

  it.each([
    [
      'two operations in a file',
      [{ file: 'x.graphql', source: 'query A { a } query B { b }' }],
      /x.graphql: holds 2/,
    ],
    [
      'an anonymous operation',
      [{ file: 'y.graphql', source: '{ a }' }],
      /y.graphql: the operation has no name/,
    ],
    [
      'a name used twice',
      [
        { file: 'p.graphql', source: 'query P { a }' },
        { file: 'q.graphql', source: 'query P { b }' },
      ],
      /used more than once: P/,
    ],
  ])('refuses %s', (_label, sources, message) => {
    expect(() => buildManifest(sources)).toThrow(message);
  });

  it('refuses a manifest entry whose id is not the hash of its body', () => {
    const manifest = buildManifest([{ file: 'p.graphql', source: 'query P { a }' }]);
    const op = manifest.operations[0];
    if (!op) throw new Error('no operation');
    const tampered = { ...manifest, operations: [{ ...op, body: 'query P { b }' }] };
    expect(() => parseManifest(JSON.stringify(tampered))).toThrow(ManifestError);
    expect(parseManifest(JSON.stringify(manifest)).get(op.id)).toBe(op.body);
  });
});

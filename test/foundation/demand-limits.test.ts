/**
 * GraphQL demand control on the running gateway: every limit accepts an operation at the limit
 * and refuses one over it with HTTP 400 and its own code, before any subgraph is called.
 */
import fc from 'fast-check';
import { getIntrospectionQuery } from 'graphql';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { NOT_JSON } from '../../gateway/graphql/body-limit.ts';
import { startEmbedded, type TestSystem } from '../../harness/system.ts';
import { generateCatalog } from '../../subgraphs/pricing/catalog/generate.ts';
import { type Answer, codeOf, post, tokenCount } from './demand-support.ts';

const SKU = generateCatalog(500)[0]?.sku ?? 'SKU-AAA-000001';
const input = { lines: [{ sku: SKU, quantity: 2 }], currency: 'USD', region: 'EU' };
const quote = (selection: string) =>
  `query Q($input: CartQuoteInput!) { cartQuote(input: $input) { ${selection} } }`;

/** `{ products(skus: […n skus]) { sku } }`: n + 12 tokens, one field deep, cheap to run. */
const withSkus = (n: number) =>
  `{ products(skus: [${Array.from({ length: n }, (_, i) => `"S${i}"`).join(' ')}]) { sku } }`;
/** The token count of withSkus(0) decides how many skus make exactly `tokens` tokens. */
const documentOfTokens = (tokens: number) => withSkus(tokens - tokenCount(withSkus(0)));
/** graphql-armor's cost: an object field 2, plus 1.5 × each child (a scalar is 1). */
const scalars = (n: number) => `{ products(skus: []) { ${'sku '.repeat(n)}} }`;

const LIMITS = {
  GRAPHQL_MAX_TOKENS: '200',
  GRAPHQL_MAX_DEPTH: '4',
  GRAPHQL_MAX_ALIASES: '3',
  GRAPHQL_MAX_ROOT_FIELDS: '2',
  GRAPHQL_MAX_DIRECTIVES: '2',
  GRAPHQL_MAX_COST: '32', // scalars(20) costs 2 + 1.5 × 20 = 32; the other cases cost less
  GRAPHQL_BODY_LIMIT_BYTES: String(2 * 1024 * 1024),
};

interface Case {
  limit: string;
  code: string;
  at: string;
  over: string;
}

const CASES: Case[] = [
  { limit: 'tokens', code: 'MAX_TOKENS_LIMIT', at: documentOfTokens(200), over: documentOfTokens(201) },
  {
    limit: 'depth',
    code: 'MAX_DEPTH_LIMIT',
    at: quote('promotions { applied { promotionId } }'),
    over: quote('promotions { applied { allocations { sku } } }'),
  },
  {
    limit: 'depth, nested through fragments',
    code: 'MAX_DEPTH_LIMIT',
    at: `${quote('...Q')} fragment Q on CartQuote { promotions { ...P } } fragment P on PromotionEvaluation { applied { promotionId } }`,
    over: `${quote('...Q')} fragment Q on CartQuote { promotions { ...P } } fragment P on PromotionEvaluation { applied { allocations { sku } } }`,
  },
  {
    limit: 'aliases',
    code: 'MAX_ALIASES_LIMIT',
    at: '{ products(skus: []) { a: sku b: name c: category } }',
    over: '{ products(skus: []) { a: sku b: name c: category d: inventoryLevel } }',
  },
  {
    limit: 'aliases, each spread of a fragment counted',
    code: 'MAX_ALIASES_LIMIT',
    at: '{ products(skus: []) { ...F } product(sku: "x") { c: sku } } fragment F on Product { a: sku b: name }',
    over: '{ products(skus: []) { ...F } product(sku: "x") { ...F } } fragment F on Product { a: sku b: name }',
  },
  {
    limit: 'root fields',
    code: 'MAX_ROOT_FIELDS_LIMIT',
    at: '{ products(skus: []) { sku } product(sku: "x") { sku } }',
    over: '{ products(skus: []) { sku } product(sku: "x") { sku } __typename }',
  },
  {
    limit: 'root fields, fragments and inline fragments counted',
    code: 'MAX_ROOT_FIELDS_LIMIT',
    at: '{ ...R } fragment R on Query { products(skus: []) { sku } ... on Query { product(sku: "x") { sku } } }',
    over: '{ ...R __typename } fragment R on Query { products(skus: []) { sku } ... on Query { product(sku: "x") { sku } } }',
  },
  {
    limit: 'directives',
    code: 'MAX_DIRECTIVES_LIMIT',
    at: '{ products(skus: []) { sku @include(if: true) name @skip(if: false) } }',
    over: '{ products(skus: []) { sku @include(if: true) name @skip(if: false) category @include(if: true) } }',
  },
  { limit: 'cost', code: 'COST_ESTIMATED_TOO_EXPENSIVE', at: scalars(20), over: scalars(21) },
];

describe('operation limits (tight settings)', () => {
  let sys: TestSystem;
  beforeAll(async () => {
    sys = await startEmbedded(LIMITS);
  });
  afterAll(() => sys?.close());

  /** The answer, and whether it reached any subgraph (the gateway's own counter). */
  const call = async (query: string): Promise<Answer & { reached: boolean }> => {
    const before = await sys.subgraphRequests();
    const res = await post(sys.url, { query, variables: { input } });
    return { ...res, reached: (await sys.subgraphRequests()) > before };
  };

  it.each(CASES)('$limit: at the limit runs', async ({ at }) => {
    const res = await call(at);
    expect(res.status, JSON.stringify(res.errors)).toBe(200);
    expect(res.errors).toBeUndefined();
    expect(res.reached).toBe(true);
  });

  it.each(CASES)('$limit: one over is refused with 400 $code, no subgraph called', async ({ over, code }) => {
    const res = await call(over);
    expect(res.status).toBe(400);
    expect(codeOf(res)).toBe(code);
    expect(res.errors).toHaveLength(1);
    expect(res.data ?? null).toBeNull();
    expect(res.reached).toBe(false);
  });

  it('refuses a 1 MB document at its 201st token: the parser never reads the rest', async () => {
    const huge = `{ products(skus: []) { ${'sku '.repeat(262_144)}} }`;
    expect(huge.length).toBeGreaterThan(1_000_000);
    const res = await call(huge);
    expect(res.status).toBe(400);
    expect(codeOf(res)).toBe('MAX_TOKENS_LIMIT');
    expect(res.errors?.[0]?.message).toMatch(/^Token limit of 200 exceeded/);
    // where parsing stopped: within the first kilobyte of a megabyte
    const at = res.errors?.[0]?.locations?.[0];
    expect(at?.line).toBe(1);
    expect(at?.column).toBeLessThan(1_000);
    expect(res.reached).toBe(false);
  });

  it('refuses a fragment bomb (each fragment spreading the next twice: 2^14 fields) by its cost', async () => {
    const levels = 14;
    const fragments = Array.from(
      { length: levels },
      (_, i) => `fragment F${i} on Product { ...F${i + 1} ...F${i + 1} }`,
    );
    const bomb = `{ products(skus: []) { ...F0 } } ${fragments.join(' ')} fragment F${levels} on Product { sku }`;
    const res = await call(bomb);
    expect(res.status).toBe(400);
    expect(codeOf(res)).toBe('COST_ESTIMATED_TOO_EXPENSIVE');
    expect(res.reached).toBe(false);
  });

  it('refuses a fragment cycle with 400 GRAPHQL_VALIDATION_FAILED, and the limits do not loop on it', async () => {
    const res = await call(
      '{ products(skus: []) { ...A } } fragment A on Product { sku ...B } fragment B on Product { ...A }',
    );
    expect(res.status).toBe(400);
    expect(res.errors?.map((e) => e.extensions?.code)).toContain('GRAPHQL_VALIDATION_FAILED');
    expect(res.errors?.map((e) => e.message).join(' ')).toMatch(/Cannot spread fragment "A" within itself/);
    expect(res.reached).toBe(false);
  });

  it('counts each refusal in graphql_demand_refusals_total by code', async () => {
    const count = async () => {
      const m = await sys.platform.metrics.getSingleMetric('graphql_demand_refusals_total')?.get();
      return m?.values.find((v) => v.labels.code === 'MAX_DEPTH_LIMIT')?.value ?? 0;
    };
    const before = await count();
    await call(CASES[1]?.over ?? '');
    await call(CASES[1]?.over ?? '');
    expect(await count()).toBe(before + 2);
  });
});

describe('operation limits (default settings)', () => {
  let sys: TestSystem;
  beforeAll(async () => {
    sys = await startEmbedded();
  });
  afterAll(() => sys?.close());

  it('refuses a 5,000-alias document with 400, before any subgraph is called', async () => {
    const aliases = Array.from({ length: 5_000 }, (_, i) => `a${i}: products(skus: []) { sku }`).join(' ');
    const before = await sys.subgraphRequests();
    const res = await post(sys.url, { query: `{ ${aliases} }` });
    expect(res.status).toBe(400);
    expect(codeOf(res)).toBe('MAX_TOKENS_LIMIT');
    expect(await sys.subgraphRequests()).toBe(before);
  });

  it('refuses a body over GRAPHQL_BODY_LIMIT_BYTES with 413 REQUEST_TOO_LARGE, unread', async () => {
    const before = await sys.subgraphRequests();
    const res = await post(sys.url, { query: `{ products(skus: []) { ${'sku '.repeat(262_144)}} }` });
    expect(res.status).toBe(413);
    expect(codeOf(res)).toBe('REQUEST_TOO_LARGE');
    expect(await sys.subgraphRequests()).toBe(before);
  });

  it.each([
    ['a body cut short', '{"query": "{ products(skus: []) { sku } }"'],
    ['an empty body', ''],
    [
      'a __proto__ key in the variables',
      '{"query": "{ products(skus: []) { sku } }", "variables": {"__proto__": {"x": 1}}}',
    ],
    [
      'a constructor.prototype key',
      '{"query": "{ products(skus: []) { sku } }", "extensions": {"constructor": {"prototype": {}}}}',
    ],
  ])('answers %s with a GraphQL-shaped 400 BAD_REQUEST, no subgraph called', async (_name, body) => {
    const before = await sys.subgraphRequests();
    const res = await post(sys.url, body);
    expect(res.status).toBe(400);
    expect(codeOf(res)).toBe('BAD_REQUEST');
    expect(res.errors?.[0]?.message).toBe(NOT_JSON);
    expect(await sys.subgraphRequests()).toBe(before);
  });

  it('keeps introspection as it was: the standard introspection query passes the limits', async () => {
    const res = await post(sys.url, { query: getIntrospectionQuery() });
    expect(res.status).toBe(200);
    const schema = res.data?.__schema as { types: unknown[] } | undefined;
    expect(schema?.types.length).toBeGreaterThan(10);
  });

  it('never answers a random document with a 5xx, and a refused one never reaches a subgraph', async () => {
    await fc.assert(
      fc.asyncProperty(randomRequest, async ({ query, variables }) => {
        const before = await sys.subgraphRequests();
        const res = await post(sys.url, { query, variables });
        expect(res.status, `${res.status} ${JSON.stringify(res.errors)} for ${query}`).toBeLessThan(500);
        if (res.status >= 400) {
          expect(typeof codeOf(res)).toBe('string');
          expect(await sys.subgraphRequests()).toBe(before);
        }
      }),
      { numRuns: 150 },
    );
  });
});

// Random documents over a slice of the real schema: nesting, aliases (some conflicting),
// directives, fragments (some undefined, some cyclic), inline fragments, variables defined or
// not, a few junk tokens. Many are valid and run; many are refused.
type Field = readonly [name: string, args: string, child?: string];
const FIELDS: Record<string, readonly Field[]> = {
  Query: [
    ['products', '(skus: $skus)', 'Product'],
    ['product', `(sku: "${SKU}")`, 'Product'],
    ['cartQuote', '(input: $input)', 'CartQuote'],
    ['__typename', ''],
  ],
  Product: [
    ['sku', ''],
    ['name', ''],
    ['basePrices', '', 'CatalogPrice'],
    [
      'price',
      '(context: {currency: "USD", region: "EU", customerSegment: "VIP", inventoryLevel: 3})',
      'Price',
    ],
  ],
  CatalogPrice: [
    ['currency', ''],
    ['amount', ''],
  ],
  Price: [
    ['dynamicPrice', ''],
    ['appliedModifiers', ''],
  ],
  CartQuote: [
    ['subtotal', ''],
    ['lines', '', 'QuoteLine'],
    ['promotions', '', 'PromotionEvaluation'],
  ],
  QuoteLine: [
    ['sku', ''],
    ['unitPrice', ''],
  ],
  PromotionEvaluation: [
    ['total', ''],
    ['applied', '', 'AppliedDiscount'],
  ],
  AppliedDiscount: [
    ['promotionId', ''],
    ['allocations', '', 'DiscountAllocation'],
  ],
  DiscountAllocation: [
    ['sku', ''],
    ['amount', ''],
  ],
};

/** Mostly `undefined`, sometimes one of `values`. */
const rarely = <T>(...values: T[]) =>
  fc.oneof(
    { weight: 6, arbitrary: fc.constant(undefined) },
    { weight: 1, arbitrary: fc.constantFrom(...values) },
  );

const selection = (type: string, depth: number): fc.Arbitrary<string> => {
  const field = fc
    .record({
      f: fc.constantFrom(...(FIELDS[type] ?? [])),
      alias: rarely('a', 'b', 'x'),
      directive: rarely('@include(if: $flag)', '@skip(if: false)'),
    })
    .chain(({ f: [name, args, child], alias, directive }) => {
      const head = `${alias ? `${alias}: ` : ''}${name}${args}${directive ? ` ${directive}` : ''}`;
      if (!child) return fc.constant(head);
      if (depth <= 0) return fc.constant(`${head} { __typename }`);
      return selection(child, depth - 1).map((s) => `${head} { ${s} }`);
    });
  // spreads that fit the type, and now and then one that does not
  const fragment = fc.oneof(
    {
      weight: 4,
      arbitrary: fc.constantFrom(...(type === 'Product' ? ['...P'] : []), `... on ${type} { __typename }`),
    },
    { weight: 1, arbitrary: fc.constantFrom('...Missing', '... on Product { sku }') },
  );
  return fc
    .array(fc.oneof({ weight: 8, arbitrary: field }, { weight: 1, arbitrary: fragment }), {
      minLength: 1,
      maxLength: 4,
    })
    .map((items) => items.join(' '));
};

const randomRequest = fc
  .record({
    root: selection('Query', 4),
    repeated: fc.oneof(
      { weight: 3, arbitrary: fc.constant(0) },
      { weight: 1, arbitrary: fc.nat({ max: 20 }) },
    ),
    fragment: fc.constantFrom(
      'fragment P on Product { sku name }',
      'fragment P on Product { sku name }',
      'fragment P on Product { ...P }',
      'fragment P on Product { a: sku a: name }',
      'fragment P on CartQuote { subtotal }',
    ),
    junk: rarely('{', '}', '"x"', '$flag', 'nope', '...', '@', '@unknown', '$bad: Nope'),
    at: fc.double({ min: 0, max: 1, noNaN: true }),
  })
  .map(({ root, repeated, fragment, junk, at }) => {
    const body = `${root} ${Array.from({ length: repeated }, (_, i) => `r${i}: products(skus: $skus) { sku }`).join(' ')}`;
    // the variables the document uses are declared (an unused declaration would be refused)
    const vars = [
      ['$skus', '[ID!]!'],
      ['$input', 'CartQuoteInput!'],
      ['$flag', 'Boolean!'],
    ].filter(([name]) => body.includes(name ?? ''));
    const fragments = body.includes('...P') ? fragment : '';
    let query = `query R${vars.length ? `(${vars.map(([n, t]) => `${n}: ${t}`).join(', ')})` : ''} { ${body} } ${fragments}`;
    if (junk) {
      const i = Math.floor(at * query.length);
      query = `${query.slice(0, i)} ${junk} ${query.slice(i)}`;
    }
    return { query, variables: { skus: [SKU], input, flag: true } };
  });

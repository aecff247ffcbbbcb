import { readFileSync } from 'node:fs';
import type { GraphQLSchema } from 'graphql';
import { beforeAll, describe, expect, it } from 'vitest';
import { buildManifest } from '../gateway/graphql/manifest.ts';
import { gatewaySchema, manifestJson, manifestProblems, operationSources } from './operations.ts';

describe('persisted-operation manifest (npm run operations:check)', () => {
  let schema: GraphQLSchema;
  beforeAll(async () => {
    schema = await gatewaySchema();
  });

  it('is committed as the operations of schemas/operations/ build it', () => {
    const committed = readFileSync(new URL('../schemas/operations/manifest.json', import.meta.url), 'utf8');
    expect(committed).toBe(manifestJson(buildManifest(operationSources())));
  });

  it("holds the repository's own operations: the cart quote, catalog and order reads, the operators' mutations", () => {
    const names = buildManifest(operationSources()).operations.map((o) => o.name);
    expect(names).toEqual(
      expect.arrayContaining(['CartQuote', 'Products', 'PurchaseOrders', 'SetBasePrice', 'UpsertPromotion']),
    );
  });

  it('passes: every operation validates against the supergraph within the default limits', () => {
    expect(manifestProblems(buildManifest(operationSources()), schema)).toEqual([]);
  });

  it.each([
    [
      'a field the supergraph lacks',
      'query Gone { products(skus: []) { colour } }',
      /Gone: Cannot query field "colour"/,
    ],
    [
      'an operation deeper than the default limit',
      `query Deep { __type(name: "Product") { fields { type ${'{ ofType '.repeat(8)}{ name }${' }'.repeat(8)} } } }`,
      /Deep: Query depth limit of 10 exceeded, found 12/,
    ],
    [
      'an operation over the default alias limit',
      `query Many { products(skus: []) { ${Array.from({ length: 16 }, (_, i) => `a${i}: sku`).join(' ')} } }`,
      /Many: Aliases limit of 15 exceeded/,
    ],
    [
      'a document over the default token limit',
      `query Long { products(skus: [${'"s" '.repeat(1000)}]) { sku } }`,
      /Long: Syntax Error: Document contains more/,
    ],
  ])('fails on %s, naming the operation', (_label, source, message) => {
    const problems = manifestProblems(buildManifest([{ file: 'x.graphql', source }]), schema);
    expect(problems.join('\n')).toMatch(message);
  });
});

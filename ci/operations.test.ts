import { readFileSync } from 'node:fs';
import type { GraphQLSchema } from 'graphql';
import { beforeAll, describe, expect, it } from 'vitest';
import { buildManifest } from '../gateway/graphql/manifest.ts';
import {
  gatewaySchema,
  manifestJson,
  manifestProblems,
  operationSources,
  repositoryManifest,
  retiredOperationSources,
} from './operations.ts';

describe('persisted-operation manifest (npm run operations:check)', () => {
  let schema: GraphQLSchema;
  beforeAll(async () => {
    schema = await gatewaySchema();
  });

  it('is committed as the operations of schemas/operations/ build it', () => {
    const committed = readFileSync(new URL('../schemas/operations/manifest.json', import.meta.url), 'utf8');
    expect(committed).toBe(manifestJson(repositoryManifest()));
  });

  it("holds the repository's own operations: the cart quote, catalog and order reads, the operators' mutations", () => {
    const names = repositoryManifest().operations.map((o) => o.name);
    expect(names).toEqual(
      expect.arrayContaining(['CartQuote', 'Products', 'PurchaseOrders', 'SetBasePrice', 'UpsertPromotion']),
    );
  });

  it('passes: every operation validates against the supergraph within the default limits', () => {
    expect(manifestProblems(repositoryManifest(), schema)).toEqual([]);
  });

  it('keeps the texts shipped before (the Float money fields, the spend policies without approval), after the current ones, so old clients still run', () => {
    const manifest = repositoryManifest();
    const retired = buildManifest([], retiredOperationSources()).operations;
    const current = new Map(buildManifest(operationSources()).operations.map((o) => [o.name, o]));
    for (const old of retired) {
      expect(manifest.operations.map((o) => o.id)).toContain(old.id);
      expect(current.get(old.name)?.body, old.name).not.toBe(old.body);
      // A lookup by name (what the console does) finds the current text.
      expect(manifest.operations.find((o) => o.name === old.name)?.id).toBe(current.get(old.name)?.id);
    }
    // The current text of each Float-era operation asks for the Decimal twins instead.
    const floatEra = retired.filter(
      (o) => !/\w+Decimal\b/.test(o.body) && /Decimal\b/.test(current.get(o.name)?.body ?? ''),
    );
    expect(floatEra.length).toBeGreaterThanOrEqual(10);
    // The spend policy operations now ask for the approval thresholds (issue 22).
    for (const name of ['SpendPolicies', 'SetSpendPolicy']) {
      expect(retired.find((o) => o.name === name)?.body).not.toMatch(/approvalAbove/);
      expect(current.get(name)?.body).toMatch(/approvalAbove/);
    }
  });

  it('lists a retired text once when it is also current, and refuses two current texts of one name', () => {
    const q = { file: 'q.graphql', source: 'query Q { products(skus: []) { sku } }' };
    expect(buildManifest([q], [q]).operations).toHaveLength(1);
    const q2 = { file: 'q2.graphql', source: 'query Q { products(skus: []) { name } }' };
    expect(buildManifest([q], [q2]).operations.map((o) => o.name)).toEqual(['Q', 'Q']);
    expect(() => buildManifest([q, q2])).toThrow(/names used more than once: Q/);
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

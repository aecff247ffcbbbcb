/**
 * One source for the contract: the OpenAPI 3.1 document. These tests hold the TypeScript
 * types, the runtime validator and the strict JSON parser to it.
 */
import { Ajv2020 } from 'ajv/dist/2020.js';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { isJsonMediaType } from '../../gateway/agent/parse/media-type.ts';
import { useExactNumberKeywords } from '../../lib/json/exact-number.ts';
import { parseStrictJson } from '../../lib/json/strict-json.ts';
import { purchaseOrderResponseJson } from '../../subgraphs/procurement/contract/json.ts';
import { componentSchema, procurementOpenApi } from '../../subgraphs/procurement/contract/openapi.ts';
import type { UsdAmount } from '../../subgraphs/procurement/contract/types.ts';
import {
  PURCHASE_ORDER_REQUEST_FIELDS,
  PURCHASE_ORDER_RESPONSE_FIELDS,
  PURCHASE_ORDER_RESPONSE_OPTIONAL,
} from '../../subgraphs/procurement/contract/types.ts';
import { validatePurchaseOrderRequest } from '../../subgraphs/procurement/contract/validate.ts';
import { approve, toResponse } from '../../subgraphs/procurement/domain/purchase-order.ts';
import { budgetOracle } from './support/decimal-oracle.ts';

type Schema = {
  properties: Record<string, { type: string }>;
  required: string[];
  additionalProperties: boolean;
};

describe('TypeScript types agree with the OpenAPI schemas', () => {
  it.each([
    ['PurchaseOrderRequest', PURCHASE_ORDER_REQUEST_FIELDS],
    ['PurchaseOrderResponse', PURCHASE_ORDER_RESPONSE_FIELDS],
  ])("%s: same fields, the spec's required, same JSON types, closed", (name, fields) => {
    const s = componentSchema(name) as unknown as Schema;
    expect(Object.keys(s.properties).sort()).toEqual(Object.keys(fields).sort());
    // The spec's fields are required; issue 22's approval fields appear only when they apply.
    const optional: readonly string[] = PURCHASE_ORDER_RESPONSE_OPTIONAL;
    expect([...s.required].sort()).toEqual(
      Object.keys(fields)
        .filter((f) => !optional.includes(f))
        .sort(),
    );
    for (const [k, t] of Object.entries(fields)) expect(s.properties[k]?.type, k).toBe(t);
    expect(s.additionalProperties).toBe(false);
  });

  it('a 201 body of the order domain is a valid PurchaseOrderResponse', () => {
    // Exact keywords: Ajv's own multipleOf finds 4999.99 / 0.01 = 499998.99999999994, not whole.
    const ajv = useExactNumberKeywords(new Ajv2020({ strict: false }));
    const check = ajv.compile(componentSchema('PurchaseOrderResponse'));
    const body = JSON.parse(
      purchaseOrderResponseJson(
        toResponse(
          approve(
            {
              request: {
                agent_id: 'agent-0000001',
                sku: 'SKU-ABC-123456',
                quantity: 1,
                max_budget_usd: '4999.99' as UsdAmount,
              },
              spiffeId: 's',
              traceId: 't',
            },
            'ord_1',
            Date.now(),
          ),
        ),
      ),
    );
    expect(check(body), JSON.stringify(check.errors)).toBe(true);
  });
});

describe('the OpenAPI document', () => {
  const doc = procurementOpenApi() as unknown as {
    openapi: string;
    paths: Record<
      string,
      {
        post: {
          responses: Record<string, { $ref: string }>;
          parameters: { $ref: string }[];
          security: unknown[];
        };
      }
    >;
    components: { responses: Record<string, { headers?: Record<string, unknown> }> };
  };
  it('is OpenAPI 3.1', () => expect(doc.openapi).toMatch(/^3\.1\./));

  it.each(['/api/v2/procurement/orders', '/v2/orders'])('declares every answer of %s', (path) => {
    const op = doc.paths[path]?.post;
    expect(op).toBeDefined();
    expect(Object.keys(op?.responses ?? {}).sort()).toEqual(
      ['201', '202', '400', '401', '403', '409', '413', '415', '422', '429', '503'].sort(),
    );
    expect(op?.parameters.map((p) => p.$ref)).toContain('#/components/parameters/IdempotencyKey');
    expect(op?.security.length).toBeGreaterThan(0);
  });

  it('declares Retry-After on 429 and 503', () => {
    expect(doc.components.responses.TooManyRequests?.headers).toHaveProperty('Retry-After');
    expect(doc.components.responses.ServiceUnavailable?.headers).toHaveProperty('Retry-After');
  });
});

describe('validatePurchaseOrderRequest', () => {
  const ok = { agent_id: 'agent-0000001', sku: 'SKU-ABC-123456', quantity: 1, max_budget_usd: 1 };
  it('returns a new frozen object with exactly the four fields', () => {
    const input = { ...ok };
    const r = validatePurchaseOrderRequest(input);
    expect(r.ok).toBe(true);
    if (!r.ok) return;
    expect(r.value).not.toBe(input);
    expect(Object.isFrozen(r.value)).toBe(true);
    expect(() => {
      (r.value as { quantity: number }).quantity = 1000;
    }).toThrow(TypeError);
  });

  it('does not coerce: strings, booleans and null are never numbers', () => {
    fc.assert(
      fc.property(fc.oneof(fc.string(), fc.boolean(), fc.constant(null), fc.array(fc.integer())), (v) => {
        expect(validatePurchaseOrderRequest({ ...ok, quantity: v }).ok).toBe(false);
        expect(validatePurchaseOrderRequest({ ...ok, max_budget_usd: v }).ok).toBe(false);
      }),
    );
  });

  it('accepts exactly the integers 1..100 as quantity', () => {
    fc.assert(
      fc.property(fc.integer({ min: -1000, max: 1000 }), (q) => {
        expect(validatePurchaseOrderRequest({ ...ok, quantity: q }).ok).toBe(q >= 1 && q <= 100);
      }),
    );
  });

  // Changed with the exact-money rule (issue 13): a budget must also be whole cents, judged on
  // the number as written (here the double's shortest text, as JSON.stringify writes it).
  it('accepts max_budget_usd in (0, 5000] in whole cents and nothing else (BigInt oracle)', () => {
    fc.assert(
      fc.property(
        fc.oneof(
          fc.double({ min: -10, max: 10_000, noNaN: true }),
          fc.integer({ min: -1000, max: 501_000 }).map((c) => c / 100),
        ),
        (m) => {
          const r = validatePurchaseOrderRequest({ ...ok, max_budget_usd: m });
          const expected = budgetOracle(String(m));
          expect(r.ok).toBe(expected.valid);
          if (r.ok) expect(r.value.max_budget_usd).toBe(expected.canonical);
        },
      ),
    );
  });
});

/**
 * Whether a value holds a `__proto__` or `constructor` key at any depth. Read from the keys, not
 * the text: a key that merely ends in `"__proto__` (`{"a\"__proto__":0}`) is no forbidden key.
 */
const hasForbiddenKey = (v: unknown): boolean =>
  typeof v === 'object' &&
  v !== null &&
  Object.keys(v).some(
    (k) => k === '__proto__' || k === 'constructor' || hasForbiddenKey((v as Record<string, unknown>)[k]),
  );

describe('parseStrictJson', () => {
  it('parses what JSON.parse parses, when keys are unique and not forbidden', () => {
    fc.assert(
      fc.property(fc.jsonValue(), (v) => {
        const text = JSON.stringify(v);
        const hasForbidden = hasForbiddenKey(v);
        const r = parseStrictJson(text);
        if (hasForbidden) expect(r.ok).toBe(false);
        else {
          expect(r.ok).toBe(true);
          if (r.ok) expect(JSON.parse(JSON.stringify(r.value))).toEqual(JSON.parse(text));
        }
      }),
      {
        numRuns: 2000,
        // A key ending in `"__proto__` (the text holds `"__proto__":` after an escaped quote) is
        // parsed; own `__proto__` and `constructor` keys, at any depth, are refused.
        examples: [
          [{ 'a"__proto__': 0 }],
          [[{ b: JSON.parse('{"__proto__":0}') }]],
          [{ x: { constructor: 0 } }],
        ],
      },
    );
  });

  it('never throws on arbitrary text and agrees with JSON.parse on what is syntax', () => {
    fc.assert(
      fc.property(fc.string({ maxLength: 64 }), (text) => {
        const r = parseStrictJson(text);
        let platform = true;
        try {
          JSON.parse(text);
        } catch {
          platform = false;
        }
        // Strict may refuse more (duplicates, forbidden keys, depth), never accept more.
        if (r.ok) expect(platform).toBe(true);
      }),
      { numRuns: 3000 },
    );
  });

  it.each([
    ['{"a":1,"a":1}', 'duplicate'],
    ['{"a":{"b":1,"b":2}}', 'duplicate'],
    ['{"__proto__":1}', 'forbidden'],
    ['{"constructor":1}', 'forbidden'],
    ['{"\\u0063onstructor":1}', 'forbidden'],
    ['[{"__proto__":null}]', 'forbidden'],
    ['01', 'unexpected data'],
    ['1.', 'unexpected data'],
    ['"\\x"', 'invalid escape'],
    ['"a\u0001"', 'control character'],
    ['', 'unexpected end'],
    [`${'['.repeat(33)}${']'.repeat(33)}`, 'nesting'],
    ['1e400', 'out of range'],
  ])('refuses %j (%s)', (text, reason) => {
    const r = parseStrictJson(text);
    expect(r.ok).toBe(false);
    if (!r.ok) expect(r.reason).toContain(reason);
  });

  it('gives objects no prototype', () => {
    const r = parseStrictJson('{"toString":1}');
    expect(r.ok && Object.getPrototypeOf(r.value)).toBeNull();
  });
});

describe('media type', () => {
  it.each([
    ['application/json', true],
    ['application/json; charset=utf-8', true],
    ['Application/JSON;charset="UTF-8"', true],
    ['application/json; charset=utf-16', false],
    ['application/json; foo=bar', false],
    ['application/problem+json', false],
    ['text/json', false],
    ['application/jsonp', false],
    [undefined, false],
  ])('%s → %s', (ct, expected) => expect(isJsonMediaType(ct)).toBe(expected));
});

/**
 * Tool calls turned back into HTTP requests (gateway/agent/contract/operations.ts) and the
 * exact JSON writer that forwards a tool's arguments (lib/json/exact-stringify.ts): pure
 * functions, fuzzed with fast-check.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { httpCallOf, toolOperation } from '../../gateway/agent/contract/operations.ts';
import { parseIdempotencyKey } from '../../gateway/agent/idempotency/key.ts';
import { stringifyExact } from '../../lib/json/exact-stringify.ts';
import { numberLexeme, parseStrictJson } from '../../lib/json/strict-json.ts';
import { OPENAPI_FILE, procurementOpenApi } from '../../subgraphs/procurement/contract/openapi.ts';

const ORDERS = '/api/v2/procurement/orders';
const op = (path: string, method: 'GET' | 'POST') => {
  const o = toolOperation(OPENAPI_FILE, path, method);
  if (!o) throw new Error(`no ${method} ${path}`);
  return o;
};
const getOrder = op(`${ORDERS}/{orderId}`, 'GET');
const placeOrder = op(ORDERS, 'POST');
const listOrders = op(ORDERS, 'GET');

describe('toolOperation', () => {
  it('takes path parameters, the Idempotency-Key header and the body fields as arguments', () => {
    const doc = procurementOpenApi() as unknown as {
      components: { parameters: Record<string, { schema: unknown }> };
    };
    expect(getOrder.inputSchema.properties.order_id).toMatchObject(
      doc.components.parameters.OrderId?.schema as object,
    );
    expect(getOrder.inputSchema.required).toEqual(['order_id']);
    expect(Object.keys(placeOrder.inputSchema.properties).sort()).toEqual(
      ['agent_id', 'idempotency_key', 'max_budget_usd', 'quantity', 'sku'].sort(),
    );
    expect(placeOrder.inputSchema.additionalProperties).toBe(false);
  });

  it('gives no tool for an operation the document does not have', () => {
    expect(toolOperation(OPENAPI_FILE, '/nowhere', 'GET')).toBeUndefined();
  });
});

describe('the output schema of a tool', () => {
  /** A one-operation document beside nothing: its success replies are what is under test. */
  function opWith(responses: Record<string, unknown>, schemas: Record<string, unknown> = {}) {
    const dir = mkdtempSync(join(tmpdir(), 'tool-output-'));
    const file = join(dir, 'doc.yaml');
    writeFileSync(
      file,
      stringify({
        openapi: '3.1.0',
        paths: { '/x': { post: { summary: 'x', responses } } },
        components: { schemas },
      }),
    );
    const o = toolOperation(pathToFileURL(file), '/x', 'POST');
    if (!o) throw new Error('no operation');
    return o;
  }
  const json = (schema: unknown) => ({ content: { 'application/json': { schema } } });
  const order = (extra: Record<string, unknown> = {}) => ({
    type: 'object',
    properties: { amount: { type: 'number', multipleOf: 0.01, maximum: 5000 }, ...extra },
  });

  it('is the JSON body of the 2xx replies, once when they share it, never an error reply', () => {
    const o = opWith(
      {
        '201': json({ $ref: '#/components/schemas/Order' }),
        '202': json({ $ref: '#/components/schemas/Order' }),
        '422': { content: { 'application/problem+json': { schema: { type: 'object' } } } },
      },
      { Order: order() },
    );
    expect(o.outputSchema).toEqual({
      type: 'object',
      properties: { amount: { type: 'number', maximum: 5000 } },
    });
  });

  it('is any of the 2xx bodies when they differ', () => {
    const o = opWith({ '200': json(order()), '202': json({ type: 'object', required: ['job'] }) });
    expect(o.outputSchema?.anyOf).toHaveLength(2);
    expect(o.outputSchema?.type).toBe('object');
  });

  it('drops OpenAPI keywords and a fractional multipleOf, but keeps a property named like one', () => {
    const o = opWith({
      '200': json({
        ...order({ example: { type: 'string', example: 'x' }, n: { type: 'integer', multipleOf: 5 } }),
        example: { amount: 1 },
        'x-internal': true,
      }),
    });
    expect(o.outputSchema).toEqual({
      type: 'object',
      properties: {
        amount: { type: 'number', maximum: 5000 },
        example: { type: 'string' },
        n: { type: 'integer', multipleOf: 5 },
      },
    });
  });

  it('is none without a JSON success body, and refuses a body that is no object', () => {
    expect(opWith({ '204': { description: 'nothing' } }).outputSchema).toBeUndefined();
    expect(() => opWith({ '200': json({ type: 'array' }) })).toThrow(/must be a JSON object/);
  });
});

describe('httpCallOf', () => {
  it.each([
    ['an order id', 'ord_0123456789abcdef0123456789abcdef', '/ord_0123456789abcdef0123456789abcdef'],
    ['a slash', 'a/b', '/a%2Fb'],
    ['..', '..', '/-'],
    ['.', '.', '/-'],
    ['%2e%2e', '%2e%2e', '/%252e%252e'],
    ['an empty id', '', '/-'],
    ['a number', 42, '/42'],
  ])('keeps %s in the one path segment', (_name, id, tail) => {
    expect(httpCallOf(getOrder, { order_id: id }).url).toBe(`${ORDERS}${tail}`);
  });

  it('never lets an order id leave its path segment', () => {
    fc.assert(
      fc.property(fc.oneof(fc.string(), fc.string({ unit: 'binary' }), fc.jsonValue()), (id) => {
        const { url } = httpCallOf(getOrder, { order_id: id });
        const path = new URL(url, 'http://localhost').pathname;
        expect(path.startsWith(`${ORDERS}/`)).toBe(true);
        expect(path.slice(ORDERS.length + 1)).not.toMatch(/\//);
        expect(path.slice(ORDERS.length + 1)).not.toBe('');
      }),
    );
  });

  it('writes any key of visible ASCII so that the REST parser reads back the same key', () => {
    const printable = fc.stringMatching(/^[\x20-\x7e]{1,255}$/);
    fc.assert(
      fc.property(printable, (key) => {
        const header = httpCallOf(placeOrder, { idempotency_key: key }).idempotencyKey;
        expect(parseIdempotencyKey(header)).toBe(key);
      }),
    );
  });

  it('writes a key no header can carry so that the REST parser refuses it', () => {
    for (const key of ['', 'tab\t', 'é', 'x'.repeat(256), 5, null, ['k']]) {
      const header = httpCallOf(placeOrder, { idempotency_key: key }).idempotencyKey;
      expect(parseIdempotencyKey(header), JSON.stringify(key)).toBeNull();
    }
  });

  it('puts query arguments in the query string and unknown ones where the route judges them', () => {
    expect(httpCallOf(listOrders, { limit: 5, cursor: 'abc' }).url).toBe(`${ORDERS}?limit=5&cursor=abc`);
    expect(httpCallOf(listOrders, { other: true }).url).toBe(`${ORDERS}?other=true`);
    const call = httpCallOf(placeOrder, { quantity: 1, extra: 'x', idempotency_key: 'k' });
    expect(call.body).toEqual({ quantity: 1, extra: 'x' });
    expect(call.idempotencyKey).toBe('"k"');
  });
});

describe('stringifyExact', () => {
  it('writes numbers as they were read', () => {
    const r = parseStrictJson('{"a":5000.00000000000000001,"b":[1e3,2.50,-0.0],"c":{"d":1E-2}}');
    if (!r.ok) throw new Error(r.reason);
    expect(stringifyExact(r.value)).toBe('{"a":5000.00000000000000001,"b":[1e3,2.50,-0.0],"c":{"d":1E-2}}');
  });

  it('reads the top-level lexemes from the object the members came from', () => {
    const r = parseStrictJson('{"max_budget_usd":250.50,"idempotency_key":"k"}');
    if (!r.ok) throw new Error(r.reason);
    const args = r.value as Record<string, unknown>;
    expect(stringifyExact({ max_budget_usd: args.max_budget_usd }, args)).toBe('{"max_budget_usd":250.50}');
  });

  it('round-trips any JSON text to the same value and the same number text', () => {
    fc.assert(
      fc.property(fc.json(), (text) => {
        const first = parseStrictJson(text);
        fc.pre(first.ok);
        if (!first.ok) return;
        const again = parseStrictJson(stringifyExact(first.value));
        expect(again.ok).toBe(true);
        if (!again.ok) return;
        expect(again.value).toEqual(first.value);
        const v = first.value;
        if (typeof v === 'object' && v !== null)
          for (const k of Object.keys(v)) expect(numberLexeme(again.value, k)).toBe(numberLexeme(v, k));
      }),
    );
  });
});

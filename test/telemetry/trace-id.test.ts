/**
 * The trace id a request gets (X-Trace-Id, echoed and audited), whether tracing is on or off:
 * the spec's X-Trace-Id first, else a valid W3C traceparent's trace id, else `unknown-trace`.
 */
import { parseTraceParent } from '@opentelemetry/core';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startEmbedded, type TestSystem } from '../../harness/system.ts';
import { traceIdOf, w3cTraceIdOf } from '../../lib/http/trace.ts';

const TRACE = '4bf92f3577b34da6a3ce929d0e0e4736';
const PARENT = '00f067aa0ba902b7';

describe('traceIdOf', () => {
  it.each([
    ['a valid traceparent', { traceparent: `00-${TRACE}-${PARENT}-01` }, TRACE],
    ['an unsampled one', { traceparent: `00-${TRACE}-${PARENT}-00` }, TRACE],
    ['a later version with more fields', { traceparent: `01-${TRACE}-${PARENT}-01-what-comes-next` }, TRACE],
    ['version ff (invalid)', { traceparent: `ff-${TRACE}-${PARENT}-01` }, 'unknown-trace'],
    ['an all-zero trace id', { traceparent: `00-${'0'.repeat(32)}-${PARENT}-01` }, 'unknown-trace'],
    ['an all-zero parent id', { traceparent: `00-${TRACE}-${'0'.repeat(16)}-01` }, 'unknown-trace'],
    ['version 00 with a fifth field', { traceparent: `00-${TRACE}-${PARENT}-01-x` }, 'unknown-trace'],
    ['uppercase hex', { traceparent: `00-${TRACE.toUpperCase()}-${PARENT}-01` }, 'unknown-trace'],
    ['a short trace id', { traceparent: `00-${TRACE.slice(1)}-${PARENT}-01` }, 'unknown-trace'],
    [
      'two traceparent headers (joined by the parser)',
      { traceparent: `00-${TRACE}-${PARENT}-01, 00-${TRACE}-${PARENT}-01` },
      'unknown-trace',
    ],
    ['garbage', { traceparent: 'not-a-traceparent' }, 'unknown-trace'],
    ['X-Trace-Id alone', { 'x-trace-id': 'order-run-42' }, 'order-run-42'],
    [
      'X-Trace-Id and a traceparent (the spec’s header wins)',
      { 'x-trace-id': 'mine', traceparent: `00-${TRACE}-${PARENT}-01` },
      'mine',
    ],
    [
      'an X-Trace-Id too long, with a traceparent',
      { 'x-trace-id': 'x'.repeat(129), traceparent: `00-${TRACE}-${PARENT}-01` },
      TRACE,
    ],
    [
      'an X-Trace-Id with a space, with a traceparent',
      { 'x-trace-id': 'a b', traceparent: `00-${TRACE}-${PARENT}-01` },
      TRACE,
    ],
    ['neither', {}, 'unknown-trace'],
  ])('%s', (_label, headers, expected) => {
    expect(traceIdOf(headers)).toBe(expected);
  });

  it('accepts exactly the traceparents OpenTelemetry’s W3C propagator continues, with the same trace id', () => {
    const hexOf = (n: number) =>
      fc.string({ unit: fc.constantFrom(...'0123456789abcdefA0'), minLength: n, maxLength: n });
    const traceparent = fc.oneof(
      fc
        .tuple(
          fc.constantFrom('00', '01', 'ff', 'fe', '0g'),
          fc.oneof(hexOf(32), fc.constant('0'.repeat(32)), hexOf(31)),
          fc.oneof(hexOf(16), fc.constant('0'.repeat(16))),
          fc.constantFrom('00', '01', '03', 'x1'),
          fc.constantFrom('', '-', '-abc', '-01'),
        )
        .map(([v, t, p, f, rest]) => `${v}-${t}-${p}-${f}${rest}`),
      fc.string({ unit: fc.constantFrom(...'0123456789abcdef-') }),
    );
    fc.assert(
      fc.property(traceparent, (tp) => {
        expect(w3cTraceIdOf(tp)).toBe(parseTraceParent(tp)?.traceId);
      }),
      { numRuns: 2000 },
    );
  });

  it('never throws and always answers a printable, bounded id, whatever the headers', () => {
    fc.assert(
      fc.property(
        fc.option(fc.string({ maxLength: 200 })),
        fc.option(fc.string({ maxLength: 80 })),
        (x, tp) => {
          const headers = {
            ...(x === null ? {} : { 'x-trace-id': x }),
            ...(tp === null ? {} : { traceparent: tp }),
          };
          expect(traceIdOf(headers)).toMatch(/^[\x21-\x7e]{1,128}$/);
        },
      ),
    );
  });
});

describe('with tracing off (no SDK in this process), every kind of entry point', () => {
  let sys: TestSystem;
  beforeAll(async () => {
    sys = await startEmbedded();
  });
  afterAll(() => sys?.close());

  const json = { 'content-type': 'application/json' };
  it.each([
    ['GraphQL', 'POST', '/graphql', { query: '{ __typename }' }],
    ['the edge’s REST quote', 'GET', '/cart/quote?line=SKU-ABC-000001:1&currency=USD&region=EU', undefined],
    ['the agent route, edge form', 'POST', '/v2/orders', {}],
    ['the agent route, spec form', 'POST', '/api/v2/procurement/orders', {}],
    ['pricing’s REST', 'POST', '/v1/prices/calculate', { sku: 'SKU-ABC-000001' }],
    ['promotions’ REST', 'POST', '/v1/promotions/evaluate', {}],
  ])('answers a traceparent’s trace id as X-Trace-Id: %s', async (_label, method, path, body) => {
    const res = await fetch(`${sys.url}${path}`, {
      method,
      headers: { traceparent: `00-${TRACE}-${PARENT}-01`, ...(body ? json : {}) },
      ...(body ? { body: JSON.stringify(body) } : {}),
    });
    await res.arrayBuffer();
    expect(res.status).toBeLessThan(500);
    expect(res.headers.get('x-trace-id')).toBe(TRACE);
  });
});

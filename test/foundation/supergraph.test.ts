import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startEmbedded, type TestSystem } from '../support/system.ts';

describe('embedded supergraph', () => {
  let sys: TestSystem;
  beforeAll(async () => {
    sys = await startEmbedded();
  });
  afterAll(() => sys.close());

  it('answers a query spanning procurement and pricing', async () => {
    const token = await sys.token(['orders:read']);
    const before = await sys.subgraphRequests();
    const res = await sys.gql('{ purchaseOrders(limit: 5) { orderId sku product { sku name category } } }', {
      token,
    });
    expect(res.errors).toBeUndefined();
    const orders = (res.data?.purchaseOrders ?? []) as { sku: string; product: { sku: string } | null }[];
    for (const o of orders) expect(o.product?.sku).toBe(o.sku);
    // one fetch to procurement, and one batched entity fetch to pricing when there are orders
    expect(await sys.subgraphRequests()).toBe(before + (orders.length > 0 ? 2 : 1));
  });

  it('serves liveness, readiness and Prometheus metrics', async () => {
    expect((await fetch(`${sys.url}/healthz`)).status).toBe(200);
    const ready = await fetch(`${sys.url}/readyz`);
    expect(ready.status).toBe(200);
    expect(await ready.json()).toMatchObject({ status: 'ready', checks: { db: 'ok' } });
    const metrics = await (await fetch(`${sys.url}/metrics`)).text();
    expect(metrics).toContain('gateway_subgraph_requests_total');
    expect(metrics).toContain('http_request_duration_seconds');
  });

  it('echoes X-Trace-Id and reads a W3C traceparent when it is absent', async () => {
    const a = await fetch(`${sys.url}/healthz`, { headers: { 'x-trace-id': 'trace-abc' } });
    expect(a.headers.get('x-trace-id')).toBe('trace-abc');
    const b = await fetch(`${sys.url}/healthz`, {
      headers: { traceparent: '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01' },
    });
    expect(b.headers.get('x-trace-id')).toBe('4bf92f3577b34da6a3ce929d0e0e4736');
    const c = await fetch(`${sys.url}/healthz`);
    expect(c.headers.get('x-trace-id')).toBe('unknown-trace');
  });
});

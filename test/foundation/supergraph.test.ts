import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startEmbedded, type TestSystem } from '../../harness/system.ts';
import { generateCatalog } from '../../subgraphs/pricing/catalog/generate.ts';

describe('embedded supergraph', () => {
  let sys: TestSystem;
  beforeAll(async () => {
    sys = await startEmbedded();
  });
  afterAll(() => sys.close());

  it('answers a 10-line cart quote spanning pricing and promotions with one fetch to each', async () => {
    const skus = generateCatalog(Number(sys.config.CATALOG_SIZE))
      .slice(0, 10)
      .map((p) => p.sku);
    const before = await sys.subgraphRequests();
    const res = await sys.gql(
      `query Q($input: CartQuoteInput!) {
        cartQuote(input: $input) { subtotal lines { sku quantity lineTotal } promotions { total discountTotal } }
      }`,
      {
        variables: {
          input: { lines: skus.map((sku) => ({ sku, quantity: 1 })), currency: 'USD', region: 'EU' },
        },
      },
    );
    expect(res.errors).toBeUndefined();
    const quote = res.data?.cartQuote as {
      subtotal: number;
      lines: { sku: string; lineTotal: number }[];
      promotions: { total: number; discountTotal: number };
    };
    expect(quote.lines.map((l) => l.sku)).toEqual(skus);
    const cents = (n: number) => Math.round(n * 100);
    const sum = quote.lines.reduce((n, l) => n + cents(l.lineTotal), 0);
    expect(cents(quote.subtotal)).toBe(sum);
    expect(cents(quote.promotions.total)).toBe(sum - cents(quote.promotions.discountTotal));
    // the plan: one fetch to pricing for all lines, one entity fetch to promotions
    expect(await sys.subgraphRequests()).toBe(before + 2);
  });

  it('reads back an agent order with its catalog product, spanning procurement and pricing', async () => {
    const sku = generateCatalog(Number(sys.config.CATALOG_SIZE))[0]?.sku ?? '';
    const placed = await fetch(`${sys.url}/v2/orders`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        'x-spiffe-id': 'spiffe://example.org/ns/ai/sa/procurement-agent',
      },
      body: JSON.stringify({ agent_id: 'agent-foundation-1', sku, quantity: 2, max_budget_usd: 120.5 }),
    });
    expect(placed.status).toBe(201);
    const { order_id } = (await placed.json()) as { order_id: string };
    const token = await sys.token(['orders:read']);
    const before = await sys.subgraphRequests();
    const res = await sys.gql(
      'query O($id: ID!) { purchaseOrder(orderId: $id) { orderId sku quantity product { sku name } } }',
      { token, variables: { id: order_id } },
    );
    expect(res.errors).toBeUndefined();
    const order = res.data?.purchaseOrder as {
      orderId: string;
      sku: string;
      product: { sku: string; name: string };
    };
    expect(order).toMatchObject({ orderId: order_id, sku, quantity: 2, product: { sku } });
    expect(order.product.name.length).toBeGreaterThan(0);
    expect(await sys.subgraphRequests()).toBe(before + 2);
  });

  it('serves liveness, readiness and Prometheus metrics', async () => {
    expect((await fetch(`${sys.url}/healthz`)).status).toBe(200);
    const ready = await fetch(`${sys.url}/readyz`);
    expect(ready.status).toBe(200);
    expect(await ready.json()).toMatchObject({ status: 'ready', checks: { db: 'ok' } });
    const metrics = await (await fetch(`${sys.url}/metrics`)).text();
    expect(metrics).toContain('gateway_subgraph_requests_total');
    expect(metrics).toContain('http_request_duration_seconds');
    expect(metrics).toMatch(/^nodejs_eventloop_delay_seconds_bucket\{le="0.001"\} \d+$/m);
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

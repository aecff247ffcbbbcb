/**
 * Bounded waiting (issue 48): while the event loop is later than a class's queue-time budget,
 * its requests are answered 503 at once, with Retry-After and the protocol's error body, counted
 * in http_requests_shed_total; an order is shed before any step ran, so its retry under the same
 * Idempotency-Key places it once. Health, readiness and metrics are never shed.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startEmbedded, type TestSystem } from '../../harness/system.ts';

const AGENT = 'spiffe://example.org/ns/ai/sa/procurement-agent';
const order = (key: string) =>
  fetch(`${sys.url}/v2/orders`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-spiffe-id': AGENT, 'idempotency-key': key },
    body: JSON.stringify({
      agent_id: 'agent-shed-01',
      sku: 'SKU-ABC-123456',
      quantity: 1,
      max_budget_usd: 10,
    }),
  });
const orders = async () =>
  Number((await sys.platform.db.query<{ n: string }>('SELECT count(*) AS n FROM purchase_orders'))[0]?.n);
/** The REST cart quote of the first catalog SKU. */
const quote = async () => {
  const [row] = await sys.platform.db.query<{ sku: string }>(
    'SELECT sku FROM catalog_products ORDER BY sku LIMIT 1',
  );
  return fetch(`${sys.url}/cart/quote?line=${row?.sku}:1&currency=USD&region=US`);
};
const shedCount = async (cls: string) => {
  const text = await (await fetch(`${sys.url}/metrics`)).text();
  return Number(new RegExp(`^http_requests_shed_total\\{class="${cls}"\\} (\\d+)`, 'm').exec(text)?.[1] ?? 0);
};

/** Keeps the loop ~80 ms late (this process is the system's): the budgets below are 5 (quotes) and 1000 ms (orders). */
function pressure(): () => Promise<void> {
  const blocker = setInterval(() => {
    const end = performance.now() + 80;
    while (performance.now() < end);
  }, 5);
  return async () => {
    clearInterval(blocker);
    // Two sample windows with the loop free again: the delay read falls back under the budgets.
    await new Promise((r) => setTimeout(r, 120));
  };
}
const sampled = () => new Promise((r) => setTimeout(r, 120));

let sys: TestSystem;

describe('shedding by queue-time budget', () => {
  beforeAll(async () => {
    sys = await startEmbedded({
      SHED_QUOTE_BUDGET_MS: '5',
      SHED_ORDER_BUDGET_MS: '1000',
      SHED_SAMPLE_MS: '20',
    });
  });
  afterAll(() => sys?.close());

  it('answers a quote 503 at once with Retry-After and a problem, and counts it; orders within their budget go on', async () => {
    const before = await shedCount('quote');
    const release = pressure();
    try {
      await sampled();
      const shedQuote = await quote();
      expect(shedQuote.status).toBe(503);
      expect(shedQuote.headers.get('retry-after')).toBe('1');
      expect(shedQuote.headers.get('content-type')).toContain('application/problem+json');
      expect(await shedQuote.json()).toMatchObject({
        status: 503,
        type: expect.stringContaining('service-unavailable'),
      });
      const price = await fetch(`${sys.url}/v1/prices/calculate`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({
          sku: 'SKU-ABC-123456',
          currency: 'USD',
          region: 'US',
          customerSegment: 'X',
          inventoryLevel: 50,
        }),
      });
      expect(price.status).toBe(503);
      expect(Object.keys((await price.json()) as object)).toEqual(['error']);
      // The order class's budget (1000 ms) is not exceeded: it is served.
      const served = await order('shed-test-served');
      expect(served.status).toBe(201);
      for (const path of ['/healthz', '/readyz', '/metrics'])
        expect((await fetch(`${sys.url}${path}`)).status).toBe(200);
    } finally {
      await release();
    }
    expect(await shedCount('quote')).toBeGreaterThan(before);
    // Served again once the loop is on time (retried: a busy test machine delays it too).
    let after = await quote();
    for (let i = 0; i < 20 && after.status === 503; i++) {
      await sampled();
      after = await quote();
    }
    expect(after.status).toBe(200);
  });
});

describe('a shed order', () => {
  let strict: TestSystem;
  beforeAll(async () => {
    strict = await startEmbedded({
      SHED_QUOTE_BUDGET_MS: '5',
      SHED_ORDER_BUDGET_MS: '5',
      SHED_SAMPLE_MS: '20',
    });
  });
  afterAll(() => strict?.close());

  it('is not written: its retry with the same Idempotency-Key places exactly one order', async () => {
    const was = sys;
    sys = strict;
    try {
      const release = pressure();
      let shed: Response;
      try {
        await sampled();
        shed = await order('shed-test-retried');
      } finally {
        await release();
      }
      expect(shed.status).toBe(503);
      expect(shed.headers.get('retry-after')).toBe('1');
      expect(await shed.json()).toMatchObject({
        status: 503,
        type: expect.stringContaining('service-unavailable'),
      });
      expect(await orders()).toBe(0);
      // Retried as a client honouring Retry-After would (sooner: the test's own loop settles fast).
      let retried = await order('shed-test-retried');
      for (let i = 0; i < 20 && retried.status === 503; i++) {
        await sampled();
        retried = await order('shed-test-retried');
      }
      expect(retried.status).toBe(201);
      expect(retried.headers.get('idempotent-replayed')).toBeNull();
      expect(await orders()).toBe(1);
      expect(await shedCount('order')).toBeGreaterThanOrEqual(1);
    } finally {
      sys = was;
    }
  });
});

describe('a class at its concurrency limit', () => {
  let gated: TestSystem;
  beforeAll(async () => {
    // One quote at a time; the loop's delay is first read after 10 s and its busy stretch not at
    // all (this test's own process is the system's), so nothing else sheds.
    gated = await startEmbedded({
      SHED_QUOTE_BUDGET_MS: '2',
      SHED_QUOTE_CONCURRENCY: '1',
      SHED_SAMPLE_MS: '10000',
      SHED_BUSY_STRETCH: 'none',
    });
  });
  afterAll(() => gated?.close());

  it('gives its place back after each answer: one at a time, every quote is served', async () => {
    const was = sys;
    sys = gated;
    try {
      for (let i = 0; i < 10; i++) expect((await quote()).status).toBe(200);
      // A refused body (400/422) and a 404 give theirs back too.
      expect((await fetch(`${sys.url}/cart/quote?line=nope`)).status).toBeLessThan(500);
      expect((await quote()).status).toBe(200);
      expect(await shedCount('quote')).toBe(0);
      // The default gate is fixed (SHED_ADAPTIVE_CLASSES=none): no class has an adaptive
      // limit's gauges (lib/http/adaptive-limit.ts is tested on its own).
      const text = await (await fetch(`${sys.url}/metrics`)).text();
      expect(text).not.toMatch(/^http_concurrency_limit\{/m);
      expect(text).not.toMatch(/^http_queue_budget_seconds\{/m);
    } finally {
      sys = was;
    }
  });
});

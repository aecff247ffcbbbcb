import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { recordKey } from '../../gateway/agent/idempotency/key.ts';
import { startEmbedded, type TestSystem } from '../../harness/system.ts';
import { generateCatalog } from '../../subgraphs/pricing/catalog/generate.ts';
import type { UsdAmount } from '../../subgraphs/procurement/contract/types.ts';
import { type OrderDomain, orderIdFor } from '../../subgraphs/procurement/domain/order-domain.ts';

const AGENT = 'spiffe://example.org/ns/ai/sa/procurement-agent';
const sku = generateCatalog(50)[0]?.sku ?? '';
const request = { agent_id: 'agent-retry-0001', sku, quantity: 2, max_budget_usd: 99.5 };
/** The same request as the order domain takes it: the contract's exact amount. */
const validated = { ...request, max_budget_usd: '99.5' as UsdAmount };

describe('a retry after an ambiguous failure places one order, not two', () => {
  let sys: TestSystem;
  let domain: OrderDomain;
  beforeAll(async () => {
    sys = await startEmbedded();
    domain = (sys.local.procurement as unknown as { api: OrderDomain }).api;
  });
  afterAll(() => sys.close());

  const post = (key: string) =>
    fetch(`${sys.url}/v2/orders`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-spiffe-id': AGENT, 'idempotency-key': key },
      body: JSON.stringify(request),
    });

  it('finds the order an earlier attempt committed although its reply was lost', async () => {
    const key = 'retry-after-timeout-1';
    // The earlier attempt: the domain committed the order, the gateway never saw the reply
    // (a timeout in the distributed topology), answered 503 and released the key.
    const committed = await domain.place({
      request: validated,
      spiffeId: AGENT,
      traceId: 'lost-reply',
      orderId: orderIdFor(recordKey(AGENT, key)),
    });
    const retry = await post(key);
    expect(retry.status).toBe(201);
    expect(await retry.json()).toEqual({ ...committed, allocated_budget: 99.5 });
    const stored = await domain.list({ agentId: request.agent_id, limit: 10 });
    expect(stored.orders.map((o) => o.orderId)).toEqual([committed.order_id]);
  });

  it('answers 422 to a retry that reuses the key with another body, though the key was released', async () => {
    const key = 'retry-after-timeout-2';
    const committed = await domain.place({
      request: validated,
      spiffeId: AGENT,
      traceId: 'lost-reply',
      orderId: orderIdFor(recordKey(AGENT, key)),
    });
    const other = await fetch(`${sys.url}/v2/orders`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-spiffe-id': AGENT, 'idempotency-key': key },
      body: JSON.stringify({ ...request, quantity: 3 }),
    });
    expect(other.status).toBe(422);
    expect(other.headers.get('content-type')).toMatch(/^application\/problem\+json/);
    expect(((await other.json()) as { type: string }).type).toMatch(/idempotency-key-reused$/);
    // The key still belongs to the first request: it gets its order, and only one exists.
    const retry = await post(key);
    expect(retry.status).toBe(201);
    expect(((await retry.json()) as { order_id: string }).order_id).toBe(committed.order_id);
    const stored = await domain.list({ agentId: request.agent_id, limit: 10 });
    expect(stored.orders.filter((o) => o.orderId === committed.order_id)).toHaveLength(1);
    expect(stored.orders.filter((o) => o.quantity === 3)).toHaveLength(0);
  });

  it('gives another identity or another key its own order', () => {
    const a = orderIdFor(recordKey(AGENT, 'k1'));
    expect(orderIdFor(recordKey(AGENT, 'k1'))).toBe(a);
    expect(orderIdFor(recordKey(AGENT, 'k2'))).not.toBe(a);
    expect(orderIdFor(recordKey(`${AGENT}/other`, 'k1'))).not.toBe(a);
    expect(a).toMatch(/^ord_[0-9a-f]{32}$/);
  });
});

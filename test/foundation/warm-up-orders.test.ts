/**
 * The warm-up rehearses orders (issue 48): before ready, a starting system sends itself whole
 * orders for a reserved identity; every step runs, the store's statements are rolled back, and
 * the audit records one entry that the warm-up ran. Nothing is bought and no row is left behind.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WARM_UP_AGENT_PATH } from '../../gateway/agent/rehearsal.ts';
import { startEmbedded, type TestSystem } from '../../harness/system.ts';
import { REHEARSAL_HEADER } from '../../lib/http/rehearsal.ts';
import { orderDomainOf } from '../../subgraphs/procurement/index.ts';

const AGENT = 'spiffe://example.org/ns/ai/sa/procurement-agent';
const WARM_UP_AGENT = `spiffe://example.org${WARM_UP_AGENT_PATH}`;
const ORDER = JSON.stringify({
  agent_id: 'agent-test-01',
  sku: 'SKU-ABC-123456',
  quantity: 1,
  max_budget_usd: 10,
});

let sys: TestSystem;
const count = async (table: string) =>
  Number((await sys.platform.db.query<{ n: string }>(`SELECT count(*) AS n FROM ${table}`))[0]?.n);
const rows = async () => ({
  orders: await count('purchase_orders'),
  outbox: await count('procurement_outbox'),
  changes: await count('purchase_order_changes'),
});

beforeAll(async () => {
  sys = await startEmbedded({ WARM_UP_MS: '1500' });
  for (;;) {
    if ((await fetch(`${sys.url}/readyz`)).status === 200) break;
    await new Promise((r) => setTimeout(r, 20));
  }
});
afterAll(() => sys?.close());

describe('the warm-up rehearses orders before ready', () => {
  it('ran orders through the whole chain, stored none, and audited only that it ran', async () => {
    const audit = await sys.platform.db.query<{ identity: string; path: string; reason: string }>(
      'SELECT identity, path, reason FROM agent_audit_log ORDER BY seq',
    );
    // One entry: the warm-up's, naming how many orders it rehearsed.
    expect(audit).toHaveLength(1);
    expect(audit[0]).toMatchObject({ identity: WARM_UP_AGENT, path: 'warm-up' });
    const rehearsed = Number(/warm-up: (\d+) orders/.exec(audit[0]?.reason ?? '')?.[1]);
    // How many depends on the machine (a few on a loaded one): at least one ran the whole path.
    expect(rehearsed).toBeGreaterThan(0);
    expect(await rows()).toEqual({ orders: 0, outbox: 0, changes: 0 });
    expect(orderDomainOf(sys.local.procurement)?.placed()).toBe(0);
  });

  it('stores a real order afterwards as before (the control: the counts see a row)', async () => {
    const res = await fetch(`${sys.url}/v2/orders`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-spiffe-id': AGENT },
      body: ORDER,
    });
    expect(res.status).toBe(201);
    expect(await rows()).toEqual({ orders: 1, outbox: 1, changes: 0 });
  });

  it.each([
    ['without the token', {}],
    ['with a token after the warm-up ended', { [REHEARSAL_HEADER]: 'x'.repeat(48) }],
  ])('refuses the reserved identity %s (401), storing nothing', async (_name, extra) => {
    const before = await rows();
    const res = await fetch(`${sys.url}/v2/orders`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-spiffe-id': WARM_UP_AGENT, ...extra },
      body: ORDER,
    });
    expect(res.status).toBe(401);
    expect(res.headers.get('content-type')).toContain('application/problem+json');
    expect(await rows()).toEqual(before);
  });
});

/**
 * The warm-up rehearses orders and checkouts (issue 48): before ready, a starting system sends
 * itself whole orders and ACP and UCP checkouts (create, update, complete) for a reserved identity; every
 * step runs, the order's statements are rolled back, what a completion reserved or redeemed is
 * given back, its sessions deleted, and the audit records one entry that the warm-up ran.
 * Nothing is bought and no row is left behind.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ACP_VERSION } from '../../gateway/agent/acp/version.ts';
import { WARM_UP_AGENT_PATH } from '../../gateway/agent/rehearsal.ts';
import { startEmbedded, type TestSystem } from '../../harness/system.ts';
import { REHEARSAL_HEADER } from '../../lib/http/rehearsal.ts';
import { orderDomainOf } from '../../subgraphs/procurement/index.ts';
import { issueKey } from '../acp/support/acp.ts';

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
  sessions: await count('checkout_sessions'),
  replies: await count('agent_idempotency'),
  redemptions: await count('promotion_redemption_orders'),
});
const NOTHING = { orders: 0, outbox: 0, changes: 0, sessions: 0, replies: 0, redemptions: 0 };

beforeAll(async () => {
  sys = await startEmbedded({ WARM_UP_MS: '2500' });
  for (;;) {
    if ((await fetch(`${sys.url}/readyz`)).status === 200) break;
    await new Promise((r) => setTimeout(r, 20));
  }
});
afterAll(() => sys?.close());

describe('the warm-up rehearses orders before ready', () => {
  it('ran orders and checkouts through the whole chain, stored none, and audited only that it ran', async () => {
    const audit = await sys.platform.db.query<{ identity: string; path: string; reason: string }>(
      'SELECT identity, path, reason FROM agent_audit_log ORDER BY seq',
    );
    // One entry: the warm-up's, naming how many orders it rehearsed.
    expect(audit).toHaveLength(1);
    expect(audit[0]).toMatchObject({ identity: WARM_UP_AGENT, path: 'warm-up' });
    const [, orders, completions] = /warm-up: (\d+) orders and (\d+) checkout completions/.exec(
      audit[0]?.reason ?? '',
    ) ?? ['', '0', '0'];
    // How many depends on the machine (a few on a loaded one): at least one ran the whole path.
    expect(Number(orders)).toBeGreaterThan(0);
    expect(Number(completions)).toBeGreaterThan(0);
    expect(await rows()).toEqual(NOTHING);
    expect(orderDomainOf(sys.local.procurement)?.placed()).toBe(0);
  });

  it('stores a real order afterwards as before (the control: the counts see a row)', async () => {
    const res = await fetch(`${sys.url}/v2/orders`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-spiffe-id': AGENT },
      body: ORDER,
    });
    expect(res.status).toBe(201);
    expect(await rows()).toEqual({ ...NOTHING, orders: 1, outbox: 1 });
  });

  it('refuses an ACP key bound to the reserved identity (401), with or without a token, storing nothing', async () => {
    const { key } = await issueKey(sys, { spiffeId: WARM_UP_AGENT });
    const before = await rows();
    const extras: Record<string, string>[] = [{}, { [REHEARSAL_HEADER]: 'x'.repeat(48) }];
    for (const extra of extras) {
      const res = await fetch(`${sys.url}/acp/checkout_sessions`, {
        method: 'POST',
        headers: {
          authorization: `Bearer ${key}`,
          'api-version': ACP_VERSION,
          'content-type': 'application/json',
          'idempotency-key': `warm-up-key-${Math.random()}`,
          ...extra,
        },
        body: JSON.stringify({
          currency: 'usd',
          capabilities: {},
          line_items: [{ id: 'SKU-ABC-123456', quantity: 1 }],
        }),
      });
      expect(res.status).toBe(401);
      expect(((await res.json()) as { code?: string }).code).toBe('invalid_api_key');
    }
    expect(await rows()).toEqual(before);
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

  it('refuses a UCP key bound to the reserved identity (401), with or without a token, storing nothing', async () => {
    const profile = 'https://platform.example/profile.json';
    const { key } = await issueKey(sys, { spiffeId: WARM_UP_AGENT, ucpProfile: profile });
    const before = await rows();
    const extras: Record<string, string>[] = [{}, { [REHEARSAL_HEADER]: 'x'.repeat(48) }];
    for (const extra of extras) {
      const res = await fetch(`${sys.url}/ucp/checkout-sessions`, {
        method: 'POST',
        headers: {
          authorization: `Bearer ${key}`,
          'ucp-agent': `profile="${profile}"`,
          'content-type': 'application/json',
          'idempotency-key': `warm-up-ucp-key-${Math.random()}`,
          ...extra,
        },
        body: JSON.stringify({ line_items: [{ item: { id: 'SKU-ABC-123456' }, quantity: 1 }] }),
      });
      expect(res.status).toBe(401);
      expect(JSON.stringify(await res.json())).toContain('reserved for the warm-up');
    }
    expect(await rows()).toEqual(before);
  });
});

/**
 * Every request example of the vendored examples.agentic_checkout.json (2026-04-17), replayed
 * against the embedded system with its item ids mapped to catalog SKUs and its fulfilment
 * option ids to this merchant's one option. Every response validates against the bundle.
 * Requests that pay with a card or delegated handler get this merchant's clear refusal; the same
 * request paid by purchase order completes.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FULFILLMENT_OPTION_ID } from '../../gateway/agent/acp/render.ts';
import { startEmbedded, type TestSystem } from '../../harness/system.ts';
import { acp, expectError, expectSession, issueKey } from './support/acp.ts';
import { acpJson } from './support/examples.ts';

const examples = acpJson<Record<string, Record<string, unknown>>>('examples/examples.agentic_checkout.json');
const requests = (prefix: string) =>
  Object.keys(examples).filter((k) => k.startsWith(prefix) && k.includes('request'));

/** The example's item ids (`item_123`) as catalog SKUs, and its fulfilment option ids as ours. */
function mapped(name: string): Record<string, unknown> {
  const text = JSON.stringify(examples[name])
    .replace(/"item_\d+"/g, '"SKU-ABC-000001"')
    .replace(/"fulfillment_option_\d+"/g, `"${FULFILLMENT_OPTION_ID}"`);
  return JSON.parse(text) as Record<string, unknown>;
}

let sys: TestSystem;
let key: string;
beforeAll(async () => {
  sys = await startEmbedded({ RATE_LIMIT_CAPACITY: '1000', RATE_LIMIT_REFILL_PER_SECOND: '1000' });
  key = (await issueKey(sys, { spiffeId: 'spiffe://example.org/ns/ai/sa/procurement-agent/examples' })).key;
});
afterAll(() => sys?.close());

const open = async () => {
  const s = expectSession(
    await acp(sys.url, key, 'POST', '/checkout_sessions', mapped('create_checkout_session_request')),
    201,
  );
  return String(s.id);
};

describe('the examples of the ACP release', () => {
  it('finds the request examples it replays', () => {
    expect(requests('create_')).toHaveLength(2);
    expect(requests('update_')).toHaveLength(1);
    expect(requests('complete_')).toHaveLength(5);
    expect(requests('cancel_')).toHaveLength(2);
  });

  it.each(requests('create_'))('creates a session from %s', async (name) => {
    const s = expectSession(await acp(sys.url, key, 'POST', '/checkout_sessions', mapped(name)), 201);
    expect(s.status).toBe('ready_for_payment');
  });

  it.each(requests('update_'))('updates a session with %s', async (name) => {
    const id = await open();
    const s = expectSession(await acp(sys.url, key, 'POST', `/checkout_sessions/${id}`, mapped(name)));
    expect(s.selected_fulfillment_options).toEqual([
      { type: 'shipping', option_id: FULFILLMENT_OPTION_ID, item_ids: ['SKU-ABC-000001'] },
    ]);
  });

  it.each(requests('complete_'))(
    'refuses %s as sent (no payment handler here), completes it paid by purchase order',
    async (name) => {
      const id = await open();
      const asSent = await acp(sys.url, key, 'POST', `/checkout_sessions/${id}/complete`, mapped(name));
      expectError(asSent, 400);
      expect(String(asSent.body.param)).toMatch(/^\$\.(payment_data|authentication_result)/);
      const onAccount: Record<string, unknown> = {
        ...mapped(name),
        payment_data: { purchase_order_number: 'PO-EX-1', payment_terms: 'net_30' },
      };
      delete onAccount.authentication_result;
      const done = expectSession(
        await acp(sys.url, key, 'POST', `/checkout_sessions/${id}/complete`, onAccount),
      );
      expect(done.status).toBe('completed');
      if ((examples[name] as { buyer?: unknown }).buyer) expect(done.buyer).toEqual(onAccount.buyer);
    },
  );

  it.each(requests('cancel_'))('cancels a session with %s', async (name) => {
    const id = await open();
    expect(
      expectSession(await acp(sys.url, key, 'POST', `/checkout_sessions/${id}/cancel`, mapped(name))).status,
    ).toBe('canceled');
  });
});

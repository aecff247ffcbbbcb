/**
 * Cases both topologies run (checkout.suite.ts): every request example of the vendored release,
 * replayed with its item ids mapped to catalog SKUs and its fulfilment option ids to this
 * merchant's one option, and hostile bodies, each a clear ACP error with nothing stored. Every
 * response is validated against the bundle.
 */
import { describe, expect, it } from 'vitest';
import { FULFILLMENT_OPTION_ID } from '../../gateway/agent/acp/render.ts';
import { type AcpReply, expectError, expectSession } from './support/acp.ts';
import { acpJson } from './support/examples.ts';

/** One platform's ACP call (a key of its own: refusals count towards its own block). */
export type Call = (
  method: 'GET' | 'POST',
  path: string,
  body?: unknown,
  headers?: Record<string, string | null>,
) => Promise<AcpReply>;

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

export function releaseExamples(platform: () => Promise<Call>): void {
  describe("the release's request examples", () => {
    const open = async (call: Call) =>
      String(
        expectSession(
          await call('POST', '/checkout_sessions', mapped('create_checkout_session_request')),
          201,
        ).id,
      );

    it('finds the request examples it replays', () => {
      expect(requests('create_')).toHaveLength(2);
      expect(requests('update_')).toHaveLength(1);
      expect(requests('complete_')).toHaveLength(5);
      expect(requests('cancel_')).toHaveLength(2);
    });

    it.each(requests('create_'))('creates a session from %s', async (name) => {
      const call = await platform();
      expect(expectSession(await call('POST', '/checkout_sessions', mapped(name)), 201).status).toBe(
        'ready_for_payment',
      );
    });

    it.each(requests('update_'))('updates a session with %s', async (name) => {
      const call = await platform();
      const id = await open(call);
      const s = expectSession(await call('POST', `/checkout_sessions/${id}`, mapped(name)));
      expect(s.selected_fulfillment_options).toEqual([
        { type: 'shipping', option_id: FULFILLMENT_OPTION_ID, item_ids: ['SKU-ABC-000001'] },
      ]);
    });

    it.each(requests('complete_'))(
      'refuses %s as sent (no payment handler here), completes it paid by purchase order',
      async (name) => {
        const call = await platform();
        const id = await open(call);
        const asSent = await call('POST', `/checkout_sessions/${id}/complete`, mapped(name));
        expectError(asSent, 400);
        expect(String(asSent.body.param)).toMatch(/^\$\.(payment_data|authentication_result)/);
        const onAccount: Record<string, unknown> = {
          ...mapped(name),
          payment_data: { purchase_order_number: 'PO-EX-1', payment_terms: 'net_30' },
        };
        delete onAccount.authentication_result;
        const done = expectSession(await call('POST', `/checkout_sessions/${id}/complete`, onAccount));
        expect(done.status).toBe('completed');
        if ((examples[name] as { buyer?: unknown }).buyer) expect(done.buyer).toEqual(onAccount.buyer);
      },
    );

    it.each(requests('cancel_'))('cancels a session with %s', async (name) => {
      const call = await platform();
      const id = await open(call);
      expect(expectSession(await call('POST', `/checkout_sessions/${id}/cancel`, mapped(name))).status).toBe(
        'canceled',
      );
    });
  });
}

const valid = { currency: 'usd', capabilities: {}, line_items: [{ id: 'SKU-ABC-000001', quantity: 1 }] };

const withItems = (items: unknown) => JSON.stringify({ ...valid, line_items: items });
export const HOSTILE_BODIES: [string, () => string, number, string | undefined, string | undefined][] = [
  [
    '10,000 line items',
    () =>
      withItems(Array.from({ length: 10_000 }, (_, i) => ({ id: `SKU-ABC-${String(i).padStart(6, '0')}` }))),
    413,
    'content_too_large',
    undefined,
  ],
  [
    '51 line items',
    () => withItems(Array.from({ length: 51 }, (_, i) => ({ id: `SKU-ABC-${String(i).padStart(6, '0')}` }))),
    400,
    'too_many_items',
    '$.line_items',
  ],
  [
    'quantity 0',
    () => withItems([{ id: 'SKU-ABC-000001', quantity: 0 }]),
    400,
    'invalid',
    '$.line_items[0].quantity',
  ],
  [
    'quantity -1',
    () => withItems([{ id: 'SKU-ABC-000001', quantity: -1 }]),
    400,
    'invalid',
    '$.line_items[0].quantity',
  ],
  [
    'quantity 1.5',
    () => withItems([{ id: 'SKU-ABC-000001', quantity: 1.5 }]),
    400,
    'invalid',
    '$.line_items[0].quantity',
  ],
  [
    'quantity 1e400',
    () => withItems([]).replace('[]', '[{"id":"SKU-ABC-000001","quantity":1e400}]'),
    400,
    'malformed_request',
    undefined,
  ],
  [
    'quantity 1000',
    () => withItems([{ id: 'SKU-ABC-000001', quantity: 1000 }]),
    400,
    'quantity_exceeded',
    '$.line_items[0].quantity',
  ],
  [
    'a duplicate JSON key',
    () =>
      '{"currency":"usd","capabilities":{},"line_items":[{"id":"SKU-ABC-000001","quantity":1,"quantity":900}]}',
    400,
    'malformed_request',
    undefined,
  ],
  ['an unknown field', () => JSON.stringify({ ...valid, surprise: true }), 400, 'invalid', '$.surprise'],
  [
    'a missing currency',
    () => JSON.stringify({ capabilities: {}, line_items: valid.line_items }),
    400,
    'missing',
    '$.currency',
  ],
  [
    'an unsupported currency',
    () => JSON.stringify({ ...valid, currency: 'eur' }),
    400,
    'unsupported_currency',
    '$.currency',
  ],
  ['no line items', () => withItems([]), 400, 'invalid', '$.line_items'],
  ['an array body', () => '[]', 400, 'invalid', '$'],
  ['not JSON', () => '{"currency":', 400, 'malformed_request', undefined],
  [
    'a lone surrogate in a string (I-JSON)',
    () =>
      JSON.stringify({ ...valid, buyer: { first_name: 'x', email: 'a@example.com' } }).replace(
        '"x"',
        '"\\ud800"',
      ),
    400,
    'malformed_request',
    undefined,
  ],
  [
    'a lone surrogate in a member name (I-JSON)',
    () => JSON.stringify(valid).replace('{', '{"a\\udfff":1,'),
    400,
    'malformed_request',
    undefined,
  ],
  ['a body of 10 MB', () => `{"x":"${'a'.repeat(10 * 1024 * 1024)}"}`, 413, 'content_too_large', undefined],
];

/** Each hostile body from a platform of its own: a clear ACP error, and not one session more. */
export function hostileBodies(platform: () => Promise<Call>, sessions: () => Promise<number>): void {
  describe('hostile input: a clear ACP error and nothing stored', () => {
    it.each(HOSTILE_BODIES)('refuses %s', async (_what, body, status, code, param) => {
      const call = await platform();
      const before = await sessions();
      const reply = await call('POST', '/checkout_sessions', body());
      expectError(reply, status, code);
      if (param) expect(reply.body.param).toBe(param);
      expect(await sessions()).toBe(before);
    });

    it('refuses another media type with 415', async () => {
      const call = await platform();
      expectError(
        await call('POST', '/checkout_sessions', JSON.stringify(valid), { 'content-type': 'text/plain' }),
        415,
      );
    });
  });
}

/**
 * The ACP merchant end to end on the embedded system, as a platform that knows only the
 * published specification calls it: discovery, the five operations, idempotency, errors. Every
 * response is validated against the vendored 2026-04-17 bundle (test/acp/support/validate.ts).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startEmbedded, type TestSystem } from '../../harness/system.ts';
import { acp, expectError, expectSession, issueKey, totalOf } from './support/acp.ts';
import { expectAcp } from './support/validate.ts';

let sys: TestSystem;
let key: string;

beforeAll(async () => {
  sys = await startEmbedded();
  key = (await issueKey(sys)).key;
});
afterAll(() => sys?.close());

const create = (body: Record<string, unknown>, headers: Record<string, string | null> = {}) =>
  acp(sys.url, key, 'POST', '/checkout_sessions', { currency: 'usd', capabilities: {}, ...body }, headers);

describe('discovery', () => {
  it('serves /.well-known/acp.json without authentication, valid and cacheable', async () => {
    const res = await fetch(`${sys.url}/.well-known/acp.json`);
    expect(res.status).toBe(200);
    expect(res.headers.get('cache-control')).toBe('public, max-age=3600');
    const doc = (await res.json()) as Record<string, unknown>;
    expectAcp('DiscoveryResponse', doc);
    expect(doc.protocol).toMatchObject({
      name: 'acp',
      version: '2026-04-17',
      supported_versions: ['2026-04-17'],
    });
    expect(String(doc.api_base_url)).toMatch(/\/acp$/);
  });
});

describe('a checkout paid by purchase order', () => {
  it('creates, updates, reads and completes a session whose total is the cart quote', async () => {
    const created = expectSession(
      await create({
        line_items: [{ id: 'SKU-ABC-000001', quantity: 2 }],
        fulfillment_details: {
          name: 'Buyer',
          address: {
            name: 'Buyer',
            line_one: '1 Main St',
            city: 'Springfield',
            state: 'IL',
            country: 'US',
            postal_code: '62701',
          },
        },
      }),
      201,
    );
    expect(created.status).toBe('ready_for_payment');
    expect(created.currency).toBe('usd');
    const id = String(created.id);

    const quote = (await (
      await fetch(`${sys.url}/cart/quote?line=SKU-ABC-000001:2&line=SKU-ELC-000004:3&currency=USD&region=US`)
    ).json()) as { total: number };

    const updated = expectSession(
      await acp(sys.url, key, 'POST', `/checkout_sessions/${id}`, {
        line_items: [
          { id: 'SKU-ABC-000001', quantity: 2 },
          { id: 'SKU-ELC-000004', quantity: 3 },
        ],
      }),
    );
    expect(totalOf(updated)).toBe(Math.round(quote.total * 100));
    expect((updated.line_items as unknown[]).length).toBe(2);

    const read = expectSession(await acp(sys.url, key, 'GET', `/checkout_sessions/${id}`));
    expect(totalOf(read)).toBe(totalOf(updated));

    const done = expectSession(
      await acp(sys.url, key, 'POST', `/checkout_sessions/${id}/complete`, {
        payment_data: { purchase_order_number: 'PO-2026-0001', payment_terms: 'net_30' },
      }),
    );
    expect(done.status).toBe('completed');
    const order = done.order as { id: string; checkout_session_id: string; permalink_url: string };
    expect(order.checkout_session_id).toBe(id);
    expect(order.permalink_url).toMatch(new RegExp(`/api/v2/procurement/orders/${order.id}$`));

    // The order reads back over GraphQL with the session's total and lines.
    const gql = await sys.gql(
      `query ($id: ID!) { purchaseOrder(orderId: $id) { orderId totalDecimal checkoutSessionId lines { sku quantity lineTotalDecimal } } }`,
      { token: await sys.token(['orders:read']), variables: { id: order.id } },
    );
    expect(gql.errors).toBeUndefined();
    const po = (
      gql.data as { purchaseOrder: { totalDecimal: string; checkoutSessionId: string; lines: unknown[] } }
    ).purchaseOrder;
    expect(Math.round(Number(po.totalDecimal) * 100)).toBe(totalOf(done));
    expect(po.checkoutSessionId).toBe(id);
    expect(po.lines).toHaveLength(2);

    // Completed: cancel and complete again are 405.
    expectError(await acp(sys.url, key, 'POST', `/checkout_sessions/${id}/cancel`), 405);
    expectError(
      await acp(sys.url, key, 'POST', `/checkout_sessions/${id}/complete`, {
        payment_data: { purchase_order_number: 'PO-2026-0002' },
      }),
      405,
    );
  });

  it('cancels an open session, then refuses to complete it (405)', async () => {
    const s = expectSession(await create({ line_items: [{ id: 'SKU-ABC-000001' }] }), 201);
    const canceled = expectSession(await acp(sys.url, key, 'POST', `/checkout_sessions/${s.id}/cancel`, {}));
    expect(canceled.status).toBe('canceled');
    expectError(
      await acp(sys.url, key, 'POST', `/checkout_sessions/${s.id}/cancel`),
      405,
      'session_canceled',
    );
    expectError(
      await acp(sys.url, key, 'POST', `/checkout_sessions/${s.id}/complete`, {
        payment_data: { purchase_order_number: 'PO-1' },
      }),
      405,
    );
  });

  it('shows an unknown SKU as an error message with its JSONPath, not ready for payment', async () => {
    const s = expectSession(
      await create({ line_items: [{ id: 'SKU-ABC-000001' }, { id: 'SKU-ZZZ-999999' }] }),
      201,
    );
    expect(s.status).toBe('not_ready_for_payment');
    expect(s.messages).toContainEqual(
      expect.objectContaining({ type: 'error', code: 'not_found', param: '$.line_items[1]' }),
    );
    const refused = await acp(sys.url, key, 'POST', `/checkout_sessions/${s.id}/complete`, {
      payment_data: { purchase_order_number: 'PO-1' },
    });
    expectError(refused, 400, 'session_not_ready');
  });

  it('refuses a payment handler: this merchant takes purchase orders only', async () => {
    const s = expectSession(await create({ line_items: [{ id: 'SKU-ABC-000001' }] }), 201);
    const r = await acp(sys.url, key, 'POST', `/checkout_sessions/${s.id}/complete`, {
      payment_data: {
        handler_id: 'card_tokenized',
        instrument: { type: 'card', credential: { type: 'spt', token: 'spt_1' } },
      },
    });
    expect(expectError(r, 400, 'unsupported_payment_handler').param).toBe('$.payment_data.handler_id');
  });
});

describe('headers', () => {
  it.each([
    ['missing', null, 'missing_api_version'],
    ['unsupported', '2025-09-29', 'unsupported_api_version'],
  ])('answers 400 with supported_versions when API-Version is %s', async (_w, v, code) => {
    const r = await create({ line_items: [{ id: 'SKU-ABC-000001' }] }, { 'api-version': v });
    expect(expectError(r, 400, code).supported_versions).toEqual(['2026-04-17']);
  });

  it('echoes Request-Id', async () => {
    const r = await acp(
      sys.url,
      key,
      'GET',
      '/checkout_sessions/cs_00000000000000000000000000000000',
      undefined,
      {
        'request-id': 'req-123',
      },
    );
    expectError(r, 404, 'not_found');
    expect(r.headers.get('request-id')).toBe('req-123');
  });

  it.each([
    ['no key', undefined],
    ['an unknown key', `acp_ak_${'0'.repeat(24)}_${'A'.repeat(43)}`],
    ['a malformed key', 'not-a-key'],
  ])('answers 401 for %s', async (_w, k) => {
    const r = await acp(sys.url, k, 'POST', '/checkout_sessions', {
      currency: 'usd',
      capabilities: {},
      line_items: [{ id: 'SKU-ABC-000001' }],
    });
    expectError(r, 401, 'invalid_api_key');
  });

  it('answers 403 for a key without orders:create', async () => {
    const readOnly = await issueKey(sys, {
      spiffeId: 'spiffe://example.org/ns/ai/sa/procurement-agent/read-only',
      scopes: ['orders:read'],
    });
    const r = await acp(sys.url, readOnly.key, 'POST', '/checkout_sessions', {
      currency: 'usd',
      capabilities: {},
      line_items: [{ id: 'SKU-ABC-000001' }],
    });
    expectError(r, 403, 'insufficient_scope');
  });
});

describe('idempotency (RFC agentic_checkout §6)', () => {
  const body = { currency: 'usd', capabilities: {}, line_items: [{ id: 'SKU-ABC-000001', quantity: 1 }] };

  it('requires Idempotency-Key on POST', async () => {
    const r = await acp(sys.url, key, 'POST', '/checkout_sessions', body, { 'idempotency-key': null });
    expectError(r, 400, 'idempotency_key_required');
  });

  it('replays the first answer for the same key and an equivalent body', async () => {
    const k = `idem-${Date.now()}`;
    const first = await acp(sys.url, key, 'POST', '/checkout_sessions', body, { 'idempotency-key': k });
    expectSession(first, 201);
    // Another key order and 1.0 for 1: the same request (§6.2).
    const again = await acp(
      sys.url,
      key,
      'POST',
      '/checkout_sessions',
      '{"line_items":[{"quantity":1.0,"id":"SKU-ABC-000001"}],"capabilities":{},"currency":"usd"}',
      { 'idempotency-key': k },
    );
    expect(again.status).toBe(201);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect(again.body).toEqual(first.body);
  });

  it('answers 422 idempotency_conflict for the same key with another body', async () => {
    const k = `idem-conflict-${Date.now()}`;
    expectSession(await acp(sys.url, key, 'POST', '/checkout_sessions', body, { 'idempotency-key': k }), 201);
    const other = { ...body, line_items: [{ id: 'SKU-ABC-000001', quantity: 2 }] };
    expectError(
      await acp(sys.url, key, 'POST', '/checkout_sessions', other, { 'idempotency-key': k }),
      422,
      'idempotency_conflict',
    );
  });

  it('scopes keys to the path: the same key on another endpoint is another request', async () => {
    const k = `idem-path-${Date.now()}`;
    const s = expectSession(
      await acp(sys.url, key, 'POST', '/checkout_sessions', body, { 'idempotency-key': k }),
      201,
    );
    const c = await acp(
      sys.url,
      key,
      'POST',
      `/checkout_sessions/${s.id}/cancel`,
      {},
      { 'idempotency-key': k },
    );
    expect(expectSession(c).status).toBe('canceled');
  });
});

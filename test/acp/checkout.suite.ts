/**
 * The ACP merchant as a platform that knows only the published specification uses it, run
 * against a topology: discovery, the five operations, idempotency, the spend policy and the
 * approval flow. With several gateway replicas, consecutive steps go to different replicas.
 * Every response is validated against the vendored 2026-04-17 bundle.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hostileBodies, releaseExamples } from './cases.ts';
import { acp, expectError, expectSession, type Gql, issueKey, totalOf } from './support/acp.ts';
import { expectAcp } from './support/validate.ts';

export interface AcpSystem extends Gql {
  /** Base URLs of the gateway replicas (one when embedded). */
  readonly urls: readonly string[];
  /** How many checkout sessions are stored (the shared SQL store). */
  sessions(): Promise<number>;
  close(): Promise<void>;
}

const SET = 'mutation($input: SpendPolicyInput!) { setSpendPolicy(input: $input) { subject } }';
const APPROVE = 'mutation($id: ID!) { approvePurchaseOrder(orderId: $id) { orderId status } }';
const REJECT =
  'mutation($id: ID!, $reason: String!) { rejectPurchaseOrder(orderId: $id, reason: $reason) { orderId status } }';
/** A buyer's fulfilment details: a US address, so the session prices in region US. */
const FULFILLMENT_DETAILS = {
  name: 'Buyer',
  address: {
    name: 'Buyer',
    line_one: '1 Main St',
    city: 'Springfield',
    state: 'IL',
    country: 'US',
    postal_code: '62701',
  },
};

const ORDER = `query ($id: ID!) { purchaseOrder(orderId: $id) {
  orderId status totalDecimal checkoutSessionId lines { sku quantity unitPriceDecimal discountDecimal lineTotalDecimal } } }`;

export function acpCheckoutSuite(label: string, start: () => Promise<AcpSystem>): void {
  describe(`ACP checkout (${label})`, () => {
    let sys: AcpSystem;
    let step = 0;
    let platforms = 0;
    /** The next replica: consecutive calls of a flow land on different gateways. */
    const url = () => sys.urls[step++ % sys.urls.length] as string;

    beforeAll(async () => {
      sys = await start();
    }, 240_000);
    afterAll(() => sys?.close());

    /** A platform of its own (its own agent identity: its own budget, block and bucket). */
    async function platform(policy?: Record<string, string>) {
      const spiffeId = `spiffe://example.org/ns/ai/sa/procurement-agent/acp-${label}-${++platforms}`;
      if (policy) {
        const r = await sys.gql(SET, {
          token: await sys.token(['spend:admin']),
          variables: { input: { subject: spiffeId, currency: 'USD', period: 'DAY', ...policy } },
        });
        expect(r.errors).toBeUndefined();
      }
      const { key } = await issueKey(sys, { spiffeId });
      const call = (
        method: 'GET' | 'POST',
        path: string,
        body?: unknown,
        headers?: Record<string, string | null>,
      ) => acp(url(), key, method, path, body, headers);
      const open = async (items: unknown[] = [{ id: 'SKU-ABC-000001', quantity: 1 }]) =>
        expectSession(
          await call('POST', '/checkout_sessions', { currency: 'usd', capabilities: {}, line_items: items }),
          201,
        );
      const complete = (id: unknown, po = `PO-${id}`) =>
        call('POST', `/checkout_sessions/${id}/complete`, {
          payment_data: { purchase_order_number: po, payment_terms: 'net_30' },
        });
      return { spiffeId, call, open, complete };
    }

    releaseExamples(async () => (await platform()).call);
    hostileBodies(
      async () => (await platform()).call,
      () => sys.sessions(),
    );

    it('serves /.well-known/acp.json without authentication, valid and cacheable', async () => {
      const res = await fetch(`${url()}/.well-known/acp.json`);
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
      expect(doc.transports).toEqual(['rest', 'mcp']);
    });

    it('creates, updates, reads and completes a session; the order reads back with the same total', async () => {
      const p = await platform();
      const created = expectSession(
        await p.call('POST', '/checkout_sessions', {
          currency: 'usd',
          capabilities: {},
          line_items: [{ id: 'SKU-ABC-000001', quantity: 2 }],
          fulfillment_details: FULFILLMENT_DETAILS,
        }),
        201,
      );
      expect(created.status).toBe('ready_for_payment');
      expect(created.currency).toBe('usd');
      const id = String(created.id);

      const updated = expectSession(
        await p.call('POST', `/checkout_sessions/${id}`, {
          line_items: [
            { id: 'SKU-ABC-000001', quantity: 2 },
            { id: 'SKU-ELC-000004', quantity: 3 },
          ],
        }),
      );
      const quote = (await (
        await fetch(`${url()}/cart/quote?line=SKU-ABC-000001:2&line=SKU-ELC-000004:3&currency=USD&region=US`)
      ).json()) as { total: number };
      expect(totalOf(updated)).toBe(Math.round(quote.total * 100));
      expect((updated.line_items as unknown[]).length).toBe(2);

      const read = expectSession(await p.call('GET', `/checkout_sessions/${id}`));
      expect(read.line_items).toEqual(updated.line_items);

      const done = expectSession(await p.complete(id, 'PO-2026-0001'));
      expect(done.status).toBe('completed');
      const order = done.order as {
        id: string;
        checkout_session_id: string;
        permalink_url: string;
        client_reference_id: string;
      };
      expect(order.checkout_session_id).toBe(id);
      expect(order.client_reference_id).toBe('PO-2026-0001');
      expect(order.permalink_url).toMatch(new RegExp(`/acp/checkout_sessions/${id}$`));
      // The permalink is where the platform reads its order back, with its own key.
      const back = expectSession(
        await p.call('GET', new URL(order.permalink_url).pathname.replace(/^\/acp/, '')),
      );
      expect(back.order).toEqual(done.order);

      // The order over GraphQL: the session's lines and total, to the cent.
      const gql = await sys.gql(ORDER, {
        token: await sys.token(['orders:read']),
        variables: { id: order.id },
      });
      expect(gql.errors).toBeUndefined();
      const po = (
        gql.data as {
          purchaseOrder: {
            totalDecimal: string;
            checkoutSessionId: string;
            lines: { lineTotalDecimal: string }[];
          };
        }
      ).purchaseOrder;
      expect(Math.round(Number(po.totalDecimal) * 100)).toBe(totalOf(done));
      expect(po.checkoutSessionId).toBe(id);
      expect(po.lines.map((l) => Math.round(Number(l.lineTotalDecimal) * 100))).toEqual(
        (done.line_items as { totals: { type: string; amount: number }[] }[]).map(
          (l) => l.totals.find((t) => t.type === 'total')?.amount,
        ),
      );

      // The order over the agent order API, as the key's identity reads it (a trusted proxy's header).
      const v2 = await fetch(`${url()}/api/v2/procurement/orders/${order.id}`, {
        headers: { 'x-spiffe-id': p.spiffeId },
      });
      expect(v2.status).toBe(200);
      expect(
        Math.round(Number(((await v2.json()) as { allocated_budget: number }).allocated_budget) * 100),
      ).toBe(totalOf(done));

      // Completed: cancel and complete again are 405.
      expectError(await p.call('POST', `/checkout_sessions/${id}/cancel`), 405, 'session_completed');
      expectError(await p.complete(id, 'PO-2026-0002'), 405, 'session_completed');
    });

    it('takes an item on two lines, priced as the cart quote of the item once, and orders both lines (issue 50)', async () => {
      const p = await platform();
      const created = expectSession(
        await p.call('POST', '/checkout_sessions', {
          currency: 'usd',
          capabilities: {},
          line_items: [
            { id: 'SKU-ABC-000001', quantity: 1 },
            { id: 'SKU-ELC-000004', quantity: 3 },
            { id: 'SKU-ABC-000001', quantity: 2 },
          ],
          fulfillment_details: FULFILLMENT_DETAILS,
        }),
        201,
      );
      const quote = (await (
        await fetch(`${url()}/cart/quote?line=SKU-ABC-000001:3&line=SKU-ELC-000004:3&currency=USD&region=US`)
      ).json()) as { total: number; lines: { sku: string; unitPrice: number }[] };
      expect(totalOf(created)).toBe(Math.round(quote.total * 100));
      const lines = created.line_items as { id: string; item: { id: string; quantity: number } }[];
      expect(lines.map((l) => l.item.id)).toEqual(['SKU-ABC-000001', 'SKU-ELC-000004', 'SKU-ABC-000001']);
      expect(new Set(lines.map((l) => l.id)).size).toBe(3);
      const done = expectSession(await p.complete(created.id, 'PO-REPEAT-1'));
      expect(done.status).toBe('completed');
      const gql = await sys.gql(ORDER, {
        token: await sys.token(['orders:read']),
        variables: { id: (done.order as { id: string }).id },
      });
      expect(gql.errors).toBeUndefined();
      const po = (gql.data as { purchaseOrder: { lines: { sku: string; quantity: number }[] } })
        .purchaseOrder;
      expect(po.lines.map((l) => [l.sku, l.quantity])).toEqual([
        ['SKU-ABC-000001', 1],
        ['SKU-ELC-000004', 3],
        ['SKU-ABC-000001', 2],
      ]);
    });

    it('cancels an open session, then refuses to cancel or complete it (405)', async () => {
      const p = await platform();
      const s = await p.open();
      expect(expectSession(await p.call('POST', `/checkout_sessions/${s.id}/cancel`, {})).status).toBe(
        'canceled',
      );
      expectError(await p.call('POST', `/checkout_sessions/${s.id}/cancel`), 405, 'session_canceled');
      expectError(await p.complete(s.id), 405, 'session_canceled');
    });

    it('shows an unknown SKU as an error message with its JSONPath; the session cannot be completed', async () => {
      const p = await platform();
      const s = await p.open([{ id: 'SKU-ABC-000001' }, { id: 'SKU-ZZZ-999999' }]);
      expect(s.status).toBe('not_ready_for_payment');
      expect(s.messages).toContainEqual(
        expect.objectContaining({ type: 'error', code: 'not_found', param: '$.line_items[1]' }),
      );
      const refused = expectError(await p.complete(s.id), 400, 'session_not_ready');
      expect(refused.param).toBe('$.line_items[1]');
    });

    it('shows a line over its stock as out_of_stock at its JSONPath (SKU-TOL-000010 has none); not completed until it goes', async () => {
      const p = await platform();
      const s = await p.open([
        { id: 'SKU-ABC-000001', quantity: 1 },
        { id: 'SKU-TOL-000010', quantity: 1 },
      ]);
      expect(s.status).toBe('not_ready_for_payment');
      // Errors only: a loaded machine may add info messages (fallback prices).
      const errors = (x: Record<string, unknown>) =>
        (x.messages as { type: string }[]).filter((m) => m.type === 'error');
      expect(errors(s)).toEqual([
        expect.objectContaining({ type: 'error', code: 'out_of_stock', param: '$.line_items[1]' }),
      ]);
      // Priced all the same: the session's total is the lines'.
      expect(totalOf(s)).toBe(
        (s.line_items as { totals: { type: string; amount: number }[] }[])
          .map((l) => l.totals.find((t) => t.type === 'total')?.amount ?? 0)
          .reduce((a, b) => a + b, 0),
      );
      const refused = expectError(await p.complete(s.id), 400, 'session_not_ready');
      expect(refused.param).toBe('$.line_items[1]');
      // Over the stock of an item that has some (SKU-ABC-000001: 50) is out of stock too.
      const over = expectSession(
        await p.call('POST', `/checkout_sessions/${s.id}`, {
          line_items: [{ id: 'SKU-ABC-000001', quantity: 51 }],
        }),
      );
      expect(over.status).toBe('not_ready_for_payment');
      expect(errors(over)).toEqual([
        expect.objectContaining({ code: 'out_of_stock', param: '$.line_items[0]' }),
      ]);
      const fixed = expectSession(
        await p.call('POST', `/checkout_sessions/${s.id}`, {
          line_items: [{ id: 'SKU-ABC-000001', quantity: 50 }],
        }),
      );
      expect(fixed.status).toBe('ready_for_payment');
      expect(expectSession(await p.complete(s.id)).status).toBe('completed');
    });

    it('refuses a payment handler: this merchant takes purchase orders only', async () => {
      const p = await platform();
      const s = await p.open();
      const r = await p.call('POST', `/checkout_sessions/${s.id}/complete`, {
        payment_data: {
          handler_id: 'card_tokenized',
          instrument: { type: 'card', credential: { type: 'spt', token: 'spt_1' } },
        },
      });
      expect(expectError(r, 400, 'unsupported_payment_handler').param).toBe('$.payment_data.handler_id');
    });

    describe('idempotency (RFC agentic_checkout §6)', () => {
      const body = { currency: 'usd', capabilities: {}, line_items: [{ id: 'SKU-ABC-000001', quantity: 1 }] };

      it('requires Idempotency-Key on POST (400)', async () => {
        const p = await platform();
        expectError(
          await p.call('POST', '/checkout_sessions', body, { 'idempotency-key': null }),
          400,
          'idempotency_key_required',
        );
      });

      it('replays the first answer for the same key and an equivalent body, on any replica', async () => {
        const p = await platform();
        const k = `idem-${label}-${Date.now()}`;
        const first = await p.call('POST', '/checkout_sessions', body, { 'idempotency-key': k });
        expectSession(first, 201);
        // Keys in another order and 1.0 for 1: the same request (§6.2).
        const again = await p.call(
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
        const p = await platform();
        const k = `idem-conflict-${label}-${Date.now()}`;
        expectSession(await p.call('POST', '/checkout_sessions', body, { 'idempotency-key': k }), 201);
        const other = { ...body, line_items: [{ id: 'SKU-ABC-000001', quantity: 2 }] };
        expectError(
          await p.call('POST', '/checkout_sessions', other, { 'idempotency-key': k }),
          422,
          'idempotency_conflict',
        );
      });

      // Whether one of them lands while the first is in flight is up to the scheduler: what must
      // hold is that exactly one runs, and that an in-flight answer is 409 with Retry-After (the
      // store's contract tests the in-flight state itself, test/procurement/agent-state.contract.ts).
      it('runs one of six concurrent requests with the same key; the others replay it or get 409 with Retry-After', async () => {
        const p = await platform();
        const k = `idem-flight-${label}-${Date.now()}`;
        const many = await Promise.all(
          Array.from({ length: 6 }, () =>
            p.call('POST', '/checkout_sessions', body, { 'idempotency-key': k }),
          ),
        );
        const statuses = many.map((r) => r.status).sort();
        // One created it; the others were either in flight (409) or came after (a 201 replay).
        expect(
          many.filter((r) => r.status === 201 && r.headers.get('idempotent-replayed') !== 'true'),
        ).toHaveLength(1);
        expect(statuses.every((s) => s === 201 || s === 409)).toBe(true);
        for (const r of many.filter((x) => x.status === 409)) {
          expectError(r, 409, 'idempotency_in_flight');
          expect(r.headers.get('retry-after')).toBe('1');
        }
      });

      it('scopes keys to the path: the same key on another endpoint is another request', async () => {
        const p = await platform();
        const k = `idem-path-${label}-${Date.now()}`;
        const s = expectSession(
          await p.call('POST', '/checkout_sessions', body, { 'idempotency-key': k }),
          201,
        );
        const c = await p.call('POST', `/checkout_sessions/${s.id}/cancel`, {}, { 'idempotency-key': k });
        expect(expectSession(c).status).toBe('canceled');
      });
    });

    describe('promotion redemptions', () => {
      // WELCOME10 (the seeded sample rule): 10 % off a cart of 20 or more, once per customer.
      const withCode = [{ id: 'SKU-ABC-000001', quantity: 3 }];
      const openWith = async (p: Awaited<ReturnType<typeof platform>>) =>
        expectSession(
          await p.call('POST', '/checkout_sessions', {
            currency: 'usd',
            capabilities: { extensions: ['discount'] },
            line_items: withCode,
            discounts: { codes: ['WELCOME10'] },
          }),
          201,
        );
      const applied = (s: Record<string, unknown>) =>
        ((s.discounts as { applied?: { code?: string }[] } | undefined)?.applied ?? []).some(
          (a) => a.code === 'WELCOME10',
        );

      it('records them at completion: the same agent cannot use a once-per-customer code again', async () => {
        const p = await platform();
        const first = await openWith(p);
        expect(applied(first)).toBe(true);
        expect(expectSession(await p.complete(first.id)).status).toBe('completed');
        const second = await openWith(p);
        expect(applied(second)).toBe(false);
        expect((second.discounts as { rejected: { code: string; reason: string }[] }).rejected).toEqual([
          expect.objectContaining({ code: 'WELCOME10', reason: 'discount_code_usage_limit_reached' }),
        ]);
      });

      it('re-prices a session whose promotion ran out since its quote, and completes it at the new total', async () => {
        const p = await platform();
        const a = await openWith(p);
        const b = await openWith(p);
        expect(applied(a) && applied(b)).toBe(true);
        expect(expectSession(await p.complete(a.id)).status).toBe('completed');
        const refused = expectSession(await p.complete(b.id));
        expect(refused.status).toBe('not_ready_for_payment');
        expect(applied(refused)).toBe(false);
        expect(totalOf(refused)).toBeGreaterThan(totalOf(b) as number);
        expect(JSON.stringify(refused.messages)).toContain('redemption limit');
        const done = expectSession(await p.complete(b.id));
        expect(done.status).toBe('completed');
        expect(totalOf(done)).toBe(totalOf(refused));
      });

      it('gives them back when the order is cancelled', async () => {
        const p = await platform({ budget: '100000.00', approvalAbove: '0.01' });
        const first = await openWith(p);
        expect(expectSession(await p.complete(first.id)).status).toBe('pending_approval');
        expect(applied(await openWith(p))).toBe(false);
        expect(expectSession(await p.call('POST', `/checkout_sessions/${first.id}/cancel`, {})).status).toBe(
          'canceled',
        );
        // The release follows the OrderCancelled event (in the promotions process when distributed).
        let again: Record<string, unknown> = {};
        for (let i = 0; i < 50 && !applied(again); i++) {
          if (i > 0) await new Promise((r) => setTimeout(r, 100));
          again = await openWith(p);
        }
        expect(applied(again)).toBe(true);
      });
    });

    describe('spend policy and approval', () => {
      it('completes exactly as many of ten concurrent sessions as the budget covers, never more', async () => {
        const probe = await platform();
        const unit = totalOf(await probe.open()) as number;
        // Room for three sessions of one unit and a half, not four.
        const p = await platform({ budget: ((unit * 3 + Math.floor(unit / 2)) / 100).toFixed(2) });
        const sessions = await Promise.all(Array.from({ length: 10 }, () => p.open()));
        const bodies = (await Promise.all(sessions.map((s) => p.complete(s.id)))).map((r) =>
          expectSession(r),
        );
        expect(bodies.filter((b) => b.status === 'completed')).toHaveLength(3);
        const refused = bodies.filter((b) => b.status !== 'completed');
        expect(refused).toHaveLength(7);
        for (const b of refused) {
          expect(b.status).toBe('not_ready_for_payment');
          expect(b.messages).toContainEqual(
            expect.objectContaining({ type: 'error', code: 'maximum_exceeded' }),
          );
        }
      });

      it('holds a session above approvalAbove as pending_approval; approved, it is completed', async () => {
        const p = await platform({ budget: '100000.00', approvalAbove: '0.01' });
        const s = await p.open();
        const pending = expectSession(await p.complete(s.id));
        expect(pending.status).toBe('pending_approval');
        const order = pending.order as { id: string; status: string };
        expect(order.status).toBe('manual_review');
        const r = await sys.gql(APPROVE, {
          token: await sys.token(['orders:approve'], 'alice'),
          variables: { id: order.id },
        });
        expect(r.errors).toBeUndefined();
        const after = expectSession(await p.call('GET', `/checkout_sessions/${s.id}`));
        expect(after.status).toBe('completed');
        expect((after.order as { status: string }).status).toBe('confirmed');
      });

      it('cancels a pending session whose order an operator rejects, naming the decision', async () => {
        const p = await platform({ budget: '100000.00', approvalAbove: '0.01' });
        const s = await p.open();
        const orderId = (expectSession(await p.complete(s.id)).order as { id: string }).id;
        const r = await sys.gql(REJECT, {
          token: await sys.token(['orders:approve'], 'bob'),
          variables: { id: orderId, reason: 'not this quarter' },
        });
        expect(r.errors).toBeUndefined();
        const after = expectSession(await p.call('GET', `/checkout_sessions/${s.id}`));
        expect(after.status).toBe('canceled');
        expect(JSON.stringify(after.messages)).toContain('not this quarter');
      });

      it('lets the agent withdraw a pending session: its order is cancelled with it', async () => {
        const p = await platform({ budget: '100000.00', approvalAbove: '0.01' });
        const s = await p.open();
        const orderId = (expectSession(await p.complete(s.id)).order as { id: string }).id;
        expect(expectSession(await p.call('POST', `/checkout_sessions/${s.id}/cancel`, {})).status).toBe(
          'canceled',
        );
        const gql = await sys.gql(ORDER, {
          token: await sys.token(['orders:read']),
          variables: { id: orderId },
        });
        expect((gql.data as { purchaseOrder: { status: string } }).purchaseOrder.status).toBe('CANCELLED');
      });
    });
  });
}

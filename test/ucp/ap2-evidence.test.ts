/**
 * AP2 evidence and bindings (docs/ap2.md): the mandate and our signature kept with the order
 * (GET …/orders/{id}/authorization), named by the completion's audit entry, and the whole chain
 * checked offline from public keys, joined to the operators' signed approval when the order
 * waited (the approved amount is the confirmed total); the same flow over the MCP binding with
 * the MCP SDK's client.
 * The test plays the platform (support/ap2.ts).
 */
import { createHash, generateKeyPairSync, randomUUID } from 'node:crypto';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { type CallToolResult, McpError } from '@modelcontextprotocol/sdk/types.js';
import { digest } from '@sd-jwt/crypto-nodejs';
import { SDJwtVcInstance } from '@sd-jwt/sd-jwt-vc';
import type { JSONWebKeySet, JWK } from 'jose';
import { describe, expect, it } from 'vitest';
import { verifyAuthorizedOrder } from '../../gateway/agent/order/authorization-verify.ts';
import { purchaseOrderPayment } from '../../harness/ucp-platform.ts';
import { signApprovalRecord } from '../../lib/ap2/approval-record.ts';
import { orderIdOfSession } from '../../subgraphs/procurement/checkout/session.ts';
import { issueKey } from '../acp/support/acp.ts';
import { expectCheckout, FIXTURE } from './checkout.suite.ts';
import { ap2Platform, ap2World, auditOf, type Checkout, KID, verifyBusiness } from './support/ap2.ts';
import { makeMandate } from './support/mandate.ts';
import { publicJwk } from './support/sign.ts';

const w = ap2World();

describe('AP2 evidence with the order, and over MCP', () => {
  it('keeps the evidence with the order: GET …/authorization, named by the completion’s audit entry', async () => {
    const p = await ap2Platform(w);
    const c = await p.ready();
    const m = await p.mandate(c);
    const read2 = expectCheckout(await p.call('GET', `/checkout-sessions/${c.id}`));
    // Read again unchanged, the checkout keeps the signature it was sent with (not signed again).
    expect((read2.ap2 as { merchant_authorization: string }).merchant_authorization).toBe(
      (c.ap2 as { merchant_authorization: string }).merchant_authorization,
    );
    const done = expectCheckout(await p.complete(c.id, { checkout_mandate: m }));
    const orderId = (done.order as { id: string }).id;
    const evidence = async (spiffe: string) => {
      const res = await fetch(`${w.sys.url}/api/v2/procurement/orders/${orderId}/authorization`, {
        headers: { 'x-spiffe-id': spiffe },
      });
      return { status: res.status, body: (await res.json()) as Record<string, unknown> };
    };
    const mine = await evidence(p.spiffeId);
    expect(mine.status).toBe(200);
    const sha = createHash('sha256').update(m).digest('base64url');
    expect(mine.body).toMatchObject({
      order_id: orderId,
      checkout_session_id: c.id,
      authorization: {
        type: 'ap2_checkout_mandate',
        checkout_mandate: m,
        mandate_sha256: sha,
        merchant_authorization: (c.ap2 as { merchant_authorization: string }).merchant_authorization,
        platform_profile: w.profileUrl,
        platform_kid: KID,
      },
    });
    // Operators read the same evidence over GraphQL (orders:read), with the order.
    const op = await w.sys.gql(
      `query($id: ID!) { purchaseOrder(orderId: $id) { orderId authorization {
         type checkoutMandate mandateSha256 merchantAuthorization merchantKid platformProfile platformKid verifiedAt } } }`,
      { token: await w.sys.token(['orders:read']), variables: { id: orderId } },
    );
    expect(op.errors).toBeUndefined();
    const wire = mine.body.authorization as Record<string, string>;
    expect((op.data as { purchaseOrder: { authorization: unknown } }).purchaseOrder.authorization).toEqual({
      type: wire.type,
      checkoutMandate: wire.checkout_mandate,
      mandateSha256: wire.mandate_sha256,
      merchantAuthorization: wire.merchant_authorization,
      merchantKid: wire.merchant_kid,
      platformProfile: wire.platform_profile,
      platformKid: wire.platform_kid,
      verifiedAt: wire.verified_at,
    });
    // From the evidence alone: the checkout the user confirmed, and the business's signature on it.
    const claims = (await new SDJwtVcInstance({ hasher: digest }).getClaims(m)) as { checkout: Checkout };
    expect(claims.checkout.id).toBe(c.id);
    expect(await verifyBusiness(w, claims.checkout)).toBe(true);
    const rows = await auditOf(w, p.spiffeId, '/complete', 1);
    expect(rows.at(-1)?.reason).toContain(`ap2: mandate sha-256 ${sha}`);
    // The whole chain offline, from public keys only: mandate → platform key → merchant
    // signature → order → audit inclusion → signed tree head.
    const get = async (path: string) =>
      (await (
        await fetch(`${w.sys.url}${path}`, { headers: { 'x-spiffe-id': p.spiffeId } })
      ).json()) as unknown;
    const chain = {
      proof: await get(`/api/v2/procurement/orders/${orderId}/audit-proof`),
      auditKeys: (await get('/.well-known/audit-keys.json')) as JSONWebKeySet,
      evidence: mine.body,
      platformKeys: [publicJwk(w.platformKey, KID, 'ES256') as JWK],
      businessKeys: w.businessKeys,
    };
    const verdict = await verifyAuthorizedOrder(chain);
    expect(verdict.ok, JSON.stringify(verdict)).toBe(true);
    const auth = mine.body.authorization as Record<string, unknown>;
    const bent: [string, Partial<typeof chain>][] = [
      ['another platform key', { platformKeys: [publicJwk(w.otherKey, KID, 'ES256') as JWK] }],
      [
        'another business key',
        { businessKeys: [{ ...(publicJwk(w.otherKey, String(w.businessKeys[0]?.kid), 'ES256') as JWK) }] },
      ],
      ['another order id', { evidence: { ...mine.body, order_id: `ord_${'0'.repeat(32)}` } }],
      [
        'an edited mandate hash',
        {
          evidence: {
            ...mine.body,
            authorization: { ...auth, mandate_sha256: sha.replace(/^./, sha[0] === 'A' ? 'B' : 'A') },
          },
        },
      ],
      [
        // Ours too, valid, but over the completed checkout, not the one the user confirmed.
        'another merchant authorization',
        {
          evidence: {
            ...mine.body,
            authorization: {
              ...auth,
              merchant_authorization: (done.ap2 as { merchant_authorization: string }).merchant_authorization,
            },
          },
        },
      ],
    ];
    for (const [what, change] of bent)
      expect((await verifyAuthorizedOrder({ ...chain, ...change })).ok, what).toBe(false);
    // Another identity's order is the same 404 as an unknown one.
    const other = await ap2Platform(w);
    expect((await evidence(other.spiffeId)).status).toBe(404);
    // An order completed without AP2 has none.
    const plain = await ap2Platform(w, () => w.plainProfileUrl);
    const q = await plain.ready();
    const placed = expectCheckout(await plain.complete(q.id));
    const none = await fetch(
      `${w.sys.url}/api/v2/procurement/orders/${(placed.order as { id: string }).id}/authorization`,
      { headers: { 'x-spiffe-id': plain.spiffeId } },
    );
    expect(((await none.json()) as { authorization: unknown }).authorization).toBeNull();
  });

  it('joins the operators’ signed approval to the mandate: the approved amount is the confirmed total', async () => {
    const p = await ap2Platform(w);
    const policy = await w.sys.gql(
      'mutation($p: SpendPolicyInput!) { setSpendPolicy(input: $p) { subject } }',
      {
        token: await w.sys.token(['spend:admin']),
        variables: {
          p: {
            subject: p.spiffeId,
            currency: 'USD',
            period: 'DAY',
            budget: '100000.00',
            approvalAbove: '0.01',
          },
        },
      },
    );
    expect(policy.errors).toBeUndefined();
    const c = await p.ready();
    const waiting = expectCheckout(await p.complete(c.id, { checkout_mandate: await p.mandate(c) }));
    expect(waiting.status).toBe('requires_escalation');
    const orderId = orderIdOfSession(c.id);
    const approved = await w.sys.gql('mutation($id: ID!) { approvePurchaseOrder(orderId: $id) { status } }', {
      token: await w.sys.token(['orders:approve'], 'dana'),
      variables: { id: orderId },
    });
    expect(approved.errors).toBeUndefined();
    const get = async (path: string) =>
      (await (
        await fetch(`${w.sys.url}${path}`, { headers: { 'x-spiffe-id': p.spiffeId } })
      ).json()) as Record<string, unknown>;
    const evidence = await get(`/api/v2/procurement/orders/${orderId}/authorization`);
    const approval = evidence.approval as { type: string; audit_reason: string; record: string };
    expect(approval.type).toBe('signed_approval_record');
    let proof: Record<string, unknown> = {};
    for (let i = 0; i < 100; i++) {
      proof = await get(`/api/v2/procurement/orders/${orderId}/audit-proof`);
      if ((proof.entries as { reason: string }[]).some((e) => e.reason.includes(approval.audit_reason)))
        break;
      await new Promise((r) => setTimeout(r, 50));
    }
    const chain = {
      proof,
      auditKeys: (await get('/.well-known/audit-keys.json')) as unknown as JSONWebKeySet,
      evidence,
      platformKeys: [publicJwk(w.platformKey, KID, 'ES256') as JWK],
      businessKeys: w.businessKeys,
    };
    const verdict = await verifyAuthorizedOrder(chain);
    expect(verdict.ok, JSON.stringify(verdict)).toBe(true);
    const total = (c.totals as { type: string; amount: number }[]).find((t) => t.type === 'total')?.amount;
    expect(verdict.ok && verdict.approval?.record.amount).toBe(((total ?? 0) / 100).toFixed(2));
    // A record of this order, validly signed, for another amount than the user confirmed: refused.
    const signer = generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey;
    const record = JSON.parse(Buffer.from(approval.record.split('.')[1] ?? '', 'base64url').toString('utf8'));
    const cheaper = await signApprovalRecord(
      { ...record, amount: '0.02' },
      { kid: 'another-business-key', key: signer },
    );
    const mismatch = await verifyAuthorizedOrder({
      ...chain,
      businessKeys: [...w.businessKeys, publicJwk(signer, 'another-business-key', 'ES256') as JWK],
      evidence: { ...evidence, approval: { ...approval, record: cheaper.jws } },
    });
    expect(mismatch).toEqual({
      ok: false,
      problem: `approval: the approved amount 0.02 is not the total of the checkout the user confirmed (${total} minor units)`,
    });
    // Another order's signed approval (the same business key, another amount) does not join.
    const other = await ap2Platform(w);
    await w.sys.gql('mutation($p: SpendPolicyInput!) { setSpendPolicy(input: $p) { subject } }', {
      token: await w.sys.token(['spend:admin']),
      variables: {
        p: {
          subject: other.spiffeId,
          currency: 'USD',
          period: 'DAY',
          budget: '100000.00',
          approvalAbove: '0.01',
        },
      },
    });
    const placed = await fetch(`${w.sys.url}/api/v2/procurement/orders`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-spiffe-id': other.spiffeId },
      body: JSON.stringify({
        agent_id: 'agent-0000001',
        sku: 'SKU-ABC-000001',
        quantity: 1,
        max_budget_usd: 1.5,
      }),
    });
    expect(placed.status).toBe(202);
    const otherId = ((await placed.json()) as { order_id: string }).order_id;
    await w.sys.gql('mutation($id: ID!) { approvePurchaseOrder(orderId: $id) { status } }', {
      token: await w.sys.token(['orders:approve'], 'dana'),
      variables: { id: otherId },
    });
    const otherEvidence = (await (
      await fetch(`${w.sys.url}/api/v2/procurement/orders/${otherId}/authorization`, {
        headers: { 'x-spiffe-id': other.spiffeId },
      })
    ).json()) as { approval: { record: string } };
    const swapped = await verifyAuthorizedOrder({
      ...chain,
      evidence: { ...evidence, approval: { ...approval, record: otherEvidence.approval.record } },
    });
    expect(swapped).toEqual({
      ok: false,
      problem: `approval: the approval record is of order ${otherId}, not ${orderId}`,
    });
  });

  it('works the same over the MCP binding: signed checkouts, the mandate in checkout.ap2', async () => {
    const spiffeId = `spiffe://example.org/ns/ai/sa/procurement-agent/ucp-ap2-mcp-${process.pid}`;
    const { key } = await issueKey(w.sys, { spiffeId, ucpProfile: w.profiles.origin });
    const client = new Client({ name: 'ap2-platform', version: '1.0.0' });
    await client.connect(
      new StreamableHTTPClientTransport(new URL(`${w.sys.url}/mcp`), {
        requestInit: {
          headers: { authorization: `Bearer ${key}`, 'ucp-agent': `profile="${w.profileUrl}"` },
        },
      }),
    );
    try {
      const meta = (write = false) => ({
        'ucp-agent': { profile: w.profileUrl },
        ...(write ? { 'idempotency-key': randomUUID() } : {}),
      });
      const tool = async (name: string, args: Record<string, unknown>) => {
        const r = (await client.callTool({ name, arguments: args })) as CallToolResult;
        expect(r.isError).toBeFalsy();
        return r.structuredContent as Checkout;
      };
      const c = await tool('create_checkout', {
        meta: meta(),
        checkout: {
          line_items: [{ item: { id: FIXTURE.itemA }, quantity: 1 }],
          fulfillment: { methods: [{ type: 'shipping', destinations: [FIXTURE.address] }] },
        },
      });
      const u = await tool('update_checkout', {
        meta: meta(),
        id: c.id,
        checkout: {
          line_items: [{ item: { id: FIXTURE.itemA }, quantity: 1 }],
          fulfillment: {
            methods: [
              {
                line_item_ids: ['li_0'],
                groups: [{ id: 'group_1', selected_option_id: 'procurement_delivery' }],
              },
            ],
          },
        },
      });
      expect(await verifyBusiness(w, u)).toBe(true);
      const payment = purchaseOrderPayment('PO-AP2-MCP');
      const refused = await client
        .callTool({
          name: 'complete_checkout',
          arguments: { meta: meta(true), id: c.id, checkout: { payment } },
        })
        .then(
          () => undefined,
          (e: unknown) => e,
        );
      expect(refused).toBeInstanceOf(McpError);
      expect((refused as McpError & { data?: { code?: string } }).data?.code).toBe('mandate_required');
      const m = await makeMandate(u, {
        key: w.platformKey,
        kid: KID,
        holder: w.holder,
        audience: w.audience,
      });
      const done = await tool('complete_checkout', {
        meta: meta(true),
        id: c.id,
        checkout: { payment, ap2: { checkout_mandate: m } },
      });
      expect(done.status).toBe('completed');
      expect(await verifyBusiness(w, done)).toBe(true);
    } finally {
      await client.close();
    }
  });
});

/**
 * Carts on the distributed topology: two gateway replicas on PostgreSQL (consecutive calls
 * alternate between them), the procurement subgraph in its own process. A cart made on one
 * replica is read, replaced, converted and canceled on the other, under both protocols; the
 * operators' GraphQL `carts` (the procurement process) lists what the gateways wrote.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { acpCartValidator } from '../../gateway/agent/acp/schema/index.ts';
import { sharedDistributed } from '../../harness/distributed.ts';
import {
  type ProfileServer,
  platformProfile,
  startProfileServer,
  totalsOf,
  ucpCall,
} from '../../harness/ucp-platform.ts';
import { acp, issueKey } from '../acp/support/acp.ts';
import { expectUcp } from '../ucp/support/validate.ts';

const distributed = sharedDistributed({ label: 'carts', env: { UCP_PROFILE_ALLOW_INSECURE: 'true' } });
afterAll(distributed.close, 60_000);

let profiles: ProfileServer;
let profileUrl: string;
let gateways: readonly string[] = [];
let step = 0;
const url = () => gateways[step++ % gateways.length] as string;
const A = 'SKU-ABC-000001';

beforeAll(async () => {
  gateways = (await distributed.get()).gateways;
  profiles = await startProfileServer();
  profileUrl = profiles.set(
    '/platform.json',
    platformProfile({ capabilities: ['checkout', 'order', 'cart'] }),
  );
}, 240_000);
afterAll(() => profiles?.close());

describe('carts across gateway replicas', () => {
  it('UCP: made on one replica, read, replaced, converted and canceled on the other', async () => {
    const sys = await distributed.get();
    const { key } = await issueKey(sys, {
      spiffeId: `spiffe://example.org/ns/ai/sa/procurement-agent/carts-dist-${process.pid}`,
      ucpProfile: profiles.origin,
    });
    const call = (method: 'GET' | 'POST' | 'PUT', path: string, body?: unknown) =>
      ucpCall(url(), { key, profileUrl }, method, path, body);
    const created = await call('POST', '/carts', { line_items: [{ item: { id: A }, quantity: 2 }] });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    expectUcp('cart', created.body);
    const id = created.body.id as string;
    expect((await call('GET', `/carts/${id}`)).body).toEqual(created.body);
    const replaced = await call('PUT', `/carts/${id}`, {
      id,
      line_items: [{ item: { id: A }, quantity: 3 }],
    });
    expect(replaced.status).toBe(200);
    const first = await call('POST', '/checkout-sessions', { cart_id: id, line_items: [] });
    expect(first.status).toBe(201);
    expect(totalsOf(first.body).total).toBe(totalsOf(replaced.body).total);
    const again = await call('POST', '/checkout-sessions', { cart_id: id, line_items: [] });
    expect(again.status).toBe(200);
    expect(again.body.id).toBe(first.body.id);
    // The operators' read, from the procurement process.
    const listed = await sys.gql('{ carts { id checkoutSessionId totalDecimal } }', {
      token: await sys.token(['orders:read']),
    });
    expect(listed.errors).toBeUndefined();
    expect(listed.data?.carts).toContainEqual({
      id,
      checkoutSessionId: first.body.id,
      totalDecimal: ((totalsOf(replaced.body).total ?? 0) / 100).toFixed(2),
    });
    expect((await call('POST', `/carts/${id}/cancel`)).status).toBe(200);
    expect((await call('GET', `/carts/${id}`)).status).toBe(404);
  });

  it('ACP: made on one replica, read and replaced on the other, replayed under its key', async () => {
    const sys = await distributed.get();
    const { key } = await issueKey(sys, {
      spiffeId: `spiffe://example.org/ns/ai/sa/procurement-agent/carts-dist-acp-${process.pid}`,
    });
    const body = { line_items: [{ id: A, quantity: 1 }] };
    const headers = { 'idempotency-key': `carts-dist-${process.pid}` };
    const created = await acp(url(), key, 'POST', '/carts', body, headers);
    expect(created.status).toBe(201);
    expect(acpCartValidator('response', 'Cart')(created.body)).toEqual([]);
    const replay = await acp(url(), key, 'POST', '/carts', body, headers);
    expect(replay.body.id).toBe(created.body.id);
    expect((await acp(url(), key, 'GET', `/carts/${created.body.id}`)).body).toEqual(created.body);
    const replaced = await acp(url(), key, 'PUT', `/carts/${created.body.id}`, {
      line_items: [{ id: A, quantity: 4 }],
    });
    expect(replaced.status).toBe(200);
    expect((replaced.body.line_items as { quantity: number }[])[0]?.quantity).toBe(4);
  });
});

/**
 * What every ACP call must carry and gets back (API-Version, Authorization, Request-Id), and a
 * session's expiry, on the embedded system with sessions that live 2 s.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startEmbedded, type TestSystem } from '../../harness/system.ts';
import { acp, expectError, expectSession, issueKey } from './support/acp.ts';

let sys: TestSystem;
let key: string;

beforeAll(async () => {
  sys = await startEmbedded({ ACP_SESSION_TTL_SECONDS: '2' });
  key = (await issueKey(sys)).key;
});
afterAll(() => sys?.close());

const body = { currency: 'usd', capabilities: {}, line_items: [{ id: 'SKU-ABC-000001' }] };

describe('headers', () => {
  it.each([
    ['missing', null, 'missing_api_version'],
    ['unsupported', '2025-09-29', 'unsupported_api_version'],
  ])('answers 400 with supported_versions when API-Version is %s', async (_w, v, code) => {
    const r = await acp(sys.url, key, 'POST', '/checkout_sessions', body, { 'api-version': v });
    expect(expectError(r, 400, code).supported_versions).toEqual(['2026-04-17']);
  });

  it('echoes Request-Id, on errors too', async () => {
    const r = await acp(sys.url, key, 'GET', `/checkout_sessions/cs_${'0'.repeat(32)}`, undefined, {
      'request-id': 'req-123',
    });
    expectError(r, 404, 'not_found');
    expect(r.headers.get('request-id')).toBe('req-123');
  });

  it('echoes Idempotency-Key on a POST', async () => {
    const r = await acp(sys.url, key, 'POST', '/checkout_sessions', body, { 'idempotency-key': 'echo-me-1' });
    expectSession(r, 201);
    expect(r.headers.get('idempotency-key')).toBe('echo-me-1');
  });

  it.each([
    ['no key', undefined],
    ['an unknown key', `acp_ak_${'0'.repeat(24)}_${'A'.repeat(43)}`],
    ['a malformed key', 'not-a-key'],
  ])('answers 401 for %s', async (_w, k) => {
    const r = await acp(sys.url, k, 'POST', '/checkout_sessions', body);
    expectError(r, 401, 'invalid_api_key');
    expect(r.headers.get('www-authenticate')).toBe('Bearer');
  });

  it('answers 401 for a revoked key', async () => {
    const admin = await sys.token(['agents:admin']);
    const revoked = await issueKey(sys, {
      spiffeId: 'spiffe://example.org/ns/ai/sa/procurement-agent/revoked',
    });
    expectSession(await acp(sys.url, revoked.key, 'POST', '/checkout_sessions', body), 201);
    const r = await sys.gql('mutation ($id: ID!) { revokeCheckoutApiKey(id: $id) { id } }', {
      token: admin,
      variables: { id: revoked.id },
    });
    expect(r.errors).toBeUndefined();
    expectError(await acp(sys.url, revoked.key, 'POST', '/checkout_sessions', body), 401, 'invalid_api_key');
  });

  it('answers 403 for a key without orders:create', async () => {
    const readOnly = await issueKey(sys, {
      spiffeId: 'spiffe://example.org/ns/ai/sa/procurement-agent/read-only',
      scopes: ['orders:read'],
    });
    expectError(
      await acp(sys.url, readOnly.key, 'POST', '/checkout_sessions', body),
      403,
      'insufficient_scope',
    );
  });
});

describe('time', () => {
  it('expires a session left alone; it can then be neither updated nor completed', async () => {
    const s = expectSession(await acp(sys.url, key, 'POST', '/checkout_sessions', body), 201);
    expect(Date.parse(String(s.expires_at)) - Date.parse(String(s.created_at))).toBe(2000);
    await new Promise((r) => setTimeout(r, 2100));
    expect(expectSession(await acp(sys.url, key, 'GET', `/checkout_sessions/${s.id}`)).status).toBe(
      'expired',
    );
    expectError(
      await acp(sys.url, key, 'POST', `/checkout_sessions/${s.id}`, {
        line_items: [{ id: 'SKU-ABC-000001', quantity: 2 }],
      }),
      405,
      'session_expired',
    );
    expectError(
      await acp(sys.url, key, 'POST', `/checkout_sessions/${s.id}/complete`, {
        payment_data: { purchase_order_number: 'PO-1' },
      }),
      405,
      'session_expired',
    );
  });
});

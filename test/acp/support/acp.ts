/**
 * An ACP platform's view of the running system: an operator issues it a checkout API key over
 * GraphQL, then it calls the ACP routes as any ACP client does (docs/acp.md).
 */
import { expect } from 'vitest';
import type { GqlResult } from '../../../harness/system.ts';
import { expectAcp } from './validate.ts';

export const API_VERSION = '2026-04-17';

export interface Gql {
  gql(query: string, opts?: { token?: string; variables?: Record<string, unknown> }): Promise<GqlResult>;
  token(roles: string[], subject?: string): Promise<string>;
}

const ISSUE = `mutation ($input: IssueCheckoutApiKeyInput!) {
  issueCheckoutApiKey(input: $input) { key apiKey { id } }
}`;

let agents = 0;

export const PLATFORM_SPIFFE = 'spiffe://example.org/ns/ai/sa/procurement-agent/acp-platform';

/** A fresh key for a platform acting as `spiffeId` (its own agent identity: its own budget, block, bucket). */
export async function issueKey(
  sys: Gql,
  o: { spiffeId?: string; scopes?: string[]; agentId?: string; ucpProfile?: string } = {},
): Promise<{ key: string; id: string }> {
  const admin = await sys.token(['agents:admin'], 'ops-acp');
  const res = await sys.gql(ISSUE, {
    token: admin,
    variables: {
      input: {
        name: 'Test platform',
        spiffeId: o.spiffeId ?? PLATFORM_SPIFFE,
        // Each key its own agent id by default: promotions count per-customer caps by it.
        agentId: o.agentId ?? `agent-acp-${process.pid}-${++agents}`,
        scopes: o.scopes ?? ['orders:create', 'orders:read', 'orders:cancel'],
        // The UCP platform profile (URL or origin) the key may act for; UCP refuses an unbound key.
        ...(o.ucpProfile ? { ucpProfile: o.ucpProfile } : {}),
      },
    },
  });
  expect(res.errors).toBeUndefined();
  const issued = (res.data as { issueCheckoutApiKey: { key: string; apiKey: { id: string } } })
    .issueCheckoutApiKey;
  return { key: issued.key, id: issued.apiKey.id };
}

export interface AcpReply {
  status: number;
  headers: Headers;
  body: Record<string, unknown>;
}

let keyCounter = 0;

/** One ACP call; every write carries a fresh Idempotency-Key unless one is given (or `null`: none). */
export async function acp(
  base: string,
  key: string | undefined,
  method: 'GET' | 'POST' | 'PUT',
  path: string,
  body?: unknown,
  headers: Record<string, string | null> = {},
): Promise<AcpReply> {
  const h: Record<string, string> = {
    'api-version': API_VERSION,
    ...(key ? { authorization: `Bearer ${key}` } : {}),
    ...(method !== 'GET' ? { 'idempotency-key': `test-${process.pid}-${++keyCounter}-${Date.now()}` } : {}),
    ...(body !== undefined ? { 'content-type': 'application/json' } : {}),
  };
  for (const [k, v] of Object.entries(headers)) {
    if (v === null) delete h[k];
    else h[k] = v;
  }
  const res = await fetch(`${base}/acp${path}`, {
    method,
    headers: h,
    ...(body !== undefined ? { body: typeof body === 'string' ? body : JSON.stringify(body) } : {}),
  });
  const text = await res.text();
  return {
    status: res.status,
    headers: res.headers,
    body: text ? (JSON.parse(text) as Record<string, unknown>) : {},
  };
}

/** The reply is a valid ACP session (or, with an order, CheckoutSessionWithOrder). */
export function expectSession(r: AcpReply, status = 200): Record<string, unknown> {
  expect(r.status, JSON.stringify(r.body)).toBe(status);
  expectAcp(r.body.order ? 'CheckoutSessionWithOrder' : 'CheckoutSession', r.body);
  return r.body;
}

/** The reply is ACP's flat Error with this status and code. */
export function expectError(r: AcpReply, status: number, code?: string): Record<string, unknown> {
  expect(r.status, JSON.stringify(r.body)).toBe(status);
  expectAcp('Error', r.body);
  if (code) expect(r.body.code).toBe(code);
  return r.body;
}

export const totalOf = (session: Record<string, unknown>, type = 'total'): number | undefined =>
  (session.totals as { type: string; amount: number }[]).find((t) => t.type === type)?.amount;

/** Helpers for agent-gateway tests: identities, bodies, requests, RFC 9068 tokens. */
import { randomUUID } from 'node:crypto';
import { importJWK, SignJWT } from 'jose';
import { request } from 'undici';
import { devSigningKey } from '../../../lib/auth/jwt.ts';
import type { Config } from '../../../lib/config.ts';

export const AGENT = 'spiffe://example.org/ns/ai/sa/procurement-agent';
export const ORDERS = '/api/v2/procurement/orders';
export const EDGE_ORDERS = '/v2/orders';

let n = 0;
/** A fresh sub-identity of the agent: its own bucket and block count. */
export const freshAgent = (label = 'case'): string => `${AGENT}/${label}-${++n}-${randomUUID().slice(0, 6)}`;

export const validOrder = (over: Record<string, unknown> = {}) => ({
  agent_id: 'agent-0000001',
  sku: 'SKU-ABC-123456',
  quantity: 5,
  max_budget_usd: 250.75,
  ...over,
});

export interface Reply {
  status: number;
  headers: Record<string, string>;
  text: string;
  json: Record<string, unknown>;
}

export async function post(
  baseUrl: string,
  opts: {
    path?: string;
    headers?: Record<string, string> | string[];
    body?: string | Buffer;
    spiffe?: string | null;
  } = {},
): Promise<Reply> {
  const base: Record<string, string> = { 'content-type': 'application/json' };
  if (opts.spiffe !== null) base['x-spiffe-id'] = opts.spiffe ?? AGENT;
  const headers = Array.isArray(opts.headers)
    ? [...Object.entries(base).flat(), ...opts.headers]
    : { ...base, ...opts.headers };
  const res = await request(`${baseUrl}${opts.path ?? ORDERS}`, {
    method: 'POST',
    headers,
    body: opts.body ?? JSON.stringify(validOrder()),
  });
  const text = await res.body.text();
  let json: Record<string, unknown> = {};
  try {
    json = JSON.parse(text);
  } catch {}
  const h: Record<string, string> = {};
  for (const [k, v] of Object.entries(res.headers)) h[k] = Array.isArray(v) ? v.join(', ') : String(v);
  return { status: res.statusCode, headers: h, text, json };
}

/** An RFC 9068 access token signed with the development key of this system's DATA_DIR. */
export async function accessToken(
  config: Config,
  claims: Record<string, unknown>,
  opts: { typ?: string; ttl?: string | number; iat?: number } = {},
): Promise<string> {
  const { privateJwk } = await devSigningKey(config.DATA_DIR);
  const base = {
    client_id: 'procurement-agent',
    jti: randomUUID(),
    ...claims,
  };
  const jwt = new SignJWT(base)
    .setProtectedHeader({ alg: 'ES256', typ: opts.typ ?? 'at+jwt' })
    .setIssuer(String(claims.iss ?? config.AUTH_ISSUER))
    .setAudience((claims.aud as string) ?? config.AGENT_TOKEN_AUDIENCE)
    .setIssuedAt(opts.iat)
    .setExpirationTime(opts.ttl ?? '5m');
  if (claims.sub !== undefined) jwt.setSubject(String(claims.sub));
  return jwt.sign(await importJWK(privateJwk, 'ES256'));
}

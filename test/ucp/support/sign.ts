/**
 * A UCP platform that signs its requests (signatures.md at v2026-04-08, "REST Request Signing"):
 * requests signed with the http-message-signatures library, the Content-Digest (RFC 9530)
 * hashed here, nothing of the system's own signing code. Covered, as the tag's table asks:
 * `@method`, `@authority`, `@path`, `@query` if any, `ucp-agent`, `idempotency-key` on writes,
 * `content-digest` + `content-type` with a body. Each option bends one thing, for refusals.
 */
import { createHash, sign as ecdsaSign, type KeyObject } from 'node:crypto';
import { httpbis } from 'http-message-signatures';
import type { UcpReply } from '../../../harness/ucp-platform.ts';

export interface SignOpts {
  /** Signs with this key instead of the platform's. */
  key?: KeyObject;
  kid?: string;
  /** `created` in seconds; undefined: now. */
  created?: number;
  /** Components left out of the signature. */
  drop?: string[];
  /** The body sent instead of the one signed (the digest is of the signed one). */
  sendBody?: string;
  /** The profile UCP-Agent names (default: the platform's). */
  profile?: string;
  /** ECDSA hash: sha384 with a P-384 key. */
  hash?: 'sha256' | 'sha384';
  /** Signature parameters, default keyid and created; `alg` is sent when listed. */
  params?: string[];
  /** Header changes after signing (null: removed). */
  after?: Record<string, string | null>;
  /** The origin signed for and called (default: the platform's `base()`). */
  base?: string;
  /** Another origin the signed request is sent to (a replay to another host). */
  sendTo?: string;
}

export interface SigningPlatform {
  /** The system's origin (read at each call: tests assign it in beforeAll). */
  base(): string;
  profileUrl(): string;
  key(): KeyObject;
  kid: string;
}

export type Signed = (
  method: 'GET' | 'POST' | 'PUT',
  path: string,
  body?: unknown,
  o?: SignOpts,
) => Promise<UcpReply>;

let seq = 0;

/** Requests signed as signatures.md's sign_rest_request does, sent with fetch to `<base>/ucp<path>`. */
export function ucpSigner(p: SigningPlatform): Signed {
  return async (method, path, body, o = {}) => {
    const url = `${o.base ?? p.base()}/ucp${path}`;
    const text = body === undefined ? undefined : JSON.stringify(body);
    const headers: Record<string, string> = { 'ucp-agent': `profile="${o.profile ?? p.profileUrl()}"` };
    const fields = ['@method', '@authority', '@path'];
    if (new URL(url).search) fields.push('@query');
    fields.push('ucp-agent');
    if (method !== 'GET') {
      headers['idempotency-key'] = `sig-${process.pid}-${++seq}-${Date.now()}`;
      fields.push('idempotency-key');
    }
    if (text !== undefined) {
      headers['content-type'] = 'application/json';
      headers['content-digest'] = `sha-256=:${createHash('sha256').update(text).digest('base64')}:`;
      fields.push('content-digest', 'content-type');
    }
    const key = o.key ?? p.key();
    const req = await httpbis.signMessage(
      {
        key: {
          id: o.kid ?? p.kid,
          alg: 'ecdsa-p256-sha256',
          sign: async (data) => ecdsaSign(o.hash ?? 'sha256', data, { key, dsaEncoding: 'ieee-p1363' }),
        },
        fields: fields.filter((f) => !o.drop?.includes(f)),
        params: o.params ?? ['keyid', 'created'],
        paramValues: { created: new Date((o.created ?? Math.floor(Date.now() / 1000)) * 1000) },
      },
      { method, url, headers },
    );
    const sent = o.sendBody ?? text;
    // The library adds `Signature` and `Signature-Input` capitalised: one spelling, to override them.
    const final = Object.fromEntries(
      Object.entries(req.headers as Record<string, string>).map(([k, v]) => [k.toLowerCase(), v]),
    );
    for (const [k, v] of Object.entries(o.after ?? {})) {
      if (v === null) delete final[k];
      else final[k] = v;
    }
    const res = await fetch(o.sendTo ? `${o.sendTo}/ucp${path}` : url, {
      method,
      headers: final,
      ...(sent !== undefined ? { body: sent } : {}),
    });
    const raw = await res.text();
    let parsed: Record<string, unknown> = {};
    try {
      parsed = raw ? (JSON.parse(raw) as Record<string, unknown>) : {};
    } catch {
      parsed = { raw };
    }
    return { status: res.status, headers: res.headers, body: parsed };
  };
}

/** A platform's P-256 (or P-384) key pair, its public JWK as the profile's `signing_keys` lists it. */
export function publicJwk(key: KeyObject, kid: string, alg: 'ES256' | 'ES384'): Record<string, unknown> {
  const jwk: Record<string, unknown> = { ...key.export({ format: 'jwk' }), kid, use: 'sig', alg };
  delete jwk.d;
  return jwk;
}

/** The identity docs/ucp.md ("Identity") gives a platform signing with the profile at `profileUrl`. */
export const signedIdentity = (profileUrl: string, trustDomain = 'example.org'): string =>
  `spiffe://${trustDomain}/ns/ai/sa/procurement-agent/ucp/${new URL(profileUrl).host.replace(/:/g, '_')}`;

import { type KeyObject, randomBytes } from 'node:crypto';
import { calculateJwkThumbprint, type JWK } from 'jose';
import { contentDigest } from '../../../../lib/http-signature/digest.ts';
import { signHttpMessage } from '../../../../lib/http-signature/sign.ts';
import { WEB_BOT_AUTH_TAG } from './verify.ts';

export { algorithmOf } from '../../../../lib/http-signature/sign.ts';

/** What an agent needs to sign: its private key and the request as it will be sent. */
export interface SignRequest {
  readonly url: string;
  readonly method: string;
  readonly headers?: Record<string, string>;
  readonly body?: string | Buffer;
  readonly privateKey: KeyObject;
  /** Seconds since the epoch; default now. */
  readonly created?: number;
  /** Seconds after `created`; default 60. */
  readonly validitySeconds?: number;
  readonly nonce?: string;
  /** The agent's key directory (Web Bot Auth's Signature-Agent), sent and covered when given. */
  readonly signatureAgent?: string;
  /** Covered components; default: what the gateway requires for this request. */
  readonly components?: readonly string[];
  /** Overrides for tests (a wrong keyid, a foreign alg, another tag). */
  readonly params?: { keyid?: string; alg?: string; tag?: string };
}

/** The public JWK to register for a private key, and its thumbprint (the Web Bot Auth keyid). */
export async function publicJwk(privateKey: KeyObject): Promise<{ jwk: JWK; keyid: string }> {
  const { kty, crv, x, y } = privateKey.export({ format: 'jwk' });
  const jwk = (y ? { kty, crv, x, y } : { kty, crv, x }) as JWK;
  return { jwk, keyid: await calculateJwkThumbprint(jwk, 'sha256') };
}

/**
 * Signs a request the way the gateway verifies it (docs/signatures.md): the Web Bot Auth
 * profile (tag, keyid = JWK thumbprint, created, expires, nonce), covering @method,
 * @authority, @path, @query when there is one, and for a body Content-Digest (sha-256 of the
 * exact bytes sent) and Content-Type. Returns the headers to send, the input ones included.
 * The signing itself is http-message-signatures' (signMessage with its createSigner).
 */
export async function signAgentRequest(r: SignRequest): Promise<Record<string, string>> {
  const url = new URL(r.url);
  const headers: Record<string, string> = { ...r.headers };
  const hasBody = r.body !== undefined;
  if (hasBody) headers['content-digest'] ??= contentDigest(r.body as string | Buffer);
  if (r.signatureAgent !== undefined) headers['signature-agent'] = r.signatureAgent;
  const components = r.components ?? [
    '@method',
    '@authority',
    '@path',
    ...(url.search ? ['@query'] : []),
    ...(hasBody ? ['content-digest', 'content-type'] : []),
    ...(r.signatureAgent !== undefined ? ['signature-agent'] : []),
  ];
  const created = r.created ?? Math.floor(Date.now() / 1000);
  const { keyid } = await publicJwk(r.privateKey);
  return signHttpMessage({
    url: r.url,
    method: r.method,
    headers,
    privateKey: r.privateKey,
    keyid,
    label: 'sig',
    components,
    params: ['created', 'expires', 'keyid', 'alg', 'nonce', 'tag'],
    paramValues: {
      created: new Date(created * 1000),
      expires: new Date((created + (r.validitySeconds ?? 60)) * 1000),
      nonce: r.nonce ?? randomBytes(32).toString('base64url'),
      tag: r.params?.tag ?? WEB_BOT_AUTH_TAG,
      ...(r.params?.keyid ? { keyid: r.params.keyid } : {}),
      ...(r.params?.alg ? { alg: r.params.alg } : {}),
    },
  });
}

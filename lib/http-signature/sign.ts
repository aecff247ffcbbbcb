import type { KeyObject } from 'node:crypto';
import { createSigner, httpbis } from 'http-message-signatures';
import { contentDigest } from './digest.ts';

/**
 * RFC 9421 HTTP message signing, protocol-neutral: the agent gateway's Web Bot Auth requests
 * (gateway/agent/identity/signature/sign.ts) and the UCP order webhooks of the procurement
 * subgraph (subgraphs/procurement/webhooks/ucp-signature.ts) each choose their components and
 * parameters and sign here. The signing itself is http-message-signatures' (signMessage with its
 * createSigner: ECDSA as fixed-width r||s, as RFC 9421 §3.3.4 asks).
 */

/** The RFC 9421 algorithms this system signs and verifies with (Ed25519; ECDSA P-256 / SHA-256). */
export type SignatureAlgorithm = 'ed25519' | 'ecdsa-p256-sha256';

/** The algorithm a key signs with in RFC 9421 terms. */
export function algorithmOf(key: KeyObject): SignatureAlgorithm {
  if (key.asymmetricKeyType === 'ed25519') return 'ed25519';
  if (key.asymmetricKeyType === 'ec' && key.asymmetricKeyDetails?.namedCurve === 'prime256v1')
    return 'ecdsa-p256-sha256';
  throw new Error('signing keys are Ed25519 or ECDSA P-256');
}

export interface HttpMessageSignature {
  readonly url: string;
  readonly method: string;
  readonly headers?: Record<string, string>;
  /** The exact bytes sent; with `digest`, a Content-Digest (sha-256) of them is added. */
  readonly body?: string | Buffer;
  /** Add Content-Digest for the body unless the headers carry one (default true when there is a body). */
  readonly digest?: boolean;
  readonly privateKey: KeyObject;
  readonly keyid: string;
  /** Covered components, in order (`@method`, `content-digest`, …). */
  readonly components: readonly string[];
  /** Signature parameters in the order they are written (`created`, `keyid`, …). */
  readonly params: readonly string[];
  /** Their values (`created` as a Date); `keyid` defaults to `keyid`, `alg` to the key's. */
  readonly paramValues?: Record<string, string | Date>;
  /** The signature's label in Signature-Input and Signature (default `sig1`). */
  readonly label?: string;
}

/** Signs a message; returns every header to send (the given ones, Content-Digest, Signature-Input, Signature), lower case. */
export async function signHttpMessage(m: HttpMessageSignature): Promise<Record<string, string>> {
  const headers: Record<string, string> = { ...m.headers };
  if (m.body !== undefined && m.digest !== false) headers['content-digest'] ??= contentDigest(m.body);
  const signed = await httpbis.signMessage(
    {
      key: createSigner(m.privateKey, algorithmOf(m.privateKey), m.keyid),
      name: m.label ?? 'sig1',
      fields: [...m.components],
      params: [...m.params],
      paramValues: { ...m.paramValues },
    },
    { method: m.method, url: m.url, headers },
  );
  // Lower-case names (the library writes `Signature`), so a caller's override replaces a field
  // instead of sending it twice.
  return Object.fromEntries(Object.entries(signed.headers).map(([k, v]) => [k.toLowerCase(), String(v)]));
}

export interface HttpResponseSignature {
  readonly status: number;
  /** The response's headers as sent (lower-case names); `content-type` among them when there is a body. */
  readonly headers: Record<string, string>;
  /** The exact bytes sent; a Content-Digest (sha-256) of them is added when there is a body. */
  readonly body?: string | Buffer;
  readonly privateKey: KeyObject;
  readonly keyid: string;
  /** Covered components, in order (`@status`, `content-digest`, …). */
  readonly components: readonly string[];
  readonly params: readonly string[];
  readonly paramValues?: Record<string, string | Date>;
  readonly label?: string;
}

/**
 * Signs a response (RFC 9421 §2.2.9 `@status`); returns the headers to add (Content-Digest,
 * Signature-Input, Signature), lower case. The same library path as requests.
 */
export async function signHttpResponse(m: HttpResponseSignature): Promise<Record<string, string>> {
  const headers: Record<string, string> = { ...m.headers };
  const added: Record<string, string> = {};
  if (m.body !== undefined && m.body.length > 0) added['content-digest'] = contentDigest(m.body);
  const signed = await httpbis.signMessage(
    {
      key: createSigner(m.privateKey, algorithmOf(m.privateKey), m.keyid),
      name: m.label ?? 'sig1',
      fields: [...m.components],
      params: [...m.params],
      paramValues: { ...m.paramValues },
    },
    { status: m.status, headers: { ...headers, ...added } },
  );
  for (const [k, v] of Object.entries(signed.headers)) {
    const name = k.toLowerCase();
    if (name === 'signature' || name === 'signature-input') added[name] = String(v);
  }
  return added;
}

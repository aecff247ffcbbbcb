import { sign as cryptoSign, type KeyObject } from 'node:crypto';
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
 * Signature-Input, Signature), lower case. The common case, the one every UCP answer takes
 * (`@status` and plain header fields, `created` and `keyid`, a label and values that need no
 * structured-field escaping), writes the signature base as RFC 9421 §2.5 lays it out and signs
 * it with one node:crypto call (signResponseDirect below says why); anything else goes through
 * http-message-signatures as requests do. test/foundation/response-signature-direct.test.ts holds the
 * two byte-equal (Signature-Input, Content-Digest) and verifies the signatures with the library.
 */
export async function signHttpResponse(m: HttpResponseSignature): Promise<Record<string, string>> {
  const added = digestHeader(m);
  const direct = signResponseDirect(m, added['content-digest']);
  if (direct) return { ...added, ...direct };
  return signHttpResponseWithLibrary(m, added);
}

/** Content-Digest of a response's body, when it has one. */
const digestHeader = (m: HttpResponseSignature): Record<string, string> =>
  m.body !== undefined && m.body.length > 0 ? { 'content-digest': contentDigest(m.body) } : {};

/** The same as signHttpResponse, always through http-message-signatures (the tests' reference). */
export async function signHttpResponseWithLibrary(
  m: HttpResponseSignature,
  added: Record<string, string> = digestHeader(m),
): Promise<Record<string, string>> {
  const headers: Record<string, string> = { ...m.headers };
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
  const out = { ...added };
  for (const [k, v] of Object.entries(signed.headers)) {
    const name = k.toLowerCase();
    if (name === 'signature' || name === 'signature-input') out[name] = String(v);
  }
  return out;
}

/**
 * The signature headers written directly, or undefined when the message asks for more than this
 * writes (then the library does it). Hand-written because the library's path parses and
 * serialises every component name, parameter and header as a structured field and signs through
 * a `createSign` stream, for every answer of the UCP endpoint: issue 50's heap profile of the
 * server under the UCP flows put the response signature among the largest allocators of both
 * kinds of flow (docs/ap2.md, "Not done yet").
 */
function signResponseDirect(
  m: HttpResponseSignature,
  digest: string | undefined,
): Record<string, string> | undefined {
  const label = m.label ?? 'sig1';
  if (!SF_KEY.test(label)) return undefined;
  const lines: string[] = [];
  for (const c of m.components) {
    let value: string | undefined;
    if (c === '@status') value = String(m.status);
    else if (FIELD_NAME.test(c)) value = c === 'content-digest' ? (digest ?? m.headers[c]) : m.headers[c];
    // Unknown derived components, parameters, and values the library would normalise: its path.
    if (value === undefined || !PLAIN_VALUE.test(value)) return undefined;
    lines.push(`"${c}": ${value}`);
  }
  let params = '';
  for (const p of m.params) {
    if (p === 'created') {
      const created = m.paramValues?.created ?? new Date();
      if (!(created instanceof Date)) return undefined;
      params += `;created=${Math.floor(created.getTime() / 1000)}`;
    } else if (p === 'keyid') {
      const keyid = m.paramValues?.keyid ?? m.keyid;
      if (typeof keyid !== 'string' || !SF_STRING.test(keyid)) return undefined;
      params += `;keyid="${keyid}"`;
    } else return undefined;
  }
  const input = `(${m.components.map((c) => `"${c}"`).join(' ')})${params}`;
  lines.push(`"@signature-params": ${input}`);
  const alg = algorithmOf(m.privateKey);
  const base = Buffer.from(lines.join('\n'));
  const signature =
    alg === 'ed25519'
      ? cryptoSign(null, base, m.privateKey)
      : cryptoSign('sha256', base, { key: m.privateKey, dsaEncoding: 'ieee-p1363' });
  return { 'signature-input': `${label}=${input}`, signature: `${label}=:${signature.toString('base64')}:` };
}

/** RFC 8941 §3.2 dictionary key. */
const SF_KEY = /^[a-z*][a-z0-9_.*-]*$/;
/** A lower-case field name (RFC 9110 token). */
const FIELD_NAME = /^[a-z0-9!#$%&'*+.^_`|~-]+$/;
/** Printable ASCII with no quote or backslash: written as an sf-string without escapes. */
const SF_STRING = /^[\x20\x21\x23-\x5b\x5d-\x7e]*$/;
/** A field value the library would write as is (no surrounding space, no line break). */
const PLAIN_VALUE = /^(?:[\x21-\x7e](?:[\x20-\x7e]*[\x21-\x7e])?)?$/;

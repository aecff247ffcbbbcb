/**
 * A UCP platform's check of an order webhook, written from the specification (order.md "Webhook
 * Signature Verification", signatures.md "REST Request Verification", RFC 9421, RFC 9530), never
 * from the sender's code: the key is the JWK the business profile publishes, imported with
 * node:crypto; the signature is checked twice, by the http-message-signatures library's verifier
 * and by a signature base built here by hand (RFC 9421 §2.5) and node:crypto's ECDSA with raw
 * r||s; the Content-Digest by hashing the raw body.
 */
import { createHash, createPublicKey, verify as ecdsaVerify, type JsonWebKey } from 'node:crypto';
import type { IncomingHttpHeaders } from 'node:http';
import { createVerifier, httpbis } from 'http-message-signatures';
import { type InnerList, isInnerList, parseDictionary, serializeInnerList } from 'structured-headers';

export interface ReceivedWebhook {
  /** The URL the business posted to (the receiver's). */
  readonly url: string;
  readonly headers: IncomingHttpHeaders;
  /** The raw body, as received. */
  readonly body: string;
}

export type Verdict = { ok: true; keyid: string; components: string[] } | { ok: false; reason: string };

const one = (v: string | string[] | undefined) => (Array.isArray(v) ? v.join(', ') : v);

/** The business profile a webhook names in `UCP-Agent: profile="…"` (RFC 8941 dictionary). */
export function profileUrlOf(headers: IncomingHttpHeaders): string | undefined {
  const field = one(headers['ucp-agent']);
  if (!field) return undefined;
  const profile = parseDictionary(field).get('profile')?.[0];
  return typeof profile === 'string' ? profile : undefined;
}

/** The signing keys of a business profile document. */
export async function fetchSigningKeys(profileUrl: string): Promise<JsonWebKey[]> {
  const res = await fetch(profileUrl);
  if (!res.ok) throw new Error(`profile ${profileUrl}: ${res.status}`);
  return ((await res.json()) as { signing_keys?: JsonWebKey[] }).signing_keys ?? [];
}

/** RFC 9421 §2.1/2.2: each covered component's value, from the request as received. */
function componentValue(name: string, w: ReceivedWebhook): string | undefined {
  const url = new URL(w.url);
  switch (name) {
    case '@method':
      return 'POST';
    case '@authority':
      return one(w.headers.host)?.toLowerCase();
    case '@path':
      return url.pathname;
    case '@query':
      return url.search || '?';
    default:
      return one(w.headers[name])?.trim();
  }
}

/**
 * The components signatures.md requires on a webhook (a POST with a body and UCP-Agent; its table
 * requires `idempotency-key` on POST, PUT, DELETE and PATCH).
 */
const REQUIRED = [
  '@method',
  '@authority',
  '@path',
  'ucp-agent',
  'idempotency-key',
  'content-digest',
  'content-type',
];

export async function verifyUcpWebhook(w: ReceivedWebhook, keys: readonly JsonWebKey[]): Promise<Verdict> {
  // 1. Content-Digest (RFC 9530): sha-256 of the raw body bytes.
  const digestField = one(w.headers['content-digest']);
  if (!digestField) return { ok: false, reason: 'no Content-Digest' };
  const sha = parseDictionary(digestField).get('sha-256')?.[0];
  if (!(sha instanceof ArrayBuffer))
    return { ok: false, reason: 'Content-Digest has no sha-256 byte sequence' };
  const actual = createHash('sha256').update(Buffer.from(w.body, 'utf8')).digest();
  if (!Buffer.from(sha).equals(actual)) return { ok: false, reason: 'digest_mismatch' };

  // 2. Signature-Input: the one signature, its components and keyid.
  const inputs = parseDictionary(one(w.headers['signature-input']) ?? '');
  const [entry] = [...inputs];
  if (!entry) return { ok: false, reason: 'signature_missing' };
  const [label, input] = entry;
  if (!isInnerList(input)) return { ok: false, reason: 'Signature-Input is not an inner list' };
  const components = (input as InnerList)[0].map(([c]) => String(c));
  for (const c of REQUIRED) if (!components.includes(c)) return { ok: false, reason: `${c} not covered` };
  const keyid = (input as InnerList)[1].get('keyid');
  if (typeof keyid !== 'string') return { ok: false, reason: 'no keyid' };
  if ((input as InnerList)[1].has('alg'))
    return { ok: false, reason: 'alg must not be sent (signatures.md)' };
  const jwk = keys.find((k) => (k as { kid?: string }).kid === keyid);
  if (!jwk) return { ok: false, reason: 'key_not_found' };
  if (jwk.kty !== 'EC' || jwk.crv !== 'P-256') return { ok: false, reason: 'algorithm_unsupported' };
  const publicKey = createPublicKey({ key: jwk, format: 'jwk' });

  // 3a. By hand: the signature base of RFC 9421 §2.5, ECDSA P-256 SHA-256 with r||s (§3.3.4).
  const lines: string[] = [];
  for (const c of components) {
    const v = componentValue(c, w);
    if (v === undefined) return { ok: false, reason: `${c} is covered but absent` };
    lines.push(`"${c}": ${v}`);
  }
  lines.push(`"@signature-params": ${serializeInnerList(input as InnerList)}`);
  const signature = parseDictionary(one(w.headers.signature) ?? '').get(label)?.[0];
  if (!(signature instanceof ArrayBuffer)) return { ok: false, reason: 'signature_missing' };
  const sig = Buffer.from(signature);
  if (sig.length !== 64) return { ok: false, reason: 'not a raw r||s P-256 signature' };
  const byHand = ecdsaVerify(
    'sha256',
    Buffer.from(lines.join('\n')),
    { key: publicKey, dsaEncoding: 'ieee-p1363' },
    sig,
  );
  if (!byHand) return { ok: false, reason: 'signature_invalid (signature base built by hand)' };

  // 3b. The library's verifier on the same request.
  const verified = await httpbis.verifyMessage(
    {
      keyLookup: async (params) =>
        params.keyid === keyid
          ? { id: keyid, algs: ['ecdsa-p256-sha256'], verify: createVerifier(publicKey, 'ecdsa-p256-sha256') }
          : null,
    },
    {
      method: 'POST',
      url: w.url,
      headers: Object.fromEntries(
        Object.entries(w.headers).flatMap(([k, v]) => (v === undefined ? [] : [[k, one(v) as string]])),
      ),
    },
  );
  if (verified !== true) return { ok: false, reason: 'signature_invalid (http-message-signatures)' };
  return { ok: true, keyid, components };
}

import { verify as cryptoVerify } from 'node:crypto';
import type { FastifyRequest } from 'fastify';
import { httpbis } from 'http-message-signatures';
import {
  type InnerList,
  type Item,
  isInnerList,
  type Parameters,
  parseDictionary,
  serializeItem,
  serializeList,
} from 'structured-headers';
import { publicKeyOf } from '../../../lib/ap2/public-keys.ts';
import { PROCUREMENT_AGENT_PATH, parseSpiffeId, type SpiffeId } from '../../../lib/auth/spiffe.ts';
import type { Clock } from '../../../lib/clock.ts';
import { type ExpectedDigest, parseContentDigest } from '../../../lib/http-signature/digest.ts';
import { sourceOf } from '../../../lib/net/address.ts';
import type { PlatformProfile, ProfileFetcher } from './platform-profile.ts';

/**
 * RFC 9421 request signatures from a UCP platform (signatures.md, "REST Request Verification"):
 * the key is the one of the platform profile's `signing_keys` whose `kid` the signature's
 * `keyid` names; the profile is the one `UCP-Agent` names (fetched through the SSRF guard,
 * cached; that fetch comes before the signature is checked, so it is held to the budget of
 * fetches for callers not yet authenticated and fails with one generic answer). Covered:
 * `@method`, `@authority`, `@path`, `@query` when there is a query, `ucp-agent`,
 * `idempotency-key` when sent, and `content-digest` + `content-type` when the request has a body.
 * A POST without a body (UCP's cancel) has no Content-Digest and verifies without one. The body's
 * digest is checked by the strict JSON parser against the raw bytes (req.agent.signedDigest; a
 * mismatch leaves as 400 `digest_mismatch`, ./errors.ts). Replay is the idempotency key's
 * business (signatures.md, "Replay Protection"); an `expires` in the past is refused, and so is
 * a `created` older than 5 min or more than 60 s ahead. ES256 (P-256) must be supported, ES384
 * (P-384) is too; signatures are raw r||s (ieee-p1363), not DER.
 *
 * The verified platform acts as the agent identity
 * `spiffe://<first trust domain>/ns/ai/sa/procurement-agent/ucp/<profile host>` (port as `_port`),
 * with agent id `ucp-<profile host>`: the scope policy, spend policies and blocks name it as
 * they name any agent (docs/ucp.md, "Identity").
 */

export type UcpSignatureVerdict =
  | { ok: true; id: SpiffeId; agentId: string; profile: PlatformProfile; digest: ExpectedDigest | undefined }
  | { ok: false; status: 400 | 401 | 422 | 424 | 429; code: string; content: string; retryAfterS?: number };

export interface UcpSignatureVerifier {
  verify(req: FastifyRequest, profileUrl: string): Promise<UcpSignatureVerdict>;
}

const CURVES: Record<string, { hash: string; bytes: number }> = {
  'P-256': { hash: 'sha256', bytes: 64 },
  'P-384': { hash: 'sha384', bytes: 96 },
};
const SIGNATURE_BYTES = new Set(Object.values(CURVES).map((c) => c.bytes));

/** How old a signature's `created` may be, and how far ahead of our clock (docs/ucp.md, "Identity"). */
export const CREATED_MAX_AGE_S = 300;
export const CREATED_MAX_SKEW_S = 60;

const one = (v: string | string[] | undefined): string | undefined => (Array.isArray(v) ? v.join(', ') : v);

type Refusal = Extract<UcpSignatureVerdict, { ok: false }>;

const refuse = (status: 400 | 401, code: string, content: string): Refusal => ({
  ok: false,
  status,
  code,
  content,
});

/** The agent identity of a verified platform (pure). */
export function platformIdentity(
  profileUrl: string,
  trustDomain: string,
): { id: SpiffeId; agentId: string } | undefined {
  const host = new URL(profileUrl).host.toLowerCase().replace(/:/g, '_');
  const parsed = parseSpiffeId(`spiffe://${trustDomain}${PROCUREMENT_AGENT_PATH}/ucp/${host}`);
  if (!parsed.ok) return undefined;
  return { id: parsed.value, agentId: `ucp-${host}`.slice(0, 64) };
}

export function ucpSignatureVerifier(o: {
  profiles: ProfileFetcher;
  clock: Clock;
  trustDomain: string;
}): UcpSignatureVerifier {
  return {
    // The checks in this order: the cheap ones first, the profile fetched only for a signature
    // that could verify, the signature checked before the identity is granted.
    async verify(req, profileUrl) {
      const signature = readSignature(req);
      if (!signature.ok) return signature;
      const { items, params, input, bytes, keyid } = signature;
      const late = checkTimes(params, o.clock.now());
      if (late) return late;
      const coverage = checkCoverage(req, items, bytes);
      if (!coverage.ok) return coverage;

      // The profile is fetched to find the key before anything is proven: a fetch for a caller
      // not yet authenticated, held to its budget and answered generically when it fails.
      const source = sourceOf(req.raw.socket.remoteAddress);
      const resolved = await o.profiles.resolve(profileUrl, { authenticated: false, source });
      if (!resolved.ok) return resolved;
      const key = keyOf(resolved.profile, keyid);
      if (!key.ok) return key;

      let digest: ExpectedDigest | undefined;
      if (coverage.hasBody) {
        const d = parseContentDigest(one(req.headers['content-digest']) ?? '');
        if (!d.ok) return refuse(400, 'digest_mismatch', d.reason);
        digest = d.expected;
      }
      const base = signatureBase(req, coverage.target, items, input);
      if (typeof base !== 'string') return base;
      if (!signatureValid(key, base, bytes))
        return refuse(401, 'signature_invalid', 'The signature does not verify.');
      const who = platformIdentity(profileUrl, o.trustDomain);
      if (!who) return refuse(401, 'signature_invalid', 'The profile URL names no usable agent identity.');
      return { ok: true, ...who, profile: resolved.profile, digest };
    },
  };
}

/** Signature-Input and Signature (RFC 8941 dictionaries): one signature, its bytes and keyid, no alg. */
function readSignature(req: FastifyRequest) {
  let inputs: ReturnType<typeof parseDictionary>;
  let signatures: ReturnType<typeof parseDictionary>;
  // A required header that is absent (signatures.md's table: signature_missing), not one
  // that is there and wrong (signature_invalid).
  if (one(req.headers.signature) === undefined)
    return refuse(401, 'signature_missing', 'Signature-Input has no Signature beside it.');
  try {
    inputs = parseDictionary(one(req.headers['signature-input']) ?? '');
    signatures = parseDictionary(one(req.headers.signature) ?? '');
  } catch {
    return refuse(401, 'signature_invalid', 'Signature-Input and Signature must be RFC 8941 dictionaries.');
  }
  const first = [...inputs][0];
  if (!first || inputs.size !== 1)
    return refuse(401, 'signature_missing', 'Exactly one signature (Signature-Input) is expected.');
  const [label, input] = first;
  const bytes = signatures.get(label)?.[0];
  if (!isInnerList(input) || !(bytes instanceof ArrayBuffer))
    return refuse(401, 'signature_invalid', `Signature has no byte sequence labelled ${label.slice(0, 32)}.`);
  const [items, params] = input;
  const keyid = params.get('keyid');
  if (typeof keyid !== 'string' || keyid === '') return refuse(401, 'signature_invalid', 'keyid is missing.');
  if (params.has('alg'))
    return refuse(400, 'algorithm_unsupported', "alg is not sent: the key's crv decides.");
  return { ok: true as const, items, params, input, bytes, keyid };
}

/** An `expires` in the past, or a `created` out of its window: the refusal, else undefined. */
function checkTimes(params: Parameters, nowMs: number): Refusal | undefined {
  const expires = params.get('expires');
  if (typeof expires === 'number' && expires * 1000 < nowMs)
    return refuse(401, 'signature_invalid', 'The signature has expired.');
  // `created` is optional (replay is the idempotency key's business), but one that is sent
  // is held to a window so a captured signature is not good forever: RFC 9421 §3.2.1 lets
  // the verifier refuse a signature too old, or created in the future beyond clock skew.
  const created = params.get('created');
  if (created === undefined) return undefined;
  if (typeof created !== 'number' || !Number.isInteger(created))
    return refuse(401, 'signature_invalid', 'created must be an integer (seconds since the epoch).');
  const age = nowMs / 1000 - created;
  if (age > CREATED_MAX_AGE_S)
    return refuse(
      401,
      'signature_invalid',
      `The signature was created more than ${CREATED_MAX_AGE_S} s ago.`,
    );
  if (age < -CREATED_MAX_SKEW_S)
    return refuse(401, 'signature_invalid', 'The signature was created in the future.');
  return undefined;
}

/** The components the request needs covered are, and the signature has an accepted curve's length. */
function checkCoverage(req: FastifyRequest, items: Item[], bytes: ArrayBuffer) {
  const covered = items.map(([name]) => name);
  if (covered.some((c) => typeof c !== 'string'))
    return refuse(401, 'signature_invalid', 'A covered component is not a string.');
  const target = req.raw.url ?? req.url;
  const hasBody =
    (req.headers['content-length'] !== undefined && req.headers['content-length'] !== '0') ||
    req.headers['transfer-encoding'] !== undefined;
  const required = ['@method', '@authority', '@path', 'ucp-agent'];
  if (target.includes('?')) required.push('@query');
  if (req.headers['idempotency-key'] !== undefined) required.push('idempotency-key');
  if (hasBody) required.push('content-digest', 'content-type');
  const missing = required.filter((c) => !covered.includes(c));
  if (missing.length > 0)
    return refuse(401, 'signature_invalid', `The signature does not cover ${missing.join(', ')}.`);
  // No key of an accepted curve verifies a signature of another length: refused before the
  // profile is fetched, so a dummy signature does not even spend the fetch budget.
  if (!SIGNATURE_BYTES.has(bytes.byteLength))
    return refuse(401, 'signature_invalid', 'The signature is not an ES256 or ES384 signature (r||s).');
  return { ok: true as const, target, hasBody };
}

/** The profile's signing key named `keyid`, an EC key on an accepted curve. */
function keyOf(profile: PlatformProfile, keyid: string) {
  const jwk = profile.signingKeys.find((k) => k.kid === keyid);
  if (!jwk)
    return refuse(
      401,
      'key_not_found',
      `No key ${keyid.slice(0, 64)} in the platform profile's signing_keys.`,
    );
  const curve = CURVES[String(jwk.crv)];
  if (jwk.kty !== 'EC' || !curve)
    return refuse(
      400,
      'algorithm_unsupported',
      'Only EC keys on P-256 (ES256) or P-384 (ES384) are accepted.',
    );
  return { ok: true as const, jwk, curve };
}

/** RFC 9421's signature base of the request for the covered components, or the refusal. */
function signatureBase(
  req: FastifyRequest,
  target: string,
  items: Item[],
  input: InnerList,
): string | Refusal {
  try {
    const headers = Object.fromEntries(
      Object.entries(req.headers).filter((e): e is [string, string | string[]] => e[1] !== undefined),
    );
    const scheme = req.protocol === 'https' ? 'https' : 'http';
    const request = {
      method: req.method,
      url: `${scheme}://${req.headers.host ?? 'invalid'}${target}`,
      headers,
    };
    const signatureBase = httpbis.createSignatureBase(
      { fields: items.map((i) => serializeItem(i)) },
      request,
    );
    signatureBase.push(['"@signature-params"', [serializeList([input])]]);
    return httpbis.formatSignatureBase(signatureBase);
  } catch (err) {
    return refuse(
      401,
      'signature_invalid',
      `A covered component cannot be read (${String((err as Error).message).slice(0, 120)}).`,
    );
  }
}

/** The raw r||s signature verifies over `base` with the key (its curve's length and hash). */
function signatureValid(
  key: { jwk: PlatformProfile['signingKeys'][number]; curve: { hash: string; bytes: number } },
  base: string,
  bytes: ArrayBuffer,
): boolean {
  try {
    // Parsed once per key (lib/ap2/public-keys.ts): a JWK's import cost more than the verify.
    const publicKey = publicKeyOf(key.jwk);
    const sig = Buffer.from(bytes);
    return (
      sig.length === key.curve.bytes &&
      cryptoVerify(key.curve.hash, Buffer.from(base), { key: publicKey, dsaEncoding: 'ieee-p1363' }, sig)
    );
  } catch {
    return false;
  }
}

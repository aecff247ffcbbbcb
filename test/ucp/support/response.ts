/**
 * A UCP platform's check of a signed response (signatures.md at v2026-04-08, "REST Response
 * Verification"): the Content-Digest (RFC 9530) hashed here over the bytes received, the RFC 9421
 * signature verified by http-message-signatures' verifyMessage with the key of the business
 * profile's `signing_keys` its `keyid` names. Nothing of the system's own signing code.
 */
import { createHash, createPublicKey, type JsonWebKey } from 'node:crypto';
import { createVerifier, httpbis } from 'http-message-signatures';
import { parseDictionary } from 'structured-headers';

export interface RawResponse {
  readonly status: number;
  readonly headers: Record<string, string>;
  readonly bytes: Buffer;
}

/** A fetch's response as received: status, headers (lower case), the exact body bytes. */
export async function rawOf(res: Response): Promise<RawResponse> {
  return {
    status: res.status,
    headers: Object.fromEntries(res.headers),
    bytes: Buffer.from(await res.arrayBuffer()),
  };
}

/** Whether `r` (read as if its status were `status`) carries a valid signature; its covered components. */
export async function verifyUcpResponse(
  r: RawResponse,
  jwks: readonly Record<string, unknown>[],
  status = r.status,
): Promise<{ ok: boolean; digestOk: boolean; components: string[] }> {
  const digestOk =
    r.headers['content-digest'] === `sha-256=:${createHash('sha256').update(r.bytes).digest('base64')}:`;
  const input = parseDictionary(r.headers['signature-input'] ?? '').get('sig1');
  const components = ((input?.[0] ?? []) as [string][]).map(([c]) => c);
  const keyid = String((input?.[1] as Map<string, unknown> | undefined)?.get('keyid'));
  const jwk = jwks.find((k) => k.kid === keyid);
  if (!jwk) return { ok: false, digestOk, components };
  const publicKey = createPublicKey({ key: jwk as JsonWebKey, format: 'jwk' });
  const ok = await httpbis.verifyMessage(
    {
      keyLookup: async (p) =>
        p.keyid === keyid
          ? { id: keyid, algs: ['ecdsa-p256-sha256'], verify: createVerifier(publicKey, 'ecdsa-p256-sha256') }
          : null,
      requiredFields: ['@status', 'content-digest', 'content-type'],
      requiredParams: ['created', 'keyid'],
      maxAge: 300,
    },
    { status, headers: r.headers },
  );
  return { ok: ok === true && digestOk, digestOk, components };
}

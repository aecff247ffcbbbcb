/**
 * An agent platform that knows only the specifications, linking an account: its PKCE pair, the
 * browser's cookies through the authorize → consent → redirect hops, the token endpoint with
 * `none` or `private_key_jwt`. Real HTTP against the running system, real crypto (jose). Shared by
 * the OAuth tests and the token-check benchmark (bench/token-check/e2e.ts).
 */
import { createHash, randomBytes } from 'node:crypto';
import { exportJWK, generateKeyPair, type JWK, SignJWT } from 'jose';

export const b64url = (b: Buffer) => b.toString('base64url');

export function pkcePair(): { verifier: string; challenge: string } {
  const verifier = b64url(randomBytes(32));
  return { verifier, challenge: b64url(createHash('sha256').update(verifier).digest()) };
}

/** The cookies a browser would keep (paths ignored: every cookie to every request of the test). */
export class CookieJar {
  private readonly cookies = new Map<string, string>();
  take(res: Response): void {
    for (const c of res.headers.getSetCookie()) {
      const pair = c.split(';')[0] ?? '';
      const at = pair.indexOf('=');
      if (at > 0) this.cookies.set(pair.slice(0, at), pair.slice(at + 1));
    }
  }
  header(): string {
    return [...this.cookies].map(([k, v]) => `${k}=${v}`).join('; ');
  }
}

/** A confidential platform's key pair: the public JWK to register, the private key to sign assertions. */
export async function platformKey(): Promise<{
  publicJwk: JWK;
  sign(clientId: string, aud: string): Promise<string>;
}> {
  const { publicKey, privateKey } = await generateKeyPair('ES256', { extractable: true });
  const publicJwk = { ...(await exportJWK(publicKey)), kid: 'platform-1', alg: 'ES256', use: 'sig' };
  return {
    publicJwk,
    sign: (clientId, aud) =>
      new SignJWT({})
        .setProtectedHeader({ alg: 'ES256', kid: 'platform-1' })
        .setIssuer(clientId)
        .setSubject(clientId)
        .setAudience(aud)
        .setJti(b64url(randomBytes(16)))
        .setIssuedAt()
        .setExpirationTime('60s')
        .sign(privateKey),
  };
}

export interface TokenReply {
  status: number;
  body: Record<string, unknown>;
}

/** POST to the token (or revocation) endpoint, form-encoded as RFC 6749 asks. */
export async function form(url: string, params: Record<string, string | undefined>): Promise<TokenReply> {
  const body = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) if (v !== undefined) body.set(k, v);
  const res = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body,
  });
  const text = await res.text();
  return { status: res.status, body: text ? (JSON.parse(text) as Record<string, unknown>) : {} };
}

/**
 * The token request that redeems code `c` (RFC 6749 4.1.3 with RFC 7636's verifier), for
 * `clientId` when given (a confidential client authenticates with its assertion instead).
 */
export function codeGrant(
  c: { code: string; redirectUri: string; verifier: string },
  clientId?: string,
): Record<string, string> {
  return {
    grant_type: 'authorization_code',
    code: c.code,
    redirect_uri: c.redirectUri,
    code_verifier: c.verifier,
    ...(clientId === undefined ? {} : { client_id: clientId }),
  };
}

export interface LinkOptions {
  readonly base: string;
  readonly clientId: string;
  readonly redirectUri: string;
  readonly scope: string;
  /** The buyer administrator's operator token. */
  readonly adminToken: string;
  /** The agent identity to link; undefined: refuse. */
  readonly spiffeId?: string;
  readonly challenge?: string;
  /** Extra or replaced authorization parameters. */
  readonly params?: Record<string, string>;
}

export interface LinkResult {
  /** The authorization response's redirect (code, state, iss), or the authorize step's refusal. */
  readonly location: URL;
  readonly state: string;
  readonly verifier: string;
}

/** Authorize → consent page → decision → resume: where the browser is sent back to the platform. */
export async function link(o: LinkOptions): Promise<LinkResult> {
  const jar = new CookieJar();
  const { verifier, challenge } = pkcePair();
  const state = b64url(randomBytes(16));
  const q = new URLSearchParams({
    response_type: 'code',
    client_id: o.clientId,
    redirect_uri: o.redirectUri,
    scope: o.scope,
    code_challenge: o.challenge ?? challenge,
    code_challenge_method: 'S256',
    state,
    ...o.params,
  });
  const authorize = await fetch(`${o.base}/oauth/authorize?${q}`, { redirect: 'manual' });
  jar.take(authorize);
  const to = new URL(authorize.headers.get('location') ?? `${o.base}/`, o.base);
  if (!to.pathname.startsWith('/console/link/')) return { location: to, state, verifier };
  const uid = to.pathname.split('/').pop() as string;
  const headers = { cookie: jar.header(), authorization: `Bearer ${o.adminToken}` };
  const details = await fetch(`${o.base}/console/link/${uid}/details`, { headers });
  if (details.status !== 200) throw new Error(`consent details: ${details.status} ${await details.text()}`);
  const decision = await fetch(`${o.base}/console/link/${uid}`, {
    method: 'POST',
    headers: { ...headers, 'content-type': 'application/json' },
    body: JSON.stringify(o.spiffeId ? { grant: true, spiffeId: o.spiffeId } : { grant: false }),
  });
  jar.take(decision);
  if (decision.status !== 200)
    throw new Error(`consent decision: ${decision.status} ${await decision.text()}`);
  const { redirectTo } = (await decision.json()) as { redirectTo: string };
  const resumed = await fetch(new URL(redirectTo, o.base), {
    redirect: 'manual',
    headers: { cookie: jar.header() },
  });
  return { location: new URL(resumed.headers.get('location') ?? '', o.base), state, verifier };
}

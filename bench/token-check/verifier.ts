/**
 * What checking a linked platform's access token costs in process (issue 49: ≤ 0.2 ms p99 added
 * to an authenticated call, no network call per request): gateway/oauth/access-token.ts's
 * verifier over RFC 9068 tokens (ES256, the claims the authorization server issues), with 1,000
 * grants in the revoked set. Each call timed alone (process.hrtime), after 500 warm-up calls:
 * - a token seen before (a platform sends one token for its ten minutes): the verified-token
 *   cache, then the revoked set;
 * - a token's first call: the ECDSA P-256 verification and the claims' checks;
 * - a token of a revoked grant (refused).
 * The p99 of each bounds what the check adds to that call: the chain's steps after identity do
 * not depend on the credential, and an API key's own check (which the token's replaces) is not
 * subtracted.
 */
import { exportJWK, generateKeyPair, SignJWT } from 'jose';
import { accessTokenVerifier } from '../../gateway/oauth/access-token.ts';
import { RevokedGrants } from '../../subgraphs/procurement/identity-linking/links.ts';

const ISSUER = 'https://shop.example';
const AUDIENCE = 'https://shop.example/ucp';
const WARM = 500;

export interface CheckFigures {
  what: string;
  calls: number;
  /** Microseconds. */
  p50: number;
  p99: number;
  p999: number;
  max: number;
  /** Whether the verdict is the one this case expects (a live token accepted, a revoked one refused). */
  accepted: boolean;
}

/** Per-call latencies (µs) of `calls`, each timed alone; the first WARM are not counted. */
async function timed(
  what: string,
  calls: (() => Promise<{ ok: boolean }>)[],
  expectOk: boolean,
): Promise<CheckFigures> {
  const us: number[] = [];
  for (const [i, call] of calls.entries()) {
    const t = process.hrtime.bigint();
    const v = await call();
    const elapsed = Number(process.hrtime.bigint() - t) / 1000;
    // A verdict other than the expected one means the case measured something else: stop.
    if (v.ok !== expectOk) throw new Error(`${what}: verdict ${JSON.stringify(v)}`);
    if (i >= WARM) us.push(elapsed);
  }
  us.sort((a, b) => a - b);
  const at = (q: number) => us[Math.min(us.length - 1, Math.floor(q * us.length))] ?? 0;
  return {
    what,
    calls: us.length,
    p50: at(0.5),
    p99: at(0.99),
    p999: at(0.999),
    max: at(1),
    accepted: expectOk,
  };
}

/** The three cases, `n` measured calls each (after WARM). */
export async function measureTokenCheck(n: number): Promise<CheckFigures[]> {
  const { privateKey, publicKey } = await generateKeyPair('ES256');
  const jwk = { ...(await exportJWK(publicKey)), kid: 'k1', alg: 'ES256' };
  const revoked = new RevokedGrants();
  for (let i = 0; i < 1000; i++) revoked.add(`grant-revoked-${i}`, Date.now() + 600_000);
  const verifier = accessTokenVerifier({
    issuer: ISSUER,
    audience: AUDIENCE,
    jwks: [jwk],
    revoked,
    clock: { now: () => Date.now() },
  });
  const token = (grant: string, i: number) =>
    new SignJWT({
      client_id: 'platform-1',
      grant_id: grant,
      spiffe_id: 'spiffe://example.org/ns/ai/sa/procurement-agent/linked',
      agent_id: 'agent-linked-01',
      agent_scopes: ['orders:create', 'orders:read'],
      scope: 'dev.ucp.shopping.checkout:manage dev.ucp.shopping.order:read',
      ucp_profile: 'https://platform.example/profile.json',
      jti: `t-${i}`,
    })
      .setProtectedHeader({ alg: 'ES256', typ: 'at+jwt', kid: 'k1' })
      .setIssuer(ISSUER)
      .setAudience(AUDIENCE)
      .setSubject('buyer-admin')
      .setIssuedAt()
      .setExpirationTime('10m')
      .sign(privateKey);

  const seen = await token('grant-live', 0);
  const fresh = await Promise.all(Array.from({ length: WARM + n }, (_, i) => token('grant-live', i + 1)));
  const gone = await token('grant-revoked-7', 0);
  const again = (t: string) => Array.from({ length: WARM + n }, () => () => verifier.verify(t));
  return [
    await timed('token seen before (verified-token cache, then the revoked set)', again(seen), true),
    await timed(
      "token's first call (ECDSA P-256 signature, claims)",
      fresh.map((t) => () => verifier.verify(t)),
      true,
    ),
    await timed('token of a revoked grant (refused, cached)', again(gone), false),
  ];
}

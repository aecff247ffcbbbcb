/**
 * What checking a linked platform's access token costs on an authenticated UCP call (issue 49:
 * ≤ 0.2 ms p99 added, no network call per request): in process, gateway/oauth/access-token.ts's
 * verifier over RFC 9068 tokens (ES256, the claims the authorization server issues), with 1,000
 * grants in the revoked set. Each call timed alone (process.hrtime), after 500 warm-up calls:
 *   tsx bench/tools/token-check-cost.ts
 * - a token seen before (a platform sends one token for its ten minutes): the verified-token
 *   cache, then the revoked set;
 * - a token's first call: the ECDSA P-256 verification and the claims' checks;
 * - a token of a revoked grant (refused).
 * The p99 of each is what the check adds to that call (the rest of the call is the same for an
 * API key: the chain's steps after identity do not depend on the credential).
 */
import { exportJWK, generateKeyPair, SignJWT } from 'jose';
import { accessTokenVerifier } from '../../gateway/oauth/access-token.ts';
import { RevokedGrants } from '../../subgraphs/procurement/identity-linking/links.ts';

const ISSUER = 'https://shop.example';
const AUDIENCE = 'https://shop.example/ucp';
const N = 5000;
const { privateKey, publicKey } = await generateKeyPair('ES256');
const jwk = { ...(await exportJWK(publicKey)), kid: 'k1', alg: 'ES256' };
const clock = { now: () => Date.now() };
const revoked = new RevokedGrants();
for (let i = 0; i < 1000; i++) revoked.add(`grant-revoked-${i}`, Date.now() + 600_000);
const verifier = accessTokenVerifier({ issuer: ISSUER, audience: AUDIENCE, jwks: [jwk], revoked, clock });

const token = (grant: string, n: number) =>
  new SignJWT({
    client_id: 'platform-1',
    grant_id: grant,
    spiffe_id: 'spiffe://example.org/ns/ai/sa/procurement-agent/linked',
    agent_id: 'agent-linked-01',
    agent_scopes: ['orders:create', 'orders:read'],
    scope: 'dev.ucp.shopping.checkout:manage dev.ucp.shopping.order:read',
    ucp_profile: 'https://platform.example/profile.json',
    jti: `t-${n}`,
  })
    .setProtectedHeader({ alg: 'ES256', typ: 'at+jwt', kid: 'k1' })
    .setIssuer(ISSUER)
    .setAudience(AUDIENCE)
    .setSubject('buyer-admin')
    .setIssuedAt()
    .setExpirationTime('10m')
    .sign(privateKey);

/** Per-call latencies (µs) of `calls`, each timed alone; the first `warm` are not counted. */
async function timed(
  what: string,
  calls: (() => Promise<{ ok: boolean }>)[],
  warm: number,
  expectOk: boolean,
) {
  const us: number[] = [];
  for (const [i, call] of calls.entries()) {
    const t = process.hrtime.bigint();
    const v = await call();
    const elapsed = Number(process.hrtime.bigint() - t) / 1000;
    if (v.ok !== expectOk) throw new Error(`${what}: verdict ${JSON.stringify(v)}`);
    if (i >= warm) us.push(elapsed);
  }
  us.sort((a, b) => a - b);
  const at = (q: number) => (us[Math.min(us.length - 1, Math.floor(q * us.length))] as number).toFixed(1);
  console.log(`${what}: p50 ${at(0.5)} µs, p99 ${at(0.99)} µs, max ${at(1)} µs (${us.length} calls)`);
}

const warm = 500;
const seen = await token('grant-live', 0);
await timed(
  'token seen before (cache, then revoked set)',
  Array.from({ length: warm + N }, () => () => verifier.verify(seen)),
  warm,
  true,
);
const fresh = await Promise.all(Array.from({ length: warm + N }, (_, i) => token('grant-live', i + 1)));
await timed(
  'first call of a token (ECDSA P-256 and claims)',
  fresh.map((t) => () => verifier.verify(t)),
  warm,
  true,
);
const gone = await token('grant-revoked-7', 0);
await timed(
  'token of a revoked grant (refused)',
  Array.from({ length: warm + N }, () => () => verifier.verify(gone)),
  warm,
  false,
);

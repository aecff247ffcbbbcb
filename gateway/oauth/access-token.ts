import { createLocalJWKSet, type JWK, jwtVerify } from 'jose';
import { BoundedMap } from '../../lib/bounded-map.ts';
import type { Clock } from '../../lib/clock.ts';
import type { RevokedGrants } from '../../subgraphs/procurement/identity-linking/links.ts';
import { actingScopes } from '../../subgraphs/procurement/identity-linking/links.ts';
import { parseScope } from '../../subgraphs/procurement/identity-linking/scopes.ts';

/** What a verified access token says: the platform, the grant, and the agent identity it acts as. */
export interface LinkedCaller {
  readonly clientId: string;
  readonly grantId: string;
  /** The buyer administrator who consented. */
  readonly subject: string;
  readonly spiffeId: string;
  readonly agentId: string;
  /** The UCP scopes of the token. */
  readonly ucpScopes: readonly string[];
  /** The agent scopes it may use (the identity's, narrowed by the UCP scopes). */
  readonly agentScopes: readonly string[];
  /** The UCP platform profile (URL or origin) the client is bound to. */
  readonly ucpProfile: string;
}

export type AccessTokenVerdict = { ok: true; caller: LinkedCaller } | { ok: false; reason: string };

export interface AccessTokenVerifier {
  verify(token: string): Promise<AccessTokenVerdict>;
}

/** Tokens whose signature and claims were verified, kept until they expire (oldest dropped first). */
const VERIFIED_ENTRIES = 10_000;

/**
 * RFC 9068 access tokens checked where they are used, with no I/O per request: the signature by
 * a key of the authorization server's ring (public JWKs held in process), `typ` at+jwt, `iss`
 * the issuer byte for byte, `aud` the UCP endpoint, `exp` (no leeway), `client_id` and `scope`
 * present, and the grant not in the revoked set (a Map lookup). jose's verify is CPU only (an
 * ECDSA P-256 verification through WebCrypto); a token seen before is not verified again until
 * it expires (a platform sends the same token for its ten minutes), so the usual check is two
 * Map lookups: the verified token, then the revoked set, which is asked on every call.
 */
export function accessTokenVerifier(o: {
  readonly issuer: string;
  readonly audience: string;
  readonly jwks: readonly JWK[];
  readonly revoked: RevokedGrants;
  readonly clock: Clock;
}): AccessTokenVerifier {
  const keys = createLocalJWKSet({ keys: [...o.jwks] });
  const verified = new BoundedMap<string, { caller: LinkedCaller; expMs: number }>(VERIFIED_ENTRIES);
  const live = (caller: LinkedCaller): AccessTokenVerdict =>
    o.revoked.has(caller.grantId, o.clock.now())
      ? { ok: false, reason: 'access token of a revoked grant' }
      : { ok: true, caller };
  return {
    async verify(token) {
      const seen = verified.get(token);
      if (seen) {
        if (seen.expMs > o.clock.now()) return live(seen.caller);
        verified.delete(token);
      }
      let claims: Record<string, unknown>;
      try {
        ({ payload: claims } = await jwtVerify(token, keys, {
          issuer: o.issuer,
          audience: o.audience,
          typ: 'at+jwt',
          algorithms: ['ES256'],
          currentDate: new Date(o.clock.now()),
          requiredClaims: ['exp', 'client_id', 'scope', 'sub'],
        }));
      } catch (err) {
        return { ok: false, reason: `access token refused: ${(err as { code?: string }).code ?? 'invalid'}` };
      }
      const { client_id, grant_id, sub, spiffe_id, agent_id, agent_scopes, scope, ucp_profile } = claims;
      if (
        typeof client_id !== 'string' ||
        typeof grant_id !== 'string' ||
        typeof sub !== 'string' ||
        typeof spiffe_id !== 'string' ||
        typeof agent_id !== 'string' ||
        !Array.isArray(agent_scopes) ||
        typeof scope !== 'string' ||
        typeof ucp_profile !== 'string'
      )
        return { ok: false, reason: 'access token lacks the linked identity' };
      const ucpScopes = parseScope(scope);
      const caller: LinkedCaller = {
        clientId: client_id,
        grantId: grant_id,
        subject: sub,
        spiffeId: spiffe_id,
        agentId: agent_id,
        ucpScopes,
        ucpProfile: ucp_profile,
        agentScopes: actingScopes(
          ucpScopes,
          agent_scopes.filter((s): s is string => typeof s === 'string'),
        ),
      };
      verified.set(token, { caller, expMs: Number(claims.exp) * 1000 });
      return live(caller);
    },
  };
}

import { type CryptoKey, createRemoteJWKSet, importJWK, type JWTVerifyGetKey, jwtVerify } from 'jose';
import { devSigningKey } from '../../../lib/auth/jwt.ts';
import type { Config } from '../../../lib/config.ts';

/**
 * An agent's optional bearer token, checked as an RFC 9068 JWT access token: `typ` at+jwt,
 * an asymmetric signature from the identity provider's keys, `iss`, `aud` (this gateway),
 * `exp`, `iat`, `sub`, `client_id` and `jti` present. Its `scope` is returned for narrowing.
 */
export interface AgentToken {
  readonly subject: string;
  readonly scopes: ReadonlySet<string>;
}

export type TokenVerdict = { ok: true; token: AgentToken } | { ok: false; reason: string };

export interface TokenVerifier {
  verify(token: string, nowMs: number): Promise<TokenVerdict>;
}

const BEARER = /^Bearer ([A-Za-z0-9\-_]+\.[A-Za-z0-9\-_]+\.[A-Za-z0-9\-_]+)$/;

export const bearerOf = (header: string | undefined): string | undefined | null => {
  if (header === undefined) return undefined;
  return BEARER.exec(header)?.[1] ?? null;
};

export function createTokenVerifier(
  config: Pick<Config, 'AUTH_ISSUER' | 'AGENT_TOKEN_AUDIENCE'>,
  keys: JWTVerifyGetKey | CryptoKey,
): TokenVerifier {
  return {
    async verify(token, nowMs) {
      try {
        const { payload } = await jwtVerify(token, keys as JWTVerifyGetKey, {
          typ: 'at+jwt',
          issuer: config.AUTH_ISSUER,
          audience: config.AGENT_TOKEN_AUDIENCE,
          algorithms: ['ES256', 'RS256', 'PS256', 'EdDSA'],
          requiredClaims: ['exp', 'iat', 'sub', 'client_id', 'jti'],
          currentDate: new Date(nowMs),
        });
        const scope = typeof payload.scope === 'string' ? payload.scope : '';
        return {
          ok: true,
          token: { subject: String(payload.sub), scopes: new Set(scope.split(' ').filter(Boolean)) },
        };
      } catch (err) {
        const code = (err as { code?: string }).code ?? 'ERR_JWT_INVALID';
        return { ok: false, reason: code };
      }
    },
  };
}

/** The identity provider's keys: AUTH_JWKS_URL, or the development key under DATA_DIR. */
export async function tokenVerifierFor(
  config: Pick<Config, 'AUTH_ISSUER' | 'AGENT_TOKEN_AUDIENCE' | 'AUTH_JWKS_URL' | 'DATA_DIR'>,
): Promise<TokenVerifier> {
  if (config.AUTH_JWKS_URL)
    return createTokenVerifier(config, createRemoteJWKSet(new URL(config.AUTH_JWKS_URL)));
  const { publicJwk } = await devSigningKey(config.DATA_DIR);
  return createTokenVerifier(config, (await importJWK(publicJwk, 'ES256')) as CryptoKey);
}

import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  type CryptoKey,
  createRemoteJWKSet,
  exportJWK,
  generateKeyPair,
  importJWK,
  type JWK,
  type JWTVerifyGetKey,
  jwtVerify,
  SignJWT,
} from 'jose';
import type { Config } from '../config.ts';
import { writeKeyFile } from '../quote-token/key-file.ts';
import type { Caller } from './caller.ts';

const ALG = 'ES256';

export class TokenError extends Error {
  override name = 'TokenError';
}

export interface CallerVerifier {
  verify(token: string): Promise<Caller>;
}

/** Roles are the union of a `roles` array claim and the OAuth `scope` string. */
export function rolesFromClaims(claims: Record<string, unknown>): Set<string> {
  const roles = new Set<string>();
  if (Array.isArray(claims.roles)) for (const r of claims.roles) if (typeof r === 'string') roles.add(r);
  if (typeof claims.scope === 'string') for (const s of claims.scope.split(' ')) if (s) roles.add(s);
  return roles;
}

const VERIFIED_CACHE_SIZE = 10_000;
const VERIFIED_CACHE_MS = 60_000;

export function createCallerVerifier(
  config: Pick<Config, 'AUTH_ISSUER' | 'AUTH_AUDIENCE'>,
  keys: JWTVerifyGetKey | CryptoKey,
  now: () => number = Date.now,
): CallerVerifier {
  // A frontend or operator sends the same token on every request; verifying its signature
  // each time was the largest single cost of a small query. A verified token is remembered
  // until it expires (at most a minute), so an expired token is still refused on time.
  const verified = new Map<string, { caller: Caller; until: number }>();
  return {
    async verify(token) {
      const hit = verified.get(token);
      if (hit && hit.until > now()) return hit.caller;
      try {
        const { payload } = await jwtVerify(token, keys as JWTVerifyGetKey, {
          issuer: config.AUTH_ISSUER,
          audience: config.AUTH_AUDIENCE,
          algorithms: [ALG, 'RS256', 'EdDSA'],
          currentDate: new Date(now()),
        });
        const caller: Caller = Object.freeze({
          ...(payload.sub ? { subject: payload.sub } : {}),
          roles: rolesFromClaims(payload),
          authenticated: true,
        });
        if (verified.size >= VERIFIED_CACHE_SIZE) verified.clear();
        const exp = typeof payload.exp === 'number' ? payload.exp * 1000 : Number.POSITIVE_INFINITY;
        verified.set(token, { caller, until: Math.min(exp, now() + VERIFIED_CACHE_MS) });
        return caller;
      } catch (err) {
        throw new TokenError(err instanceof Error ? err.message : 'invalid token');
      }
    },
  };
}

/**
 * The embedded default's development signing key: created once under DATA_DIR so that
 * `npm start` and `npm run token` agree. Production sets AUTH_JWKS_URL instead.
 */
export async function devSigningKey(dataDir: string): Promise<{ privateJwk: JWK; publicJwk: JWK }> {
  const file = join(dataDir, 'dev-keys', 'caller-signing.jwk.json');
  try {
    return JSON.parse(readFileSync(file, 'utf8'));
  } catch {
    const { privateKey, publicKey } = await generateKeyPair(ALG, { extractable: true });
    const pair = { privateJwk: await exportJWK(privateKey), publicJwk: await exportJWK(publicKey) };
    try {
      // Created whole and only once: processes started together on one DATA_DIR (a distributed
      // topology on one machine) each made a key, and the last writer won while the others kept
      // their own, so their tokens failed each other's verification.
      writeKeyFile(file, pair, true);
    } catch (err) {
      if ((err as { code?: string }).code !== 'EEXIST') throw err;
      return JSON.parse(readFileSync(file, 'utf8'));
    }
    return pair;
  }
}

export async function callerVerifierFor(
  config: Pick<Config, 'AUTH_ISSUER' | 'AUTH_AUDIENCE' | 'AUTH_JWKS_URL' | 'DATA_DIR'>,
): Promise<CallerVerifier> {
  if (config.AUTH_JWKS_URL)
    return createCallerVerifier(config, createRemoteJWKSet(new URL(config.AUTH_JWKS_URL)));
  const { publicJwk } = await devSigningKey(config.DATA_DIR);
  return createCallerVerifier(config, (await importJWK(publicJwk, ALG)) as CryptoKey);
}

/** Mints a caller token with the development key (the `npm run token` command and tests). */
export async function mintDevToken(
  config: Pick<Config, 'AUTH_ISSUER' | 'AUTH_AUDIENCE' | 'DATA_DIR'>,
  opts: { subject: string; roles: string[]; ttlSeconds?: number },
): Promise<string> {
  const { privateJwk } = await devSigningKey(config.DATA_DIR);
  const key = await importJWK(privateJwk, ALG);
  return new SignJWT({ roles: opts.roles })
    .setProtectedHeader({ alg: ALG, typ: 'JWT' })
    .setIssuer(config.AUTH_ISSUER)
    .setAudience(config.AUTH_AUDIENCE)
    .setSubject(opts.subject)
    .setIssuedAt()
    .setExpirationTime(`${opts.ttlSeconds ?? 3600}s`)
    .sign(key);
}

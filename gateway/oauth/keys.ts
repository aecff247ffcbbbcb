import { hkdfSync } from 'node:crypto';
import { join } from 'node:path';
import type { JWK } from 'jose';
import type { Clock } from '../../lib/clock.ts';
import type { Config } from '../../lib/config.ts';
import { FileQuoteKeyStore } from '../../lib/quote-token/key-store.ts';
import { ACCESS_TOKEN_TTL_S } from '../../subgraphs/procurement/identity-linking/service.ts';

/**
 * The authorization server's ES256 keys: a key ring of the kind that signs quote tokens and UCP
 * order webhooks (lib/quote-token/key-store.ts: a JSON file readable by its owner only, created
 * with one key on first use, `kid` the RFC 7638 thumbprint), in a file of its own
 * (DATA_DIR/keys/oauth-signing.json): access tokens are not signed with the webhook key, so a
 * platform can never pass one off as the other. Every gateway replica reads the same file
 * (a shared secret volume, as for the UCP ring). oidc-provider takes its keys at construction:
 * a key added by rotation signs after a restart; retired keys verify for an access token's life.
 */
export interface OAuthKeys {
  /** Private JWKs for oidc-provider, the signing key first. */
  readonly privateJwks: JWK[];
  /** Public JWKs (jwks_uri and the local token check). */
  readonly publicJwks: JWK[];
  /** Keys for oidc-provider's signed cookies, derived from the signing key (the same on every replica). */
  readonly cookieKeys: string[];
}

export async function oauthKeys(config: Pick<Config, 'DATA_DIR'>, clock: Clock): Promise<OAuthKeys> {
  const ring = await FileQuoteKeyStore.open(join(config.DATA_DIR, 'keys', 'oauth-signing.json'), clock, {
    retentionMs: ACCESS_TOKEN_TTL_S * 1000,
  });
  const { kid, key } = ring.signingKey();
  const jwk = { ...(key.export({ format: 'jwk' }) as JWK), kid, alg: 'ES256', use: 'sig' };
  const cookieKey = Buffer.from(
    hkdfSync('sha256', Buffer.from(String(jwk.d), 'base64url'), Buffer.alloc(0), 'oauth cookies', 32),
  ).toString('base64url');
  return { privateJwks: [jwk], publicJwks: ring.jwks().keys, cookieKeys: [cookieKey] };
}

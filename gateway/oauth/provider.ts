import Provider, { errors } from 'oidc-provider';
import type { Clock } from '../../lib/clock.ts';
import type { Db } from '../../lib/db/index.ts';
import type { Logger } from '../../lib/logger.ts';
import { guardedLookup } from '../../lib/net/guarded-lookup.ts';
import { UCP_SCOPE_NAMES } from '../../subgraphs/procurement/identity-linking/scopes.ts';
import {
  ACCESS_TOKEN_TTL_S,
  type IdentityLinking,
} from '../../subgraphs/procurement/identity-linking/service.ts';
import { sqlAdapterClass } from './adapter.ts';
import type { OAuthKeys } from './keys.ts';

/** Where oidc-provider is mounted (its routes below it); the issuer is the origin itself. */
export const OAUTH_PREFIX = '/oauth';
/** The consent page of the console, one per interaction (./consent.ts). */
export const CONSENT_PREFIX = '/console/link';

export const ROUTES = {
  authorization: '/authorize',
  token: '/token',
  revocation: '/revoke',
  jwks: '/jwks',
} as const;

const REFRESH_TOKEN_TTL_S = 30 * 86_400;

export interface ProviderOptions {
  /** The business's origin (PUBLIC_BASE_URL): the discovery base and `iss`, byte for byte. */
  readonly issuer: string;
  /** The UCP REST endpoint: the one resource (`aud`) tokens are for. */
  readonly resource: string;
  readonly db: Db;
  readonly clock: Clock;
  readonly keys: OAuthKeys;
  readonly linking: IdentityLinking;
  readonly log: Logger;
  /** UCP_PROFILE_ALLOW_INSECURE: a client's jwks_uri may then be fetched from a private address (tests, development). */
  readonly allowPrivateFetch?: boolean;
}

/** How long the fetch of a client's jwks_uri may take. */
const JWKS_FETCH_TIMEOUT_MS = 2500;

/**
 * The authorization server (docs/identity-linking.md): oidc-provider 8 configured for UCP's
 * identity linking only. Authorization code with PKCE S256 (required of every client),
 * `private_key_jwt` for confidential platforms and `none` for public ones, no implicit or
 * hybrid response types, no OpenID userinfo, registration or logout; access tokens are
 * RFC 9068 JWTs for the UCP endpoint carrying the agent identity the buyer linked
 * (extraTokenClaims), refresh tokens rotate on every use, and every grant revocation the
 * library makes (RFC 7009, a replayed code, a reused refresh token) reaches the revoked set.
 */
export function createProvider(o: ProviderOptions): Provider {
  const provider = new Provider(o.issuer, {
    adapter: sqlAdapterClass(o.db, o.clock),
    jwks: { keys: o.keys.privateJwks },
    cookies: { keys: o.keys.cookieKeys },
    clientAuthMethods: ['private_key_jwt', 'none'],
    responseTypes: ['code'],
    pkce: { methods: ['S256'], required: () => true },
    scopes: [],
    claims: {},
    allowOmittingSingleRegisteredRedirectUri: false,
    // A client's jwks_uri is fetched by the library: over the SSRF guard's lookup, as a webhook
    // or a platform profile is, so a name that resolves to a private address is never reached.
    httpOptions: () => ({
      signal: AbortSignal.timeout(JWKS_FETCH_TIMEOUT_MS),
      ...(o.allowPrivateFetch ? {} : { dnsLookup: guardedLookup }),
    }),
    // The UCP profile binding and who registered the client when
    // (subgraphs/procurement/identity-linking/clients.ts), kept on the client.
    extraClientMetadata: { properties: ['ucp_profile', 'registered_at', 'registered_by'] },
    clientDefaults: {
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      token_endpoint_auth_method: 'private_key_jwt',
      id_token_signed_response_alg: 'ES256',
    },
    enabledJWA: { idTokenSigningAlgValues: ['ES256'] },
    routes: ROUTES,
    features: {
      devInteractions: { enabled: false },
      revocation: { enabled: true },
      userinfo: { enabled: false },
      rpInitiatedLogout: { enabled: false },
      resourceIndicators: {
        enabled: true,
        defaultResource: () => o.resource,
        useGrantedResource: () => true,
        getResourceServerInfo: (_ctx: unknown, indicator: string) => {
          if (indicator !== o.resource) throw new errors.InvalidTarget();
          return {
            scope: UCP_SCOPE_NAMES.join(' '),
            audience: o.resource,
            accessTokenTTL: ACCESS_TOKEN_TTL_S,
            accessTokenFormat: 'jwt',
            jwt: { sign: { alg: 'ES256' } },
          };
        },
      },
    },
    interactions: {
      url: (_ctx: unknown, interaction: { uid: string }) => `${CONSENT_PREFIX}/${interaction.uid}`,
    },
    findAccount: async (_ctx: unknown, sub: string) => ({ accountId: sub, claims: async () => ({ sub }) }),
    issueRefreshToken: async (_ctx: unknown, client: { grantTypeAllowed(t: string): boolean }) =>
      client.grantTypeAllowed('refresh_token'),
    rotateRefreshToken: () => true,
    extraTokenClaims: async (
      ctx: { oidc: { client?: { ucp_profile?: unknown } } },
      token: { grantId?: string; kind: string },
    ) => {
      if (token.kind !== 'AccessToken' || !token.grantId) return undefined;
      const link = await o.linking.links.byGrant(token.grantId);
      if (!link || link.revokedAt !== null) throw new errors.InvalidGrant('grant revoked');
      return {
        grant_id: token.grantId,
        spiffe_id: link.identity.spiffeId,
        agent_id: link.identity.agentId,
        agent_scopes: link.identity.scopes,
        ucp_profile: ctx.oidc.client?.ucp_profile,
      };
    },
    // An authorization error that cannot go back to the client (unknown client, a redirect_uri not
    // registered) is RFC 6749's error object, not an HTML page: platforms and tests read it.
    renderError: async (
      ctx: { type: string; body: unknown },
      out: { error: string; error_description?: string },
    ) => {
      ctx.type = 'application/json; charset=utf-8';
      ctx.body = JSON.stringify({ error: out.error, error_description: out.error_description });
    },
    ttl: {
      AccessToken: ACCESS_TOKEN_TTL_S,
      AuthorizationCode: 60,
      RefreshToken: REFRESH_TOKEN_TTL_S,
      Grant: REFRESH_TOKEN_TTL_S,
      Interaction: 600,
      Session: 600,
    },
  });
  // The revoked set of this process is updated synchronously inside recordRevoked; a failure to
  // store or publish it is logged (the other replicas then learn it from their next start only).
  provider.on('grant.revoked', (_ctx: unknown, grantId: string) => {
    o.linking.recordRevoked(grantId, 'oauth').catch((err: unknown) => {
      o.log.error({ err, grantId }, 'grant revocation not stored or published');
    });
  });
  return provider;
}

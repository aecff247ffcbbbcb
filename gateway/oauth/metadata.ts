import { UCP_SCOPE_NAMES } from '../../subgraphs/procurement/identity-linking/scopes.ts';
import { OAUTH_PREFIX, ROUTES } from './provider.ts';

/** Client assertion algorithms taken for private_key_jwt (asymmetric only: no shared secrets). */
export const CLIENT_AUTH_ALGS = ['ES256', 'ES384', 'PS256', 'RS256', 'EdDSA'] as const;

/**
 * RFC 8414 metadata at `/.well-known/oauth-authorization-server` of the origin, the issuer. The
 * endpoints are oidc-provider's under /oauth; what UCP requires is present: scopes_supported,
 * S256, authorization_response_iss_parameter_supported, the auth methods. Pure.
 */
export function authorizationServerMetadata(issuer: string): Record<string, unknown> {
  const at = (route: string) => `${issuer}${OAUTH_PREFIX}${route}`;
  return {
    issuer,
    authorization_endpoint: at(ROUTES.authorization),
    token_endpoint: at(ROUTES.token),
    revocation_endpoint: at(ROUTES.revocation),
    jwks_uri: at(ROUTES.jwks),
    scopes_supported: [...UCP_SCOPE_NAMES],
    response_types_supported: ['code'],
    response_modes_supported: ['query'],
    grant_types_supported: ['authorization_code', 'refresh_token'],
    code_challenge_methods_supported: ['S256'],
    token_endpoint_auth_methods_supported: ['private_key_jwt', 'none'],
    token_endpoint_auth_signing_alg_values_supported: [...CLIENT_AUTH_ALGS],
    revocation_endpoint_auth_methods_supported: ['private_key_jwt', 'none'],
    revocation_endpoint_auth_signing_alg_values_supported: [...CLIENT_AUTH_ALGS],
    authorization_response_iss_parameter_supported: true,
  };
}

/** RFC 9728 metadata of the UCP endpoint, the one protected resource. Pure. */
export function protectedResourceMetadata(resource: string, issuer: string): Record<string, unknown> {
  return {
    resource,
    authorization_servers: [issuer],
    scopes_supported: [...UCP_SCOPE_NAMES],
    bearer_methods_supported: ['header'],
    resource_signing_alg_values_supported: ['ES256'],
    resource_name: 'UCP shopping (checkout, carts and orders)',
  };
}

/**
 * Where RFC 9728 §3.1 puts the resource's metadata: the well-known name between the origin and
 * the resource's path (`/.well-known/oauth-protected-resource/ucp`). The bare name is served too,
 * as identity-linking.md names it.
 */
export function protectedResourcePaths(resource: string): { specific: string; bare: string } {
  const path = new URL(resource).pathname.replace(/\/+$/, '');
  return {
    specific: `/.well-known/oauth-protected-resource${path}`,
    bare: '/.well-known/oauth-protected-resource',
  };
}

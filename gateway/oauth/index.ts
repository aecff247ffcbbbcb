import type { IncomingMessage } from 'node:http';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { callerVerifierFor } from '../../lib/auth/jwt.ts';
import { servedHosts } from '../../lib/http/served-hosts.ts';
import type { Platform } from '../../lib/platform.ts';
import { publicOrigin, ucpApiBaseUrl } from '../../lib/public-origin.ts';
import type { CheckoutApiKeys } from '../../subgraphs/procurement/api-keys/store.ts';
import { identityLinkingFor } from '../../subgraphs/procurement/identity-linking/service.ts';
import type { SpendLedger } from '../../subgraphs/procurement/spend/ledger.ts';
import { type AccessTokenVerifier, accessTokenVerifier } from './access-token.ts';
import { sweepExpired } from './adapter.ts';
import { registerConsent } from './consent.ts';
import { oauthKeys } from './keys.ts';
import {
  authorizationServerMetadata,
  protectedResourceMetadata,
  protectedResourcePaths,
} from './metadata.ts';
import { createProvider, OAUTH_PREFIX, ROUTES } from './provider.ts';

/** oidc-provider's own limit for form bodies (56 kB). */
const OAUTH_BODY_LIMIT = 56 * 1024;

/** What the UCP edge needs from identity linking: the token check and the challenge's parameters. */
export interface LinkingParts {
  readonly tokens: AccessTokenVerifier;
  /** The issuer (the `realm` of challenges). */
  readonly issuer: string;
  /** The RFC 9728 metadata URL (`resource_metadata` of challenges). */
  readonly resourceMetadata: string;
  /** SPIFFE_TRUST_DOMAINS: a linked identity outside them is refused (as an API key's is). */
  readonly trustDomains: readonly string[];
}

/**
 * OAuth 2.0 identity linking (docs/identity-linking.md): oidc-provider mounted under /oauth
 * (its node callback, the request handed over before Fastify reads the body), the RFC 8414 and
 * RFC 9728 metadata at the origin's well-known names, the console's consent page, and the local
 * access-token check the UCP identity step uses.
 */
export async function mountIdentityLinking(
  app: FastifyInstance,
  platform: Platform,
  apiKeys: Pick<CheckoutApiKeys, 'list'>,
  spend: Pick<SpendLedger, 'listPolicies'>,
): Promise<LinkingParts> {
  const { config, clock, log, db } = platform;
  const issuer = publicOrigin(config);
  const resource = ucpApiBaseUrl(config);
  const linking = await identityLinkingFor(platform);
  platform.onClose(() => linking.close());
  await sweepExpired(db, clock);
  const keys = await oauthKeys(config, clock);
  const provider = createProvider({
    issuer,
    resource,
    db,
    clock,
    keys,
    linking,
    log,
    allowPrivateFetch: config.UCP_PROFILE_ALLOW_INSECURE,
  });

  // Only the endpoints the metadata names (and the authorization endpoint's resume after consent)
  // reach oidc-provider; its other routes (OpenID discovery, userinfo, logout, …) are not served.
  const callback = provider.callback();
  const handOver = async (req: FastifyRequest, reply: FastifyReply) => {
    reply.hijack();
    const raw = req.raw as IncomingMessage & { originalUrl?: string; body?: unknown };
    // A body Fastify read (token, revocation) is handed over as read; oidc-provider parses it.
    if (req.body !== undefined) raw.body = req.body;
    raw.originalUrl = raw.url;
    raw.url = (raw.url ?? '/').slice(OAUTH_PREFIX.length) || '/';
    callback(raw, reply.raw);
  };
  const unreached = async () => undefined;
  const at = (route: string) => `${OAUTH_PREFIX}${route}`;
  app.get(at(ROUTES.authorization), { onRequest: handOver }, unreached);
  app.get(`${at(ROUTES.authorization)}/:uid`, { onRequest: handOver }, unreached);
  app.get(at(ROUTES.jwks), { onRequest: handOver }, unreached);
  await app.register(async (scope) => {
    // Fastify reads the body, so an oversized one is 413 however it arrives (announced or
    // chunked), in RFC 6749's error shape; oidc-provider judges its content type and fields.
    scope.removeAllContentTypeParsers();
    scope.addContentTypeParser('*', { parseAs: 'string' }, (_req, body, done) => done(null, body));
    scope.setErrorHandler((err: { statusCode?: number }, _req, reply) => {
      const status = err.statusCode === 413 ? 413 : 400;
      return reply
        .code(status)
        .header('cache-control', 'no-store')
        .type('application/json')
        .send(
          JSON.stringify({
            error: 'invalid_request',
            error_description:
              status === 413 ? 'The request body is too large.' : 'The request body cannot be read.',
          }),
        );
    });
    for (const route of [ROUTES.token, ROUTES.revocation])
      scope.post(at(route), { bodyLimit: OAUTH_BODY_LIMIT, preHandler: handOver }, unreached);
  });

  const asMetadata = JSON.stringify(authorizationServerMetadata(issuer));
  app.get('/.well-known/oauth-authorization-server', async (_req, reply) =>
    reply.header('cache-control', 'public, max-age=3600').type('application/json').send(asMetadata),
  );
  const prm = JSON.stringify(protectedResourceMetadata(resource, issuer));
  const paths = protectedResourcePaths(resource);
  for (const path of new Set([paths.specific, paths.bare]))
    app.get(path, async (_req, reply) =>
      reply.header('cache-control', 'public, max-age=3600').type('application/json').send(prm),
    );

  registerConsent(app, {
    provider,
    resource,
    verifier: await callerVerifierFor(config),
    keys: apiKeys,
    spend,
    linking,
    served: servedHosts(config),
    clock,
    log,
  });

  return {
    tokens: accessTokenVerifier({
      issuer,
      audience: resource,
      jwks: keys.publicJwks,
      revoked: linking.revoked,
      clock,
    }),
    issuer,
    resourceMetadata: `${issuer}${paths.specific}`,
    trustDomains: config.SPIFFE_TRUST_DOMAINS,
  };
}

import type { GraphQLResolverMap } from '@apollo/subgraph/dist/schema-helper/index.js';
import { GraphQLError } from 'graphql';
import type { RequestContext } from '../../../lib/auth/context.ts';
import { mappingErrors } from '../../../lib/graphql/error-mapping.ts';
import { ClientInputInvalid } from './clients.ts';
import type { PlatformLink } from './links.ts';
import type { IdentityLinking } from './service.ts';

class LinkNotFound extends Error {
  override name = 'LinkNotFound';
}

/** Identity-linking errors → GraphQL errors with a code, as the checkout API key fields do. */
function graphqlError(err: unknown): unknown {
  if (err instanceof ClientInputInvalid)
    return new GraphQLError(err.message, { extensions: { code: 'BAD_USER_INPUT', field: err.field } });
  if (err instanceof LinkNotFound)
    return new GraphQLError(err.message, { extensions: { code: 'NOT_FOUND' } });
  return err;
}

const mapped = mappingErrors(graphqlError);
const iso = (t: number | null) => (t === null ? null : new Date(t).toISOString());

const view = (l: PlatformLink) => ({
  grantId: l.grantId,
  clientId: l.clientId,
  clientName: l.clientName,
  linkedBy: l.accountId,
  spiffeId: l.identity.spiffeId,
  agentId: l.identity.agentId,
  scopes: l.scopes,
  createdAt: iso(l.createdAt),
  revokedAt: iso(l.revokedAt),
  revokedBy: l.revokedBy,
});

/** `jwks` as JSON text of a JWK Set: its keys, or BAD_USER_INPUT. */
function keysOf(jwks: string | null | undefined): Record<string, unknown>[] | undefined {
  if (jwks === null || jwks === undefined || jwks.trim() === '') return undefined;
  let doc: unknown;
  try {
    doc = JSON.parse(jwks);
  } catch {
    throw new ClientInputInvalid('jwks', 'jwks: not JSON');
  }
  const keys = (doc as { keys?: unknown })?.keys;
  if (!Array.isArray(keys) || keys.some((k) => typeof k !== 'object' || k === null || Array.isArray(k)))
    throw new ClientInputInvalid('jwks', 'jwks: a JWK Set, {"keys": [...]}');
  return keys as Record<string, unknown>[];
}

/** An OAuthClient of the schema from oidc-provider client metadata. */
const clientView = (m: Record<string, unknown>) => ({
  clientId: m.client_id,
  name: m.client_name,
  redirectUris: m.redirect_uris,
  tokenEndpointAuthMethod: m.token_endpoint_auth_method,
  jwksUri: typeof m.jwks_uri === 'string' ? m.jwks_uri : null,
  ucpProfile: m.ucp_profile,
  registeredAt: typeof m.registered_at === 'string' ? m.registered_at : null,
  registeredBy: typeof m.registered_by === 'string' ? m.registered_by : null,
});

function operatorOf(ctx: RequestContext): string {
  const sub = ctx.caller.subject;
  if (!sub)
    throw new GraphQLError('revoking a linked platform needs a token with a subject (the operator)', {
      extensions: { code: 'FORBIDDEN' },
    });
  return sub;
}

/** Resolvers of the identity-linking fields of schemas/procurement.graphql (agents:admin from @requiresRole). */
export function identityLinkingResolvers(
  linking: IdentityLinking,
  opts: { allowInsecureProfiles: boolean },
): GraphQLResolverMap<RequestContext> {
  return {
    Query: {
      linkedPlatforms: mapped(async () => (await linking.links.list()).map(view)),
      oauthClients: mapped(async () => (await linking.clients()).map(clientView)),
    },
    Mutation: {
      registerOAuthClient: mapped(
        async (
          _: unknown,
          {
            input,
          }: {
            input: {
              name: string;
              redirectUris: string[];
              jwks?: string | null;
              jwksUri?: string | null;
              ucpProfile: string;
            };
          },
          ctx: RequestContext,
        ) => {
          const jwks = keysOf(input.jwks);
          const m = await linking.registerClient(
            {
              name: input.name,
              redirectUris: input.redirectUris,
              ucpProfile: input.ucpProfile,
              ...(jwks ? { jwks } : {}),
              ...(input.jwksUri ? { jwksUri: input.jwksUri } : {}),
            },
            { ...opts, by: ctx.caller.subject ?? null },
          );
          return clientView(m);
        },
      ),
      // Idempotent: a revoked link is answered as it is (its first revocation).
      revokeLinkedPlatform: mapped(
        async (_: unknown, { grantId }: { grantId: string }, ctx: RequestContext) => {
          const by = operatorOf(ctx);
          const link = await linking.links.byGrant(grantId);
          if (!link) throw new LinkNotFound(`linked platform ${grantId.slice(0, 80)} not found`);
          await linking.revoke(grantId, by);
          return view((await linking.links.byGrant(grantId)) ?? link);
        },
      ),
    },
  };
}

import type { GraphQLResolverMap } from '@apollo/subgraph/dist/schema-helper/index.js';
import { GraphQLError } from 'graphql';
import type { RequestContext } from '../../../lib/auth/context.ts';
import { mappingErrors } from '../../../lib/graphql/error-mapping.ts';
import { newSigningSecret } from '../webhooks/secret.ts';
import { ApiKeyConflict, ApiKeyInputInvalid, ApiKeyNotFound } from './errors.ts';
import type { CheckoutApiKeys } from './store.ts';
import type { CheckoutApiKey, CheckoutApiKeyInput } from './types.ts';

/**
 * Checkout API key errors → GraphQL errors with a code, in one place, as the webhook
 * operations report theirs (no `extensions.http`: see webhooks/graphql.ts).
 */
function graphqlError(err: unknown): unknown {
  if (err instanceof ApiKeyInputInvalid)
    return new GraphQLError(err.message, { extensions: { code: 'BAD_USER_INPUT', field: err.field } });
  if (err instanceof ApiKeyNotFound)
    return new GraphQLError(err.message, { extensions: { code: 'NOT_FOUND' } });
  if (err instanceof ApiKeyConflict)
    return new GraphQLError(err.message, { extensions: { code: 'CONFLICT' } });
  return err;
}

const mapped = mappingErrors(graphqlError);
const iso = (t: number | null | undefined) => (t == null ? null : new Date(t).toISOString());

/** A key as the SDL's CheckoutApiKey (ISO 8601 times, as the webhook types). */
const view = (k: CheckoutApiKey) => ({
  ...k,
  createdAt: iso(k.createdAt),
  revokedAt: iso(k.revokedAt),
  lastUsedAt: iso(k.lastUsedAt),
});

/** The operator who acts: the subject of the token (recorded as createdBy / revokedBy). */
function operatorOf(ctx: RequestContext): string {
  const sub = ctx.caller.subject;
  if (!sub)
    throw new GraphQLError('issuing or revoking a key needs a token with a subject (the operator)', {
      extensions: { code: 'FORBIDDEN' },
    });
  return sub;
}

/** Resolvers of the checkout API key fields of schemas/procurement.graphql (role agents:admin from its @requiresRole). */
export function apiKeyResolvers(keys: CheckoutApiKeys): GraphQLResolverMap<RequestContext> {
  return {
    Query: {
      checkoutApiKeys: mapped(async () => (await keys.list()).map(view)),
    },
    Mutation: {
      issueCheckoutApiKey: mapped(
        async (_: unknown, { input }: { input: CheckoutApiKeyInput }, ctx: RequestContext) => {
          const issued = await keys.issue(input, operatorOf(ctx));
          return { key: issued.key, apiKey: view(issued.apiKey) };
        },
      ),
      // Idempotent: revoking a revoked key answers it as it is (first revocation's time and operator).
      revokeCheckoutApiKey: mapped(async (_: unknown, { id }: { id: string }, ctx: RequestContext) => {
        await keys.revoke(id, operatorOf(ctx));
        const key = await keys.get(id);
        if (!key) throw new ApiKeyNotFound(`checkout API key ${id.slice(0, 80)} not found`);
        return view(key);
      }),
      setCheckoutWebhook: mapped(async (_: unknown, { id, url }: { id: string; url: string }) => {
        const signingSecret = newSigningSecret();
        return { apiKey: view(await keys.setWebhook(id, url, signingSecret)), signingSecret };
      }),
    },
  };
}

import { GraphQLError } from 'graphql';
import { mappingErrors } from '../../../lib/graphql/error-mapping.ts';
import { WebhookConflict, WebhookInputInvalid, WebhookNotFound } from './errors.ts';
import type { WebhookAdmin } from './service.ts';
import type { DeliveryStatus } from './types.ts';

/**
 * Webhook errors → GraphQL errors with a code, in one place (anything else stays a 5xx). No
 * `extensions.http` status: a subgraph answering 4xx over HTTP makes the distributed gateway
 * report the call itself as failed (INTERNAL_SERVER_ERROR) instead of passing the error on.
 */
function graphqlError(err: unknown): unknown {
  if (err instanceof WebhookInputInvalid)
    return new GraphQLError(err.message, {
      extensions: { code: 'BAD_USER_INPUT', field: err.field },
    });
  if (err instanceof WebhookNotFound)
    return new GraphQLError(err.message, { extensions: { code: 'NOT_FOUND' } });
  if (err instanceof WebhookConflict)
    return new GraphQLError(err.message, { extensions: { code: 'CONFLICT' } });
  return err;
}

const mapped = mappingErrors(graphqlError);

/** GraphQL enums are upper case; the store's statuses are lower case. */
const upper = <T extends { status: string }>(x: T) => ({ ...x, status: x.status.toUpperCase() });

/** Resolvers of the webhook fields of schemas/procurement.graphql (roles from its @requiresRole). */
export function webhookResolvers(admin: WebhookAdmin) {
  return {
    Query: {
      webhookEndpoints: mapped(async () => (await admin.endpoints()).map(upper)),
      webhookDeliveries: mapped(
        async (
          _: unknown,
          a: { endpointId: string; status?: Uppercase<DeliveryStatus> | null; limit?: number | null },
        ) =>
          (
            await admin.deliveries({
              endpointId: a.endpointId,
              status: a.status ? (a.status.toLowerCase() as DeliveryStatus) : null,
              limit: a.limit ?? null,
            })
          ).map(upper),
      ),
    },
    Mutation: {
      registerWebhookEndpoint: mapped(
        async (_: unknown, a: { url: string; eventTypes: string[]; description?: string | null }) => {
          const r = await admin.register(a);
          return { endpoint: upper(r.endpoint), signingSecret: r.signingSecret };
        },
      ),
      disableWebhookEndpoint: mapped(async (_: unknown, a: { endpointId: string }) =>
        upper(await admin.disable(a.endpointId)),
      ),
      rotateWebhookSecret: mapped(async (_: unknown, a: { endpointId: string }) => {
        const r = await admin.rotateSecret(a.endpointId);
        return { endpoint: upper(r.endpoint), signingSecret: r.signingSecret };
      }),
      replayWebhookDelivery: mapped(async (_: unknown, a: { deliveryId: string }) =>
        upper(await admin.replay(a.deliveryId)),
      ),
    },
  };
}

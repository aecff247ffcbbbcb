import { randomUUID } from 'node:crypto';
import type { Clock } from '../../../lib/clock.ts';
import { EventTypes } from '../../../lib/events/cloudevent.ts';
import { freeText } from '../../../lib/text/free-text.ts';
import { checkEndpointUrl } from './endpoint-url.ts';
import { WebhookConflict, WebhookInputInvalid, WebhookNotFound } from './errors.ts';
import { newSigningSecret } from './secret.ts';
import type { WebhookStore } from './store.ts';
import type { DeliveryStatus, WebhookDelivery, WebhookEndpoint } from './types.ts';

/** The events an endpoint may subscribe to: the order events of the procurement outbox. */
export const WEBHOOK_EVENT_TYPES: readonly string[] = [
  EventTypes.OrderPlaced,
  EventTypes.OrderCancelled,
  EventTypes.OrderApprovalRequested,
  EventTypes.OrderApproved,
  EventTypes.OrderRejected,
  EventTypes.OrderExpired,
  EventTypes.OrderShipped,
];

export const MAX_DESCRIPTION = 500;
export const MAX_LIST = 200;
/** After a rotation the old secret still signs (beside the new one) for this long. */
export const ROTATION_GRACE_MS = 24 * 3_600_000;

export interface Registered {
  readonly endpoint: WebhookEndpoint;
  /** Shown once: only the store keeps it after this reply (HMAC needs the secret itself). */
  readonly signingSecret: string;
}

/** What operators do with webhooks (the GraphQL resolvers call it). */
export interface WebhookAdmin {
  register(input: {
    url: string;
    eventTypes: readonly string[];
    description?: string | null;
  }): Promise<Registered>;
  endpoints(): Promise<WebhookEndpoint[]>;
  disable(endpointId: string): Promise<WebhookEndpoint>;
  rotateSecret(endpointId: string): Promise<Registered>;
  deliveries(q: {
    endpointId: string;
    status?: DeliveryStatus | null;
    limit?: number | null;
  }): Promise<WebhookDelivery[]>;
  replay(deliveryId: string): Promise<WebhookDelivery>;
}

export interface AdminOptions {
  readonly store: WebhookStore;
  readonly clock: Clock;
  readonly allowPrivateUrls: boolean;
  readonly maxEndpoints: number;
  /** A replayed delivery is due now: the local worker should look. */
  readonly onReplay: () => void;
  /** An endpoint was registered: the process's index of subscribed event types must know it. */
  readonly onRegistered?: () => Promise<void>;
}

const ID = /^wh[ed]_[0-9a-f]{32}$/;
const newEndpointId = () => `whe_${randomUUID().replace(/-/g, '')}`;

/** An id that cannot exist is unknown without asking the store. */
function known(id: string, what: string): string {
  if (!ID.test(id)) throw new WebhookNotFound(`${what} ${id.slice(0, 80)} not found`);
  return id;
}

function eventTypesOf(raw: readonly string[]): string[] {
  if (raw.length === 0)
    throw new WebhookInputInvalid('eventTypes', 'eventTypes: name at least one event type');
  const unknown = raw.find((t) => !WEBHOOK_EVENT_TYPES.includes(t));
  if (unknown !== undefined)
    throw new WebhookInputInvalid(
      'eventTypes',
      `eventTypes: ${JSON.stringify(unknown.slice(0, 100))} is not one of ${WEBHOOK_EVENT_TYPES.join(', ')}`,
    );
  return [...new Set(raw)];
}

function descriptionOf(raw: string | null | undefined): string | null {
  // A text column: node-postgres would send a lone surrogate as U+FFFD, storing another text than the one given.
  const d = freeText(raw, { max: MAX_DESCRIPTION, required: false });
  if (!d.ok) throw new WebhookInputInvalid('description', `description ${d.reason}`);
  return d.text;
}

export function createWebhookAdmin(o: AdminOptions): WebhookAdmin {
  const now = () => new Date(o.clock.now());
  return {
    async register(input) {
      const url = checkEndpointUrl(input.url, o.allowPrivateUrls);
      if (!url.ok) throw new WebhookInputInvalid('url', `url ${url.reason}`);
      const eventTypes = eventTypesOf(input.eventTypes);
      const description = descriptionOf(input.description);
      if ((await o.store.countEndpoints()) >= o.maxEndpoints)
        throw new WebhookConflict(`at most ${o.maxEndpoints} endpoints may be registered`);
      const signingSecret = newSigningSecret();
      const endpoint = await o.store.insertEndpoint({
        endpointId: newEndpointId(),
        url: url.url,
        eventTypes,
        description,
        secret: signingSecret,
        createdAt: now(),
      });
      await o.onRegistered?.();
      return { endpoint, signingSecret };
    },
    endpoints: () => o.store.listEndpoints(o.maxEndpoints),
    disable: (endpointId) =>
      o.store.disableEndpoint(known(endpointId, 'endpoint'), 'disabled by an operator', now()),
    async rotateSecret(endpointId) {
      const signingSecret = newSigningSecret();
      const at = now();
      const endpoint = await o.store.rotateSecret(
        known(endpointId, 'endpoint'),
        signingSecret,
        new Date(at.getTime() + ROTATION_GRACE_MS),
      );
      return { endpoint, signingSecret };
    },
    deliveries: ({ endpointId, status, limit }) =>
      o.store.listDeliveries({
        endpointId: known(endpointId, 'endpoint'),
        ...(status ? { status } : {}),
        limit: Math.min(MAX_LIST, Math.max(1, limit ?? 50)),
      }),
    async replay(deliveryId) {
      const d = await o.store.replay(known(deliveryId, 'delivery'), now());
      o.onReplay();
      return d;
    },
  };
}

import { Counter, Histogram } from 'prom-client';
import { migrate } from '../../../lib/db/index.ts';
import type { Platform } from '../../../lib/platform.ts';
import { acpApiBaseUrl, publicOrigin, ucpApiBaseUrl } from '../../../lib/public-origin.ts';
import { checkoutApiKeysFor } from '../api-keys/index.ts';
import { checkoutSessionStoreFor } from '../checkout/cached.ts';
import { checkoutMigrations } from '../checkout/migrations.ts';
import { type AcpRouting, createAcpRouting } from './acp-routing.ts';
import { sqlAcpEndpointStore } from './acp-store.ts';
import { webhookMigrations } from './migrations.ts';
import { httpSender, type Sender } from './sender.ts';
import { createWebhookAdmin, WEBHOOK_EVENT_TYPES, type WebhookAdmin } from './service.ts';
import { sqlWebhookStore, type WebhookStore } from './store.ts';
import {
  createUcpRouting,
  type UcpOrderReader,
  type UcpRouting,
  ucpRoutingMigrations,
} from './ucp-routing.ts';
import type { UcpSigner } from './ucp-signature.ts';
import { ucpSigningKey } from './ucp-signing-key.ts';
import { sqlUcpEndpointStore } from './ucp-store.ts';
import { createDeliveryWorker, type DeliveryWorker } from './worker.ts';

export interface Webhooks {
  readonly admin: WebhookAdmin;
  readonly store: WebhookStore;
  readonly worker: DeliveryWorker;
  close(): Promise<void>;
}

export interface WebhooksOptions {
  /** Tests swap the HTTP sender; everything else is the platform's. */
  readonly sender?: Sender;
  /**
   * How long the ACP routing trusts what it knows of the keys' webhooks (default 5 s: another
   * replica's change is seen within it). Tests of one process set 0 to see every change at once.
   */
  readonly acpSyncTtlMs?: number;
  /** The orders (their current state and shipments), for UCP's order events; without it none are sent. */
  readonly orders?: UcpOrderReader;
}

/** The business profile a UCP platform fetches: the signer named in UCP-Agent, whose signing_keys verify. */
export const ucpProfileUrl = (config: Platform['config']): string =>
  `${publicOrigin(config)}/.well-known/ucp`;

/**
 * Signed webhooks of order events, in every procurement process: the admin operations, the
 * fan-out from the event bus into delivery rows (operators' Standard Webhooks endpoints, and
 * the ACP webhook of the checkout API key whose session placed a checkout order), and a
 * delivery worker. One step a function, in the order they open.
 */
export async function createWebhooks(platform: Platform, opts: WebhooksOptions = {}): Promise<Webhooks> {
  const { config, clock } = platform;
  await migrate(platform.db, webhookMigrations);
  const store = sqlWebhookStore(platform.db);
  const sender = opts.sender ?? httpSenderOf(config, clock);
  const worker = deliveryWorkerOf(platform, store, sender);
  const subscribed = await subscriptionsOf(platform, store);
  const admin = createWebhookAdmin({
    store,
    clock,
    allowPrivateUrls: config.WEBHOOK_ALLOW_PRIVATE_URLS,
    maxEndpoints: config.WEBHOOK_MAX_ENDPOINTS,
    onReplay: () => worker.kick(),
    onRegistered: subscribed.refresh,
  });
  const { acp, keys } = await acpRoutingOf(platform, store, opts);
  const ucp = await ucpRoutingOf(platform, opts);
  const offKeys = keys.onWebhookChange((id) => acp.sync(id, new Date(clock.now())).then(() => {}));
  await acp
    .syncAll(new Date(clock.now()))
    .catch((err: unknown) =>
      platform.log.warn({ err }, 'ACP webhook endpoints not synced at start; routing syncs each'),
    );
  const unsubscribe = fanOut(platform, { store, worker, subscribed, acp, ucp });
  // Pending deliveries left by a previous run (or another replica) are picked up at start.
  worker.kick();
  let closing: Promise<void> | undefined;
  const close = () =>
    (closing ??= (async () => {
      for (const off of unsubscribe) off();
      offKeys();
      subscribed.close();
      await worker.close();
      await sender.close();
    })());
  // Closed by the platform too (before the database it was registered after): a process
  // stopped by a signal closes its platform, not its modules. An attempt cut short by the exit
  // is tried again when its lease ends.
  platform.onClose(close);
  return { admin, store, worker, close };
}

/**
 * The HTTP sender. UCP order webhooks are signed with the business's key (ucp-signing-key.ts),
 * opened on the first UCP delivery: a process that never sends one never creates the key file.
 */
function httpSenderOf(config: Platform['config'], clock: Platform['clock']): Sender {
  const ucpSigner: UcpSigner = {
    profileUrl: ucpProfileUrl(config),
    signingKey: () => ucpSigningKey(config, clock),
  };
  return httpSender({
    timeoutMs: config.WEBHOOK_TIMEOUT_MS,
    allowPrivate: config.WEBHOOK_ALLOW_PRIVATE_URLS,
    ucp: ucpSigner,
  });
}

/** The attempts and finished deliveries as metrics (docs/slos.md), every series present from the start. */
function deliveryMetrics(platform: Platform) {
  const attempts = new Counter({
    name: 'webhook_attempts_total',
    help: 'Webhook delivery attempts by outcome (delivered, retry, failed, gone)',
    labelNames: ['outcome'],
    registers: [platform.metrics],
  });
  for (const outcome of ['delivered', 'retry', 'failed', 'gone']) attempts.labels(outcome).inc(0);
  const finished = new Histogram({
    name: 'webhook_delivery_seconds',
    help: 'Finished webhook deliveries by end (delivered, dead): seconds from the creation of the delivery to its last attempt',
    labelNames: ['outcome'],
    // The SLO's bound (60 s) is a bucket; the retries' 15 min backoff and 8 h cap are too.
    buckets: [0.1, 0.5, 1, 5, 15, 60, 300, 900, 3600, 28800, 86400],
    registers: [platform.metrics],
  });
  for (const outcome of ['delivered', 'dead']) finished.zero({ outcome });
  return {
    onAttempt: (outcome: string) => attempts.inc({ outcome }),
    onFinished: (outcome: string, seconds: number) => finished.labels(outcome).observe(seconds),
  };
}

function deliveryWorkerOf(platform: Platform, store: WebhookStore, sender: Sender): DeliveryWorker {
  const { config, clock, log } = platform;
  return createDeliveryWorker({
    store,
    sender,
    clock,
    log,
    policy: {
      maxAttempts: config.WEBHOOK_MAX_ATTEMPTS,
      baseMs: config.WEBHOOK_RETRY_BASE_MS,
      maxDelayMs: config.WEBHOOK_RETRY_MAX_DELAY_MS,
    },
    batchSize: config.WEBHOOK_BATCH_SIZE,
    timeoutMs: config.WEBHOOK_TIMEOUT_MS,
    pollIntervalMs: config.WEBHOOK_POLL_INTERVAL_MS,
    retentionMs: config.WEBHOOK_RETENTION_DAYS * 86_400_000,
    ...deliveryMetrics(platform),
    onGone: async (endpointId, now) => {
      await store.disableEndpoint(endpointId, 'the receiver answered 410 Gone', now);
      log.warn({ endpointId }, 'webhook endpoint disabled: the receiver answered 410 Gone');
    },
  });
}

/** What fanOut asks before it writes: does some active endpoint subscribe to this type? */
interface Subscriptions {
  /** False only when it is known that nobody subscribes (not knowing yet: true, the store decides). */
  mayWant(type: string): boolean;
  refresh(): Promise<void>;
  close(): void;
}

/**
 * The event types some active endpoint subscribes to, so an order event nobody subscribes to
 * costs no SQL statement (without this every order paid an INSERT … SELECT on the store: the
 * embedded order path ran at a sixth of its rate). Read at start, after a registration in
 * this process, and at every poll interval (a registration through another replica). Not
 * knowing yet (undefined) means asking the store, as before. A registration is seen at once
 * by the replica that made it, and every replica receives every event, so that replica
 * creates the deliveries even while the others have not refreshed.
 */
async function subscriptionsOf(platform: Platform, store: WebhookStore): Promise<Subscriptions> {
  const { config, log } = platform;
  let subscribed: ReadonlySet<string> | undefined;
  const refresh = async () => {
    try {
      const endpoints = await store.listEndpoints(config.WEBHOOK_MAX_ENDPOINTS);
      subscribed = new Set(
        endpoints
          .filter((e) => e.status === 'active' && e.scheme === 'standard-webhooks')
          .flatMap((e) => e.eventTypes),
      );
    } catch (err) {
      log.warn({ err }, 'webhook subscriptions not refreshed; the last known stay');
    }
  };
  await refresh();
  const refresher = setInterval(() => void refresh(), config.WEBHOOK_POLL_INTERVAL_MS);
  refresher.unref();
  return {
    mayWant: (type) => !subscribed || subscribed.has(type),
    refresh,
    close: () => clearInterval(refresher),
  };
}

/**
 * ACP order webhooks (docs/webhooks.md, "ACP order webhooks"): each checkout API key with a
 * webhook has an `acp` endpoint, kept in line with the key when an operator sets its webhook
 * or revokes it (awaited before the reply), at start, and whenever an order event is routed.
 * The sessions table is the gateway's; created here too, so a procurement process started
 * first reads an empty one.
 */
async function acpRoutingOf(platform: Platform, store: WebhookStore, opts: WebhooksOptions) {
  const keys = await checkoutApiKeysFor(platform);
  await migrate(platform.db, checkoutMigrations);
  const acp = createAcpRouting({
    endpoints: sqlAcpEndpointStore(platform.db),
    keys,
    sessions: checkoutSessionStoreFor(platform.db),
    eventTypes: WEBHOOK_EVENT_TYPES,
    origin: acpApiBaseUrl(platform.config),
    disable: (endpointId, reason, now) => store.disableEndpoint(endpointId, reason, now),
    ...(opts.acpSyncTtlMs !== undefined ? { syncTtlMs: opts.acpSyncTtlMs } : {}),
  });
  return { acp, keys };
}

/**
 * UCP order events (docs/ucp-webhooks.md): the full order to the webhook URL of the platform
 * profile that created the session; none without the orders to read.
 */
async function ucpRoutingOf(platform: Platform, opts: WebhooksOptions): Promise<UcpRouting | undefined> {
  if (!opts.orders) return undefined;
  await migrate(platform.db, ucpRoutingMigrations);
  return createUcpRouting({
    sessions: checkoutSessionStoreFor(platform.db),
    orders: opts.orders,
    endpoints: sqlUcpEndpointStore(platform.db),
    db: platform.db,
    eventTypes: WEBHOOK_EVENT_TYPES,
    restEndpoint: ucpApiBaseUrl(platform.config),
  });
}

/**
 * Every replica receives every event (fan-out) and inserts the same rows: the unique
 * (endpoint, event) makes all but the first insert do nothing. One handler per kind of
 * delivery, so a failure of one kind does not cost the others their event. Returns the
 * unsubscriptions.
 */
function fanOut(
  platform: Platform,
  d: {
    store: WebhookStore;
    worker: DeliveryWorker;
    subscribed: Subscriptions;
    acp: AcpRouting;
    ucp: UcpRouting | undefined;
  },
): (() => void)[] {
  const now = () => new Date(platform.clock.now());
  const { ucp } = d;
  return WEBHOOK_EVENT_TYPES.flatMap((type) => [
    platform.bus.subscribe(type, async (event) => {
      if (!d.subscribed.mayWant(type)) return;
      if ((await d.store.enqueue(event, now())) > 0) d.worker.kick();
    }),
    platform.bus.subscribe(type, async (event) => {
      if ((await d.acp.route(event, now())) > 0) d.worker.kick();
    }),
    ...(ucp
      ? [
          platform.bus.subscribe(type, async (event) => {
            if ((await ucp.route(event, now())) > 0) d.worker.kick();
          }),
        ]
      : []),
  ]);
}

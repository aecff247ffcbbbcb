import { existsSync } from 'node:fs';
import { join } from 'node:path';
import type { FastifyInstance } from 'fastify';
import { migrate } from '../../../lib/db/index.ts';
import { removeFileDurably, writeFileDurably } from '../../../lib/durable-file.ts';
import type { Platform } from '../../../lib/platform.ts';
import { acpApiBaseUrl, checkoutPermalink } from '../../../lib/public-origin.ts';
import { cartMigrations } from '../../../subgraphs/procurement/cart/migrations.ts';
import { sqlCartStore } from '../../../subgraphs/procurement/cart/sql.ts';
import { checkoutSessionStoreFor } from '../../../subgraphs/procurement/checkout/cached.ts';
import { checkoutMigrations } from '../../../subgraphs/procurement/checkout/migrations.ts';
import type { CheckoutSessionStore } from '../../../subgraphs/procurement/checkout/store.ts';
import { type CartService, createCartService } from '../cart/service.ts';
import { createPricer } from '../checkout/price.ts';
import type { RedemptionsPort } from '../checkout/redemptions.ts';
import { type CartQuoter, type CheckoutService, createCheckoutService } from '../checkout/service.ts';
import { idempotencyMigrations, sqlIdempotencyStore } from '../idempotency/sql.ts';
import type { IdempotencyStore } from '../idempotency/store.ts';
import { type ApiKeyVerifier, apiKeyVerifier, checkoutApiKeysFor } from '../identity/api-key.ts';
import type { AgentChainParts } from '../index.ts';
import { serveAcpToolsOnMcp } from '../mcp/acp/binding.ts';
import type { CheckoutRehearsals } from '../rehearsal.ts';
import { discoveryDocument, registerDiscovery } from './discovery.ts';
import { registerAcpRoutes } from './routes.ts';

/** Beside the embedded store (DATA_DIR): written when a stop let every session write land. */
const CLEAN_STOP_FILE = 'checkout-stopped-cleanly';
/** How old a warm-up's leftover session must be to be deleted at start (gateway/agent/rehearsal.ts). */
const REHEARSAL_LEFTOVER_MS = 3_600_000;
/** How often expired carts are deleted. */
const CART_PURGE_MS = 3_600_000;

/** What UCP (gateway/agent/ucp/) shares with ACP: one session service, one idempotency store, one key verifier. */
export interface AcpParts {
  readonly checkout: CheckoutService;
  /** The one cart service of both protocols (docs/carts.md). */
  readonly carts: CartService;
  readonly idempotency: IdempotencyStore;
  readonly keys: ApiKeyVerifier;
  /** The warm-up's checkout rehearsals (one set of its sessions for both protocols). */
  readonly rehearsals: CheckoutRehearsals;
}

/**
 * This system as an Agentic Commerce Protocol merchant (docs/acp.md): discovery at
 * /.well-known/acp.json and the five checkout operations at api_base_url, over the agent
 * chain's own parts (scope policy, block and rate-limit stores, the order route's idempotency
 * store, the order domain, spend, audit) and the edge's cart quote.
 */
export async function mountAcp(
  app: FastifyInstance,
  platform: Platform,
  chain: AgentChainParts,
  quoter: CartQuoter,
  redemptions: RedemptionsPort,
): Promise<AcpParts> {
  const { config, clock, log } = platform;
  await migrate(platform.db, checkoutMigrations);
  await migrate(platform.db, cartMigrations);
  const { idempotency, replyTtlMs } = await acpIdempotency(platform, chain);
  const { rehearsals, rehearsed } = checkoutRehearsals(app, platform);
  const store = await openSessionStore(platform);
  const checkout = createCheckoutService({
    store,
    quoter,
    orders: chain.orders,
    spend: chain.spend,
    redemptions,
    clock,
    log,
    sessionTtlMs: config.ACP_SESSION_TTL_SECONDS * 1000,
    completionHoldMs: config.IDEMPOTENCY_IN_FLIGHT_MS,
  });
  const carts = mountCarts(app, platform, quoter, checkout);
  await recoverUnlessStoppedCleanly(app, platform, { store, checkout, idempotency });
  const apiBase = acpApiBaseUrl(config);
  const basePath = new URL(apiBase).pathname.replace(/\/+$/, '');
  registerDiscovery(app, discoveryDocument(apiBase, config.ACP_CURRENCIES));
  const keys = apiKeyVerifier(await checkoutApiKeysFor(platform), {
    clock,
    trustDomains: config.SPIFFE_TRUST_DOMAINS,
  });
  // The same five operations as MCP tools on /mcp (docs/mcp.md, "ACP tools"), same key verifier.
  serveAcpToolsOnMcp(app, { keys, policy: chain.policy, basePath });
  await registerAcpRoutes(app, {
    clock,
    log,
    keys,
    policy: chain.policy,
    blocks: chain.blocks,
    buckets: chain.buckets,
    bucketPolicy: chain.bucketPolicy,
    idempotency,
    replyTtlMs,
    audit: chain.audit,
    checkout,
    limits: { currencies: config.ACP_CURRENCIES, defaultRegion: config.ACP_DEFAULT_REGION },
    render: renderOptions(config, apiBase),
    basePath,
    bodyLimit: config.ACP_BODY_LIMIT_BYTES,
    carts: {
      carts,
      currency: (config.ACP_CURRENCIES[0] ?? 'usd').toUpperCase(),
      defaultRegion: config.ACP_DEFAULT_REGION,
    },
    rehearsals,
  });
  // The warm-up's rehearsed sessions (completed on orders that were rolled back) leave no row;
  // this process's own only (another replica may be warming up beside it).
  app.rehearsals.onFinish(async () => {
    await store.remove([...rehearsed]);
    rehearsed.clear();
  });
  return { checkout, carts, idempotency, keys, rehearsals };
}

/**
 * ACP replays a reply for 24 hours, across a restart too (§6.6): with Redis the chain's own
 * store does; embedded, the same store's SQL adapter does (the in-memory one forgets).
 * (With PostgreSQL and no Redis, replicas share no in-flight state: the chain's store, as /v2.)
 */
async function acpIdempotency(
  platform: Platform,
  chain: AgentChainParts,
): Promise<{ idempotency: IdempotencyStore; replyTtlMs: number }> {
  const { config } = platform;
  if (platform.redis || platform.db.kind !== 'pglite')
    return { idempotency: chain.idempotency, replyTtlMs: config.IDEMPOTENCY_TTL_SECONDS * 1000 };
  await migrate(platform.db, idempotencyMigrations);
  // §6.6: at least 24 hours, whatever IDEMPOTENCY_TTL_SECONDS says for /v2.
  const replyTtlMs = Math.max(config.IDEMPOTENCY_TTL_SECONDS, 86_400) * 1000;
  const idempotency = await sqlIdempotencyStore(platform.db, {
    ttlMs: replyTtlMs,
    inFlightMs: config.IDEMPOTENCY_IN_FLIGHT_MS,
  });
  return { idempotency, replyTtlMs };
}

/** The warm-up's checkout rehearsals, and the ids of the sessions this process rehearsed. */
function checkoutRehearsals(app: FastifyInstance, platform: Platform) {
  const rehearsed = new Set<string>();
  const rehearsals: CheckoutRehearsals = {
    of: (req) => app.rehearsals.of(req),
    count: (kind) => app.rehearsals.count(kind),
    trustDomain: platform.config.SPIFFE_TRUST_DOMAINS[0] ?? 'example.org',
    created: (id) => rehearsed.add(id),
  };
  return { rehearsals, rehearsed };
}

/**
 * Embedded, this process alone writes the store: sessions are kept in memory beside it, the
 * same store the order webhooks' routing reads (cached.ts). What a crash during an earlier
 * warm-up left of its rehearsed sessions (an hour old: a replica warming up now has newer ones)
 * is deleted before this one starts.
 */
async function openSessionStore(platform: Platform): Promise<CheckoutSessionStore> {
  const store = checkoutSessionStoreFor(platform.db);
  await store
    .removeRehearsedBefore(platform.clock.now() - REHEARSAL_LEFTOVER_MS)
    .catch((err: unknown) =>
      platform.log.warn({ err }, 'rehearsed checkout sessions of an earlier warm-up not deleted'),
    );
  return store;
}

/** Carts: priced as sessions are (the cart quote), kept in their own table, nothing reserved. */
function mountCarts(
  app: FastifyInstance,
  platform: Platform,
  quoter: CartQuoter,
  checkout: CheckoutService,
): CartService {
  const { config, clock, log } = platform;
  const carts = createCartService({
    store: sqlCartStore(platform.db),
    price: createPricer({ quoter }),
    clock,
    log,
    ttlMs: config.CART_TTL_SECONDS * 1000,
    // A cart whose checkout was completed is cleared (cart.md).
    sessions: { get: (id, owner) => checkout.get(id, owner) },
  });
  // Expired carts nobody reads again are deleted hourly (a read deletes one on the way); every
  // replica may, the DELETE is the same.
  const purge = setInterval(() => {
    carts.purgeExpired().catch((err: unknown) => log.warn({ err }, 'expired carts not purged; next hour'));
  }, CART_PURGE_MS);
  purge.unref();
  app.addHook('onClose', async () => clearInterval(purge));
  return carts;
}

/**
 * Embedded, a completion's session is written behind its answer (cached.ts). A stop that let
 * every such write land leaves a mark beside the store; without it (a crash, a first start),
 * before any request, sessions whose write was lost follow their order.
 */
async function recoverUnlessStoppedCleanly(
  app: FastifyInstance,
  platform: Platform,
  d: { store: CheckoutSessionStore; checkout: CheckoutService; idempotency: IdempotencyStore },
): Promise<void> {
  const { config, clock } = platform;
  const cleanStop =
    d.store.hold && config.EMBEDDED_DB === 'disk' ? join(config.DATA_DIR, CLEAN_STOP_FILE) : undefined;
  if (cleanStop) {
    // Removed durably: a mark that came back after a power loss would skip the recovery.
    if (existsSync(cleanStop)) removeFileDurably(cleanStop);
    else await d.checkout.recoverCompletions();
  }
  // Writes that answers did not wait for (a completed session, a stored reply) land before the
  // store closes.
  app.addHook('onClose', async () => {
    const written = await d.store.settled?.();
    await d.idempotency.settled?.();
    if (cleanStop && written) writeFileDurably(cleanStop, `${new Date(clock.now()).toISOString()}\n`);
  });
}

/** How a session is rendered: the merchant's links (ACP_LINKS, `type=url`) and its permalink. */
function renderOptions(config: Platform['config'], apiBase: string) {
  return {
    links: config.ACP_LINKS.map((l) => {
      const at = l.indexOf('=');
      return { type: l.slice(0, at), url: l.slice(at + 1) };
    }),
    permalink: (sessionId: string) => checkoutPermalink(apiBase, sessionId),
  };
}

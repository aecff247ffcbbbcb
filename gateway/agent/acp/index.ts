import type { FastifyInstance } from 'fastify';
import { migrate } from '../../../lib/db/index.ts';
import type { Platform } from '../../../lib/platform.ts';
import { cachedSessionStore } from '../../../subgraphs/procurement/checkout/cached.ts';
import { checkoutMigrations } from '../../../subgraphs/procurement/checkout/migrations.ts';
import { sqlCheckoutSessionStore } from '../../../subgraphs/procurement/checkout/sql.ts';
import type { RedemptionsPort } from '../checkout/redemptions.ts';
import { type CartQuoter, createCheckoutService } from '../checkout/service.ts';
import { idempotencyMigrations, sqlIdempotencyStore } from '../idempotency/sql.ts';
import { apiKeyVerifier, checkoutApiKeysFor } from '../identity/api-key.ts';
import type { AgentChainParts } from '../index.ts';
import { serveAcpToolsOnMcp } from '../mcp/acp/binding.ts';
import { discoveryDocument, registerDiscovery } from './discovery.ts';
import { registerAcpRoutes } from './routes.ts';

/** Where the ACP API is, as agents see it: ACP_API_BASE_URL, else PUBLIC_BASE_URL (or http://HOST:PORT) + /acp. */
export function acpBaseUrl(config: Platform['config']): URL {
  if (config.ACP_API_BASE_URL) return new URL(config.ACP_API_BASE_URL);
  return new URL('/acp', publicOrigin(config));
}

export const publicOrigin = (config: Platform['config']): string =>
  config.PUBLIC_BASE_URL ?? `http://${config.HOST}:${config.PORT}`;

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
): Promise<void> {
  const { config, clock, log } = platform;
  await migrate(platform.db, checkoutMigrations);
  // ACP replays a reply for 24 hours, across a restart too (§6.6): with Redis the chain's own
  // store does; embedded, the same store's SQL adapter does (the in-memory one forgets).
  let idempotency = chain.idempotency;
  if (!platform.redis) {
    await migrate(platform.db, idempotencyMigrations);
    idempotency = await sqlIdempotencyStore(platform.db, {
      ttlMs: config.IDEMPOTENCY_TTL_SECONDS * 1000,
      inFlightMs: config.IDEMPOTENCY_IN_FLIGHT_MS,
    });
  }
  const base = acpBaseUrl(config);
  const basePath = base.pathname.replace(/\/+$/, '');
  const origin = publicOrigin(config).replace(/\/+$/, '');
  const checkout = createCheckoutService({
    // Embedded, this process alone writes the store: sessions are kept in memory beside it.
    store:
      platform.db.kind === 'pglite'
        ? cachedSessionStore(sqlCheckoutSessionStore(platform.db))
        : sqlCheckoutSessionStore(platform.db),
    quoter,
    orders: chain.orders,
    spend: chain.spend,
    redemptions,
    clock,
    log,
    sessionTtlMs: config.ACP_SESSION_TTL_SECONDS * 1000,
  });
  registerDiscovery(app, discoveryDocument(base.href.replace(/\/+$/, ''), config.ACP_CURRENCIES));
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
    audit: chain.audit,
    checkout,
    limits: { currencies: config.ACP_CURRENCIES, defaultRegion: config.ACP_DEFAULT_REGION },
    render: {
      links: config.ACP_LINKS.map((l) => {
        const at = l.indexOf('=');
        return { type: l.slice(0, at), url: l.slice(at + 1) };
      }),
      orderUrl: (orderId) => `${origin}/api/v2/procurement/orders/${orderId}`,
    },
    basePath,
    bodyLimit: config.ACP_BODY_LIMIT_BYTES,
  });
}

import type { FastifyInstance } from 'fastify';
import type { Platform } from '../../../lib/platform.ts';
import { publicOrigin, ucpApiBaseUrl } from '../../../lib/public-origin.ts';
import { ucpPublicJwks, ucpRequestKeys } from '../../../subgraphs/procurement/webhooks/ucp-signing-key.ts';
import type { CatalogService } from '../../catalog/service.ts';
import type { LinkingParts } from '../../oauth/index.ts';
import type { AcpParts } from '../acp/index.ts';
import type { AgentChainParts } from '../index.ts';
import { serveUcpToolsOnMcp } from '../mcp/ucp/binding.ts';
import { signedCheckouts } from './ap2.ts';
import { registerUcpCatalogRoutes } from './catalog.ts';
import {
  DEFAULT_MERCHANT_NAMESPACE,
  defaultNamespaceInPublic,
  paymentHandlerName,
  paymentHandlers,
} from './payment.ts';
import {
  HANDLER_PATH,
  purchaseOrderHandlerSchema,
  purchaseOrderHandlerSpec,
} from './payment-handler-schema.ts';
import { profileFetcher } from './platform-profile.ts';
import { businessProfile, registerBusinessProfile } from './profile.ts';
import { fetchBudget } from './profile-budget.ts';
import { registerUcpRoutes } from './routes.ts';
import { ucpSignatureVerifier } from './signature.ts';

/**
 * SEAM (docs/ucp-coordination.md): the public JWKs order webhooks are signed with, for the
 * profile's `signing_keys`. UCP-B exports them from subgraphs/procurement/webhooks/ucp-signing-key.ts
 * (`ucpPublicJwks`): the key ring every process on the same UCP_SIGNING_KEYS_FILE (or DATA_DIR) shares.
 */
async function webhookSigningKeys(platform: Platform): Promise<Record<string, unknown>[]> {
  return ucpPublicJwks(platform.config, platform.clock) as Promise<Record<string, unknown>[]>;
}

/**
 * This system as a Universal Commerce Protocol business (docs/ucp.md): the profile at
 * /.well-known/ucp, the checkout REST binding and GET /orders/{id} under the REST endpoint, on
 * the same session service, idempotency store and API keys as ACP (gateway/agent/acp/), and the
 * agent chain's own parts (scope policy, block and rate-limit stores, the order domain, audit).
 */
export async function mountUcp(
  app: FastifyInstance,
  platform: Platform,
  chain: AgentChainParts,
  acp: AcpParts,
  catalog: CatalogService,
  linking?: LinkingParts,
): Promise<void> {
  const { config, clock, log } = platform;
  const origin = publicOrigin(config);
  const restEndpoint = ucpApiBaseUrl(config);
  const basePath = new URL(restEndpoint).pathname.replace(/\/+$/, '');
  const handlers = paymentHandlers(config.UCP_MERCHANT_NAMESPACE, origin);
  registerPaymentHandlerDocuments(app, paymentHandlerName(config.UCP_MERCHANT_NAMESPACE), origin);
  if (defaultNamespaceInPublic(config.UCP_MERCHANT_NAMESPACE, restEndpoint))
    log.warn(
      { namespace: DEFAULT_MERCHANT_NAMESPACE, restEndpoint },
      'UCP_MERCHANT_NAMESPACE is left at com.example on a public endpoint: set it to your own reverse-DNS domain',
    );
  registerBusinessProfile(app, async () =>
    businessProfile({
      restEndpoint,
      mcpEndpoint: `${origin}/mcp`,
      paymentHandlers: handlers,
      signingKeys: await webhookSigningKeys(platform),
      identityLinking: linking !== undefined,
    }),
  );
  const profiles = profileFetcher({
    clock,
    ttlMs: config.UCP_PROFILE_CACHE_SECONDS * 1000,
    maxEntries: config.UCP_PROFILE_CACHE_ENTRIES,
    timeoutMs: config.UCP_PROFILE_TIMEOUT_MS,
    allowInsecure: config.UCP_PROFILE_ALLOW_INSECURE,
    ports: config.UCP_PROFILE_PORTS,
    failureTtlMs: config.UCP_PROFILE_FAILURE_CACHE_SECONDS * 1000,
    budget: fetchBudget({
      clock,
      perSourcePerMinute: config.UCP_PROFILE_FETCH_BUDGET_PER_SOURCE,
      globalPerMinute: config.UCP_PROFILE_FETCH_BUDGET_GLOBAL,
      concurrency: config.UCP_PROFILE_FETCH_CONCURRENCY,
    }),
    log,
  });
  platform.onClose(() => profiles.close());
  const continueUrl = `${origin}/`;
  // The five checkout tools on /mcp (checkout-mcp.md), each running its route below in process.
  serveUcpToolsOnMcp(app, { basePath });
  const signatures = ucpSignatureVerifier({
    profiles,
    clock,
    trustDomain: config.SPIFFE_TRUST_DOMAINS[0] ?? 'example.org',
  });
  await registerUcpRoutes(app, {
    clock,
    log,
    keys: acp.keys,
    signatures,
    profiles,
    policy: chain.policy,
    blocks: chain.blocks,
    buckets: chain.buckets,
    bucketPolicy: chain.bucketPolicy,
    idempotency: acp.idempotency,
    audit: chain.audit,
    checkout: acp.checkout,
    carts: { carts: acp.carts, defaultRegion: config.ACP_DEFAULT_REGION, continueUrl },
    orders: chain.orders,
    // The key ring that signs order webhooks signs checkouts too: one set of signing_keys.
    ap2: {
      clock,
      ...ucpRequestKeys(config, clock),
      audience: `${origin}/.well-known/ucp`,
      used: acp.idempotency,
      // Below the idempotency store's retention, so a mandate is remembered as long as it is usable.
      maxAgeS: Math.min(3600, config.IDEMPOTENCY_TTL_SECONDS),
      signed: signedCheckouts(),
    },
    render: {
      paymentHandlers: handlers,
      links: config.ACP_LINKS.map((l) => {
        const at = l.indexOf('=');
        const type = l.slice(0, at);
        return { type: type === 'terms_of_use' ? 'terms_of_service' : type, url: l.slice(at + 1) };
      }),
      orderUrl: (orderId) => `${restEndpoint}/orders/${encodeURIComponent(orderId)}`,
      // The console's Approvals page, on the card of the session's order.
      continueUrl: (s) => `${origin}/console/approvals?order=${encodeURIComponent(s.orderId ?? '')}`,
    },
    basePath,
    restEndpoint,
    continueUrl,
    defaultRegion: config.ACP_DEFAULT_REGION,
    bodyLimit: config.ACP_BODY_LIMIT_BYTES,
    linking,
    rehearsals: acp.rehearsals,
    // The catalog's search and lookup under the same endpoint (gateway/agent/ucp/catalog.ts).
    more: (scope, signResponse) =>
      registerUcpCatalogRoutes(scope, {
        signResponse,
        clock,
        log,
        keys: acp.keys,
        signatures,
        profiles,
        buckets: chain.buckets,
        bucketPolicy: chain.bucketPolicy,
        audit: chain.audit,
        catalog,
        continueUrl,
        defaultRegion: config.ACP_DEFAULT_REGION,
        bodyLimit: config.ACP_BODY_LIMIT_BYTES,
        linking,
      }),
  });
}

/** The purchase-order handler's spec and schema, public as the profile is (cacheable an hour). */
function registerPaymentHandlerDocuments(app: FastifyInstance, name: string, origin: string): void {
  const schema = JSON.stringify(purchaseOrderHandlerSchema(name, origin));
  const spec = purchaseOrderHandlerSpec(name, origin);
  app.get(`${HANDLER_PATH}/schema.json`, async (_req, reply) =>
    reply.header('cache-control', 'public, max-age=3600').type('application/schema+json').send(schema),
  );
  app.get(`${HANDLER_PATH}/spec.md`, async (_req, reply) =>
    reply.header('cache-control', 'public, max-age=3600').type('text/markdown; charset=utf-8').send(spec),
  );
}

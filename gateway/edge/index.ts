import type { FastifyInstance } from 'fastify';
import { callerVerifierFor } from '../../lib/auth/jwt.ts';
import type { SubgraphModule, SubgraphName } from '../../lib/graphql/subgraph.ts';
import { servedHosts } from '../../lib/http/served-hosts.ts';
import type { Platform } from '../../lib/platform.ts';
import type { PromotionEngine } from '../../subgraphs/promotions/api.ts';
import { mountAcp } from '../agent/acp/index.ts';
import { localRedemptions, type RedemptionsPort, remoteRedemptions } from '../agent/checkout/redemptions.ts';
import { checkoutApiKeysFor } from '../agent/identity/api-key.ts';
import { type AgentGatewayState, mountAgentGateway } from '../agent/index.ts';
import { mountUcp } from '../agent/ucp/index.ts';
import { catalogServiceFor } from '../catalog/index.ts';
import { registerContracts } from '../contracts/index.ts';
import { mountIdentityLinking } from '../oauth/index.ts';
import { registerOperatorRoutes } from '../operator/index.ts';
import { registerQuoteRoutes } from './quote/index.ts';

/**
 * What the edge routes (agent orders, cart quote, quote-token keys) are built from. `local`
 * holds the subgraph modules running in this process (embedded topology); in the distributed
 * topology it is empty and the edge reaches services over HTTP at the configured URLs.
 */
export interface EdgeDeps {
  readonly platform: Platform;
  readonly local: Partial<Record<SubgraphName, SubgraphModule>>;
}

/**
 * Registers the edge's REST routes on the gateway process, in this order: the served contracts
 * (whose hook refuses GraphQL to agent identities), the agent purchase gateway
 * (POST /api/v2/procurement/orders and POST /v2/orders), the operator API over its state
 * (/api/v2/operator/…), then the cart quote
 * (GET /cart/quote, POST /cart/quote/verify, /.well-known/jwks.json). Returns the agent
 * gateway's state (its audit log and order port: the GraphQL endpoint audits operators'
 * approval decisions there).
 */
export async function registerEdgeRoutes(app: FastifyInstance, deps: EdgeDeps): Promise<AgentGatewayState> {
  await registerContracts(app, deps.platform);
  const agentState = await mountAgentGateway(app, deps.platform, deps.local.procurement);
  await registerOperatorRoutes(app, {
    verifier: await callerVerifierFor(deps.platform.config),
    trustDomains: deps.platform.config.SPIFFE_TRUST_DOMAINS,
    servedHosts: servedHosts(deps.platform.config),
    state: agentState,
    clock: deps.platform.clock,
    log: deps.platform.log,
  });
  const quotes = await registerQuoteRoutes(app, deps);
  // ACP checkout sessions: the same chain parts, priced by the same quote (docs/acp.md).
  const promotionsApi = (deps.local.promotions as { api?: PromotionEngine } | undefined)?.api;
  let redemptions: RedemptionsPort;
  if (promotionsApi) redemptions = localRedemptions(promotionsApi);
  else {
    const remote = remoteRedemptions(
      deps.platform.config.PROMOTIONS_URL,
      deps.platform.config.GATEWAY_SHARED_SECRET,
    );
    deps.platform.onClose(() => remote.close());
    redemptions = remote;
  }
  // The catalog's search and lookup, every variant priced by the same quote (docs/catalog.md).
  const catalog = await catalogServiceFor(deps.platform, deps.local, quotes, agentState.chain.spend.ledger);
  agentState.catalog.bind(catalog);
  // Sessions see stock (the quote's catalog entries), which GET /cart/quote does not show, and
  // take the merchant's own variant ids (its feed's) for the SKUs they name.
  const quoter = {
    quote: quotes.stockedQuote,
    inventoryLevels: quotes.inventoryLevels,
    resolveItems: catalog.skuOf,
  };
  const acp = await mountAcp(app, deps.platform, agentState.chain, quoter, redemptions);
  // Identity linking: the OAuth 2.0 authorization server platforms link buyers' accounts with
  // (docs/identity-linking.md); its tokens are one more credential of the UCP identity step.
  const linking = await mountIdentityLinking(
    app,
    deps.platform,
    await checkoutApiKeysFor(deps.platform),
    agentState.chain.spend.ledger,
  );
  // UCP: a second thin edge over the same session service, store and key verifier (docs/ucp.md).
  await mountUcp(app, deps.platform, agentState.chain, acp, catalog, linking);
  return agentState;
}

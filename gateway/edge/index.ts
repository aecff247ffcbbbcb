import type { FastifyInstance } from 'fastify';
import type { SubgraphModule, SubgraphName } from '../../lib/graphql/subgraph.ts';
import type { Platform } from '../../lib/platform.ts';
import { mountAgentGateway } from '../agent/index.ts';
import { registerContracts } from '../contracts/index.ts';
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

/** Registers the edge's REST routes on the gateway process. */
export async function registerEdgeRoutes(_app: FastifyInstance, _deps: EdgeDeps): Promise<void> {
  // Agent purchase gateway (POST /api/v2/procurement/orders, POST /v2/orders) and the cart
  // quote (GET /cart/quote, /.well-known/jwks.json) register here.
  await registerContracts(_app, _deps.platform); // served OpenAPI documents; agents refused GraphQL
  await mountAgentGateway(_app, _deps.platform, _deps.local.procurement);
  await registerQuoteRoutes(_app, _deps);
}

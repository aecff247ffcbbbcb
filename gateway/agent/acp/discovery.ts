import type { FastifyInstance } from 'fastify';
import { DISCOUNT_EXTENSION } from './render.ts';
import { ACP_VERSION, SUPPORTED_VERSIONS } from './version.ts';

export const DISCOVERY_PATH = '/.well-known/acp.json';

/**
 * The discovery document (RFC discovery, `DiscoveryResponse` in the bundle), public and
 * cacheable for an hour as the RFC asks. It names no payment methods: the RFC keeps them out of
 * discovery (§3.3) and the schema allows no such field; a session's `capabilities.payment`
 * says this merchant takes none but a purchase order number (docs/acp.md).
 */
export function discoveryDocument(apiBaseUrl: string, currencies: readonly string[], carts = true) {
  return {
    protocol: {
      name: 'acp',
      version: ACP_VERSION,
      supported_versions: [...SUPPORTED_VERSIONS],
    },
    api_base_url: apiBaseUrl,
    transports: ['rest', 'mcp'],
    capabilities: {
      // rfc.cart.md §6: `carts` among the services when the Cart API is served.
      services: carts ? ['checkout', 'carts'] : ['checkout'],
      extensions: [{ name: DISCOUNT_EXTENSION.name }],
      supported_currencies: [...currencies],
    },
  };
}

export function registerDiscovery(app: FastifyInstance, doc: ReturnType<typeof discoveryDocument>): void {
  const body = JSON.stringify(doc);
  app.get(DISCOVERY_PATH, async (_req, reply) =>
    reply.header('cache-control', 'public, max-age=3600').type('application/json').send(body),
  );
}

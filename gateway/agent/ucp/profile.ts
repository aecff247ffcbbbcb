import type { FastifyInstance } from 'fastify';
import { UCP_SCOPES } from '../../../subgraphs/procurement/identity-linking/scopes.ts';
import { UCP_VERSION } from './schema/index.ts';

/**
 * The business profile at `/.well-known/ucp` (overview.md, "Business Profile"): the protocol
 * version, the `dev.ucp.shopping` service over REST and MCP, the capabilities this merchant
 * implements (checkout, order, cart, the discount and fulfillment extensions of checkout,
 * catalog search and lookup), the
 * one payment handler (buying on account, ./payment.ts) and the keys order webhooks are signed
 * with. Public, no authentication, `Cache-Control: public, max-age=3600` (at least 60 s, never
 * private/no-store, as "Hosting" asks).
 */

const SPEC = `https://ucp.dev/${UCP_VERSION}/specification`;
const SCHEMAS = `https://ucp.dev/${UCP_VERSION}/schemas`;

export const CHECKOUT = 'dev.ucp.shopping.checkout';
export const ORDER = 'dev.ucp.shopping.order';
export const DISCOUNT = 'dev.ucp.shopping.discount';
export const FULFILLMENT = 'dev.ucp.shopping.fulfillment';
export const CART = 'dev.ucp.shopping.cart';
export const BUYER_CONSENT = 'dev.ucp.shopping.buyer_consent';
/** The AP2 mandates extension (ap2-mandates.md; ./ap2.ts). */
export const AP2 = 'dev.ucp.shopping.ap2_mandate';

/** Each capability this merchant implements, with the capability it extends (if any). */
export const BUSINESS_CAPABILITIES: readonly {
  name: string;
  page: string;
  schema: string;
  extends?: string;
  config?: Record<string, unknown>;
}[] = [
  { name: CHECKOUT, page: 'checkout', schema: 'shopping/checkout.json' },
  { name: ORDER, page: 'order', schema: 'shopping/order.json' },
  { name: CART, page: 'cart', schema: 'shopping/cart.json' },
  { name: DISCOUNT, page: 'discount', schema: 'shopping/discount.json', extends: CHECKOUT },
  { name: FULFILLMENT, page: 'fulfillment', schema: 'shopping/fulfillment.json', extends: CHECKOUT },
  { name: BUYER_CONSENT, page: 'buyer-consent', schema: 'shopping/buyer_consent.json', extends: CHECKOUT },
  // Mandates as SD-JWT VCs with key binding (the only format the tag names); the business's
  // keys are the profile's signing_keys.
  {
    name: AP2,
    page: 'ap2-mandates',
    schema: 'shopping/ap2_mandate.json',
    extends: CHECKOUT,
    config: { vp_formats_supported: { 'dc+sd-jwt': {} } },
  },
  { name: 'dev.ucp.shopping.catalog.search', page: 'catalog/search', schema: 'shopping/catalog_search.json' },
  { name: 'dev.ucp.shopping.catalog.lookup', page: 'catalog/lookup', schema: 'shopping/catalog_lookup.json' },
];

export interface ProfileInput {
  /** The REST endpoint (UCP_API_BASE_URL, else PUBLIC_BASE_URL + /ucp). */
  readonly restEndpoint: string;
  /** The MCP endpoint (the public origin + /mcp). */
  readonly mcpEndpoint: string;
  /** The payment handlers registry (./payment.ts). */
  readonly paymentHandlers: Record<string, unknown[]>;
  /** The public JWKs order webhooks are signed with (UCP-B's ucpPublicJwks). */
  readonly signingKeys: readonly Record<string, unknown>[];
  /** The OAuth 2.0 authorization server is mounted (gateway/oauth/): declare identity linking. */
  readonly identityLinking?: boolean;
}

export const IDENTITY_LINKING = 'dev.ucp.common.identity_linking';

/**
 * `dev.ucp.common.identity_linking` (identity-linking.md): `config.scopes` holds the hard gates
 * (checkout, cart and order reading need a linked identity, or this system's other platform
 * credentials), each with its description; the same names are the RFC 8414
 * `scopes_supported`. Pure.
 */
export function identityLinkingCapability(): Record<string, unknown> {
  return {
    version: UCP_VERSION,
    spec: `${SPEC}/identity-linking`,
    schema: `${SCHEMAS}/common/identity_linking.json`,
    config: {
      scopes: Object.fromEntries(
        UCP_SCOPES.filter((s) => s.gates).map((s) => [s.scope, { description: { plain: s.description } }]),
      ),
    },
  };
}

export function businessProfile(p: ProfileInput): Record<string, unknown> {
  const service = (transport: 'rest' | 'mcp', endpoint: string, schema: string) => ({
    version: UCP_VERSION,
    spec: `${SPEC}/overview`,
    transport,
    endpoint,
    schema: `https://ucp.dev/${UCP_VERSION}/services/shopping/${schema}`,
  });
  return {
    ucp: {
      version: UCP_VERSION,
      services: {
        'dev.ucp.shopping': [
          service('rest', p.restEndpoint, 'rest.openapi.json'),
          service('mcp', p.mcpEndpoint, 'mcp.openrpc.json'),
        ],
      },
      capabilities: Object.fromEntries([
        ...BUSINESS_CAPABILITIES.map((c) => [
          c.name,
          [
            {
              version: UCP_VERSION,
              spec: `${SPEC}/${c.page}`,
              schema: `${SCHEMAS}/${c.schema}`,
              ...(c.extends ? { extends: c.extends } : {}),
              ...(c.config ? { config: c.config } : {}),
            },
          ],
        ]),
        ...(p.identityLinking ? [[IDENTITY_LINKING, [identityLinkingCapability()]]] : []),
      ]),
      payment_handlers: p.paymentHandlers,
    },
    signing_keys: [...p.signingKeys],
  };
}

/** GET /.well-known/ucp; the keys are read per request (a rotation shows without a restart). */
export function registerBusinessProfile(
  app: FastifyInstance,
  build: () => Promise<Record<string, unknown>>,
): void {
  app.get('/.well-known/ucp', async (_req, reply) =>
    reply
      .header('cache-control', 'public, max-age=3600')
      .type('application/json')
      .send(JSON.stringify(await build())),
  );
}

/**
 * The capability intersection (overview.md, "Intersection Algorithm"): every business capability
 * the platform also lists at a common version (the highest), then extensions whose parent is
 * not in the result are pruned, repeatedly. Pure.
 */
export function negotiate(platform: ReadonlyMap<string, readonly string[]>): Map<string, string> {
  const out = new Map<string, string>();
  for (const c of BUSINESS_CAPABILITIES) {
    const mutual = (platform.get(c.name) ?? []).filter((v) => v === UCP_VERSION);
    if (mutual.length > 0) out.set(c.name, mutual.sort().at(-1) as string);
  }
  for (let pruned = true; pruned; ) {
    pruned = false;
    for (const c of BUSINESS_CAPABILITIES)
      if (c.extends && out.has(c.name) && !out.has(c.extends)) {
        out.delete(c.name);
        pruned = true;
      }
  }
  return out;
}

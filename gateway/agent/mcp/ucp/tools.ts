import type { ToolAnnotations } from '@modelcontextprotocol/sdk/types.js';
import type { ListedTool } from '../server.ts';

/**
 * The five checkout tools of UCP's MCP binding (checkout-mcp.md, services/shopping/mcp.openrpc.json
 * at v2026-04-08), each the REST operation of the UCP routes (gateway/agent/ucp/routes.ts) it runs
 * in process. Arguments are the binding's: `meta` (`ucp-agent.profile` required;
 * `idempotency-key` required for complete and cancel), `id` for an existing checkout, `checkout`
 * the request body; the four cart tools of cart-mcp.md the same way (`cart` the body). Titles,
 * descriptions and hints are this merchant's words for a model.
 */
export interface UcpTool {
  readonly name: string;
  readonly title: string;
  readonly description: string;
  readonly method: 'GET' | 'POST' | 'PUT';
  /** Under the UCP base path; `{id}` is the checkout id argument. */
  readonly path: string;
  readonly id: boolean;
  /**
   * The argument that is the request body, when the tool takes one (required when it does, as
   * the OpenRPC document says): `checkout` for the checkout tools, `catalog` for the catalog's.
   */
  readonly body?: 'checkout' | 'catalog' | 'cart';
  /** Listed for callers whose scopes include orders:create only (the checkout tools); the catalog's for every caller. */
  readonly needsScope: boolean;
  /** meta["idempotency-key"] is required (complete, cancel). */
  readonly idempotencyRequired: boolean;
  readonly annotations: ToolAnnotations;
}

const WRITE = { readOnlyHint: false, openWorldHint: false } as const;
const META_WORDS =
  'meta["ucp-agent"].profile is required: the URL of your platform profile (capability negotiation). meta["idempotency-key"] (a UUID) makes a retry replay the first answer instead of acting twice';

const READ = { readOnlyHint: true, openWorldHint: false, idempotentHint: true } as const;
const CATALOG_META =
  'meta["ucp-agent"].profile is required: the URL of your platform profile (capability negotiation)';

export const UCP_TOOLS: readonly UcpTool[] = [
  {
    name: 'search_catalog',
    title: 'Search the catalog',
    description: `Search this merchant's products (catalog/search.md): catalog.query (free text; a misspelt word is corrected), catalog.filters (categories, price {min, max} in minor units of catalog.context.currency, and this merchant's own: brands, available, options [{name, values}], conditions), catalog.context (address_country, currency), catalog.pagination {limit ≤ 50, cursor}. Each variant's price is what you would pay for one unit (promotions included); variant.id is the id checkout takes. ${CATALOG_META}.`,
    method: 'POST',
    path: '/catalog/search',
    id: false,
    body: 'catalog',
    needsScope: false,
    idempotencyRequired: false,
    annotations: READ,
  },
  {
    name: 'lookup_catalog',
    title: 'Look up products',
    description: `Resolve up to 50 identifiers (catalog.ids: product ids, variant ids or SKUs) to products, each variant with inputs[] saying which identifier found it (catalog/lookup.md). ${CATALOG_META}.`,
    method: 'POST',
    path: '/catalog/lookup',
    id: false,
    body: 'catalog',
    needsScope: false,
    idempotencyRequired: false,
    annotations: READ,
  },
  {
    name: 'get_product',
    title: 'Get a product',
    description: `One product in full (catalog.id: a product or variant id), its variants narrowed by catalog.selected [{name, label}] with availability signals on every option value (catalog/lookup.md, "Get Product"). ${CATALOG_META}.`,
    method: 'POST',
    path: '/catalog/product',
    id: false,
    body: 'catalog',
    needsScope: false,
    idempotencyRequired: false,
    annotations: READ,
  },
  {
    name: 'create_checkout',
    title: 'Create a checkout',
    description: `Create a checkout from line items (checkout.line_items: [{item: {id: SKU}, quantity}]), optionally with checkout.fulfillment (a shipping destination), checkout.buyer and checkout.discounts.codes. The result is the checkout with this merchant's prices and totals in minor units (cents, currency USD); status "ready_for_complete" when it can be completed, else messages[] say what is missing. ${META_WORDS}.`,
    method: 'POST',
    path: '/checkout-sessions',
    id: false,
    body: 'checkout',
    needsScope: true,
    idempotencyRequired: false,
    annotations: { ...WRITE, idempotentHint: false, destructiveHint: false },
  },
  {
    name: 'get_checkout',
    title: 'Read a checkout',
    description: `Read the current state of one of your checkouts (id). ${META_WORDS}.`,
    method: 'GET',
    path: '/checkout-sessions/{id}',
    id: true,
    needsScope: true,
    idempotencyRequired: false,
    annotations: { readOnlyHint: true, openWorldHint: false },
  },
  {
    name: 'update_checkout',
    title: 'Update a checkout',
    description: `Replace what an open checkout (id) holds: checkout.line_items (required), fulfillment (select a destination and the option), buyer, discounts. The result is the repriced checkout. ${META_WORDS}.`,
    method: 'PUT',
    path: '/checkout-sessions/{id}',
    id: true,
    body: 'checkout',
    needsScope: true,
    idempotencyRequired: false,
    annotations: { ...WRITE, idempotentHint: true, destructiveHint: false },
  },
  {
    name: 'complete_checkout',
    title: 'Complete a checkout',
    description: `Place the order of a checkout that is ready_for_complete (id). This merchant is paid on account: checkout.payment.instruments holds one selected purchase-order instrument of the profile's purchase_order handler with credential.purchase_order_number. Above the buyer's approval limit the checkout is requires_escalation (continue_url) until an operator decides. ${META_WORDS}; for this tool meta["idempotency-key"] is required.`,
    method: 'POST',
    path: '/checkout-sessions/{id}/complete',
    id: true,
    body: 'checkout',
    needsScope: true,
    idempotencyRequired: true,
    annotations: { ...WRITE, idempotentHint: true, destructiveHint: false },
  },
  {
    name: 'cancel_checkout',
    title: 'Cancel a checkout',
    description: `Cancel a checkout that is not completed (id), for good. ${META_WORDS}; for this tool meta["idempotency-key"] is required.`,
    method: 'POST',
    path: '/checkout-sessions/{id}/cancel',
    id: true,
    needsScope: true,
    idempotencyRequired: true,
    annotations: { ...WRITE, idempotentHint: true, destructiveHint: true },
  },
  {
    name: 'create_cart',
    title: 'Create a cart',
    description: `Start a cart (cart-mcp.md): cart.line_items [{item: {id: SKU or the merchant's variant id}, quantity}], optionally cart.context (address_country) and cart.buyer. Estimated totals in minor units (cents, USD); nothing is reserved or charged. Unknown or unavailable items are messages[]. Turn it into a checkout with create_checkout and checkout.cart_id. ${META_WORDS}.`,
    method: 'POST',
    path: '/carts',
    id: false,
    body: 'cart',
    needsScope: true,
    idempotencyRequired: false,
    annotations: { ...WRITE, idempotentHint: false, destructiveHint: false },
  },
  {
    name: 'get_cart',
    title: 'Read a cart',
    description: `Read one of your carts (id), re-estimated as it was last priced. ${META_WORDS}.`,
    method: 'GET',
    path: '/carts/{id}',
    id: true,
    needsScope: true,
    idempotencyRequired: false,
    annotations: { readOnlyHint: true, openWorldHint: false },
  },
  {
    name: 'update_cart',
    title: 'Update a cart',
    description: `Replace what a cart (id) holds: cart.line_items (required), context, buyer. The result is the re-estimated cart; its expiry moves on. ${META_WORDS}.`,
    method: 'PUT',
    path: '/carts/{id}',
    id: true,
    body: 'cart',
    needsScope: true,
    idempotencyRequired: false,
    annotations: { ...WRITE, idempotentHint: true, destructiveHint: false },
  },
  {
    name: 'cancel_cart',
    title: 'Cancel a cart',
    description: `Delete a cart (id); the result is the cart as it was. ${META_WORDS}; for this tool meta["idempotency-key"] is required.`,
    method: 'POST',
    path: '/carts/{id}/cancel',
    id: true,
    needsScope: true,
    idempotencyRequired: true,
    annotations: { ...WRITE, idempotentHint: true, destructiveHint: true },
  },
];

/** The binding's `meta` (mcp.openrpc.json components.schemas.meta), idempotency-key required where the tool says. */
function metaSchema(idempotencyRequired: boolean): Record<string, unknown> {
  return {
    type: 'object',
    description: 'Request metadata.',
    required: idempotencyRequired ? ['ucp-agent', 'idempotency-key'] : ['ucp-agent'],
    additionalProperties: true,
    properties: {
      'ucp-agent': {
        type: 'object',
        description: 'Platform agent identification. Maps to HTTP UCP-Agent header.',
        required: ['profile'],
        properties: {
          profile: {
            type: 'string',
            format: 'uri',
            description: "URL to the platform's UCP profile document.",
          },
        },
      },
      'idempotency-key': {
        type: 'string',
        format: 'uuid',
        description: 'Unique key for retry safety. Maps to HTTP Idempotency-Key header.',
      },
    },
  };
}

let listed: readonly ListedTool[] | undefined;

/**
 * The tools/list entries. `checkout` is described as an object: the route validates it against
 * the release's request view of checkout.json for its operation (with the discount and
 * fulfillment extensions), so a tool call gets the REST answer. No outputSchema: a result is a
 * checkout or an error_response (a business outcome), which the MCP SDK's client would have to
 * resolve across the release's files to check.
 */
export function listedUcpTools(): readonly ListedTool[] {
  listed ??= UCP_TOOLS.map((t) => ({
    name: t.name,
    title: t.title,
    description: t.description,
    inputSchema: {
      type: 'object' as const,
      properties: {
        meta: metaSchema(t.idempotencyRequired),
        ...(t.id
          ? {
              id: {
                type: 'string',
                description:
                  t.body === 'cart' || t.path.startsWith('/carts') ? 'The cart id.' : 'The checkout id.',
              },
            }
          : {}),
        ...(t.body
          ? {
              [t.body]: {
                type: 'object',
                description:
                  t.body === 'checkout'
                    ? 'The checkout request (checkout.json, this operation).'
                    : t.body === 'cart'
                      ? 'The cart request (cart.json, this operation).'
                      : 'The catalog request (catalog_search.json or catalog_lookup.json, this operation).',
              },
            }
          : {}),
      },
      required: ['meta', ...(t.id ? ['id'] : []), ...(t.body ? [t.body] : [])],
    },
    annotations: { title: t.title, ...t.annotations },
  }));
  return listed;
}

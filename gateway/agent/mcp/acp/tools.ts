import type { ToolAnnotations } from '@modelcontextprotocol/sdk/types.js';
import type { AcpDef } from '../../acp/schema/index.ts';
import { ACP_VERSION } from '../../acp/schema/index.ts';
import type { ListedTool } from '../server.ts';
import { type AcpArgumentShape, acpInputSchema, acpOutputSchema } from './schemas.ts';

/**
 * The five ACP checkout tools of the MCP binding (docs/mcp-binding.md, release 2026-04-17),
 * each the REST operation of the ACP routes (gateway/agent/acp/routes.ts) it runs in process.
 * Names, argument structure and result definitions are the binding's; titles, descriptions and
 * hints are this merchant's words for a model.
 */
export interface AcpTool {
  readonly name: string;
  readonly title: string;
  readonly description: string;
  readonly method: 'GET' | 'POST';
  /** Under the ACP base path; `{id}` is the session id argument. */
  readonly path: string;
  readonly args: AcpArgumentShape;
  /** What a success is (the binding's OpenRPC `result`, and what this merchant answers). */
  readonly results: readonly AcpDef[];
  readonly annotations: ToolAnnotations;
}

const META_WORDS = `meta.api_version must be "${ACP_VERSION}". meta.idempotency_key is required by this merchant (any 1 to 255 visible ASCII characters): the same key with the same arguments replays the first answer instead of acting twice; the same key with other arguments is refused.`;

/*
 * Hints: openWorldHint false throughout (the tools act on this merchant's own sessions and
 * orders). A POST tool is idempotentHint: this merchant requires meta.idempotency_key, which is
 * part of the arguments, so the same arguments replay the first answer (for 24 hours).
 */
const WRITE = { readOnlyHint: false, idempotentHint: true, openWorldHint: false } as const;

export const ACP_TOOLS: readonly AcpTool[] = [
  {
    name: 'create_checkout_session',
    title: 'Create a checkout session',
    description: `Create a checkout session from line items (payload.line_items: [{id: SKU, quantity}], 1 to 10000 units each), a currency (payload.currency, e.g. "usd") and the agent's capabilities (payload.capabilities, {} when none). Optional fulfillment_details with an address; its country sets the pricing region. The result is the session with its authoritative prices and totals in minor units (cents); status "ready_for_payment" when it can be completed, else messages[] say what is missing. ${META_WORDS}`,
    method: 'POST',
    path: '/checkout_sessions',
    args: { id: false, payload: 'CheckoutSessionCreateRequest', payloadRequired: true },
    results: ['CheckoutSession'],
    annotations: { ...WRITE, destructiveHint: false },
  },
  {
    name: 'get_checkout_session',
    title: 'Read a checkout session',
    description: `Read the latest authoritative state of a checkout session of this API key (id). After completion it carries the order. meta.api_version must be "${ACP_VERSION}".`,
    method: 'GET',
    path: '/checkout_sessions/{id}',
    args: { id: true },
    results: ['CheckoutSession'],
    annotations: { readOnlyHint: true, openWorldHint: false },
  },
  {
    name: 'update_checkout_session',
    title: 'Update a checkout session',
    description: `Change an open checkout session (id): payload.line_items replaces the items, payload.fulfillment_details the address; the result is the repriced session. A completed or canceled session cannot change. ${META_WORDS}`,
    method: 'POST',
    path: '/checkout_sessions/{id}',
    args: { id: true, payload: 'CheckoutSessionUpdateRequest', payloadRequired: true },
    results: ['CheckoutSession'],
    annotations: { ...WRITE, destructiveHint: false },
  },
  {
    name: 'complete_checkout_session',
    title: 'Complete a checkout session',
    description: `Place the order of a session that is ready_for_payment (id). This merchant is paid on account: payload.payment_data is {purchase_order_number, payment_terms?} (no card, no payment handler). The spend policy of this API key's agent applies: the result is the completed session with its order, or an order that waits for an operator's approval (order status manual_review), or the session with messages[] saying why it could not be placed. ${META_WORDS}`,
    method: 'POST',
    path: '/checkout_sessions/{id}/complete',
    args: { id: true, payload: 'CheckoutSessionCompleteRequest', payloadRequired: true },
    results: ['CheckoutSessionWithOrder', 'CheckoutSession'],
    // It places an order and spends budget; it destroys nothing.
    annotations: { ...WRITE, destructiveHint: false },
  },
  {
    name: 'cancel_checkout_session',
    title: 'Cancel a checkout session',
    description: `Cancel a checkout session that is not completed (id), for good; payload.intent_trace may say why. An order that waits for approval is withdrawn. ${META_WORDS}`,
    method: 'POST',
    path: '/checkout_sessions/{id}/cancel',
    args: { id: true, payload: 'CancelSessionRequest', payloadRequired: false },
    results: ['CheckoutSession'],
    annotations: { ...WRITE, destructiveHint: true },
  },
];

let listed: readonly ListedTool[] | undefined;

/** The tools/list entries, built once (the bundle is read and its definitions copied on first use). */
export function listedAcpTools(): readonly ListedTool[] {
  listed ??= ACP_TOOLS.map((t) => ({
    name: t.name,
    title: t.title,
    description: t.description,
    inputSchema: acpInputSchema(t.args),
    outputSchema: acpOutputSchema(t.results),
    // annotations.title too: clients of the 2025-03-26 revision read the title only there.
    annotations: { title: t.title, ...t.annotations },
  }));
  return listed;
}

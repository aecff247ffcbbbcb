import type { ToolAnnotations } from '@modelcontextprotocol/sdk/types.js';
import { OPENAPI_FILE } from '../../../subgraphs/procurement/contract/openapi.ts';
import { PRODUCT_PATH, PRODUCTS_PATH } from '../catalog/products.ts';
import { type ToolOperation, toolOperation } from '../contract/operations.ts';
import { CANONICAL_PATH } from '../order/place.ts';
import { AGENT_QUOTE_PATH, QUOTE_SCOPE } from '../quote/quote.ts';
import {
  CATALOG_READ_SCOPE,
  ORDER_CANCEL_SCOPE,
  ORDER_CREATE_SCOPE,
  ORDER_READ_SCOPE,
} from '../scope/policy.ts';

/**
 * An MCP tool: the REST operation it runs, the scope a caller needs to see and call it, and
 * the hints a client may show or act on (MCP 2025-06-18, ToolAnnotations). Hints describe the
 * operation, they grant nothing: every call still meets its route's whole chain.
 */
export interface AgentTool {
  readonly name: string;
  readonly scope: string;
  readonly operation: ToolOperation;
  readonly annotations: ToolAnnotations;
}

interface ToolSource {
  readonly name: string;
  readonly scope: string;
  readonly doc: URL;
  readonly method: 'GET' | 'POST';
  readonly path: string;
  readonly annotations: ToolAnnotations;
}

const procurement = OPENAPI_FILE;
/** The spend policy and its remaining budget, as the spend part of issue 12 serves it. */
const SPEND_PATH = '/api/v2/procurement/spend';
const SPEND_READ_SCOPE = 'spend:read';

/*
 * openWorldHint is false throughout: every tool acts on this system's own quotes, orders and
 * spend ledger, never on an outside party for the agent (the webhooks an order may cause are
 * the operators' subscriptions, not the tool's reach). Hints other than readOnlyHint mean
 * nothing on a read-only tool (the spec says so), so those carry only the two.
 */
const READ_ONLY: ToolAnnotations = { readOnlyHint: true, openWorldHint: false };

const SOURCES: readonly ToolSource[] = [
  // Finding what to buy: reads of the catalog, priced for the caller.
  {
    name: 'search_products',
    scope: CATALOG_READ_SCOPE,
    doc: procurement,
    method: 'GET',
    path: PRODUCTS_PATH,
    annotations: READ_ONLY,
  },
  {
    name: 'get_product_details',
    scope: CATALOG_READ_SCOPE,
    doc: procurement,
    method: 'GET',
    path: PRODUCT_PATH,
    annotations: READ_ONLY,
  },
  // A quote prices and signs; it changes no order and no budget.
  {
    name: 'quote_cart',
    scope: QUOTE_SCOPE,
    doc: procurement,
    method: 'GET',
    path: AGENT_QUOTE_PATH,
    annotations: READ_ONLY,
  },
  {
    name: 'place_purchase_order',
    scope: ORDER_CREATE_SCOPE,
    doc: procurement,
    method: 'POST',
    path: CANONICAL_PATH,
    // Additive: it creates an order and spends budget, and destroys nothing. Not idempotent as a
    // tool: idempotency_key is optional, and without it the same arguments place a second order
    // (with it, a repeat replays the first reply). A client may not retry blindly on the hint.
    annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false },
  },
  {
    name: 'get_order',
    scope: ORDER_READ_SCOPE,
    doc: procurement,
    method: 'GET',
    path: `${CANONICAL_PATH}/{orderId}`,
    annotations: READ_ONLY,
  },
  {
    name: 'list_orders',
    scope: ORDER_READ_SCOPE,
    doc: procurement,
    method: 'GET',
    path: CANONICAL_PATH,
    annotations: READ_ONLY,
  },
  {
    name: 'cancel_order',
    scope: ORDER_CANCEL_SCOPE,
    doc: procurement,
    method: 'POST',
    path: `${CANONICAL_PATH}/{orderId}/cancel`,
    // Destructive: the order is withdrawn for good. Idempotent by nature, key or no key: a
    // cancelled order's cancel answers the same CANCELLED order again and emits nothing.
    annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: false },
  },
  // The order's authorization evidence (issue 50, docs/ap2.md): the AP2 checkout mandate, this
  // merchant's signature on the checkout inside it, and the operators' signed approval decision,
  // as GET …/authorization serves them, for the agent to keep or hand on for an offline check.
  {
    name: 'get_order_authorization',
    scope: ORDER_READ_SCOPE,
    doc: procurement,
    method: 'GET',
    path: `${CANONICAL_PATH}/{orderId}/authorization`,
    annotations: READ_ONLY,
  },
  // The spend policy's read-back (issue 12, spend part): a tool as soon as the document has it.
  {
    name: 'get_spend',
    scope: SPEND_READ_SCOPE,
    doc: procurement,
    method: 'GET',
    path: SPEND_PATH,
    annotations: READ_ONLY,
  },
];

let tools: readonly AgentTool[] | undefined;

/**
 * The tools, in a fixed order, each from its operation in the OpenAPI document. An operation
 * the document does not (yet) have gives no tool: a tool never exists without its REST route.
 */
export function agentTools(): readonly AgentTool[] {
  tools ??= SOURCES.flatMap((s) => {
    const operation = toolOperation(s.doc, s.path, s.method);
    return operation ? [{ name: s.name, scope: s.scope, operation, annotations: s.annotations }] : [];
  });
  return tools;
}

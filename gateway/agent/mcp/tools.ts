import { OPENAPI_FILE } from '../../../subgraphs/procurement/contract/openapi.ts';
import { type ToolOperation, toolOperation } from '../contract/operations.ts';
import { CANONICAL_PATH } from '../order/place.ts';
import { AGENT_QUOTE_PATH, QUOTE_SCOPE } from '../quote/quote.ts';
import { ORDER_CANCEL_SCOPE, ORDER_CREATE_SCOPE, ORDER_READ_SCOPE } from '../scope/policy.ts';

/** An MCP tool: the REST operation it runs and the scope a caller needs to see and call it. */
export interface AgentTool {
  readonly name: string;
  readonly scope: string;
  readonly operation: ToolOperation;
}

interface ToolSource {
  readonly name: string;
  readonly scope: string;
  readonly doc: URL;
  readonly method: 'GET' | 'POST';
  readonly path: string;
}

const procurement = OPENAPI_FILE;
/** The spend policy and its remaining budget, as the spend part of issue 12 serves it. */
const SPEND_PATH = '/api/v2/procurement/spend';
const SPEND_READ_SCOPE = 'spend:read';

const SOURCES: readonly ToolSource[] = [
  { name: 'quote_cart', scope: QUOTE_SCOPE, doc: procurement, method: 'GET', path: AGENT_QUOTE_PATH },
  {
    name: 'place_purchase_order',
    scope: ORDER_CREATE_SCOPE,
    doc: procurement,
    method: 'POST',
    path: CANONICAL_PATH,
  },
  {
    name: 'get_order',
    scope: ORDER_READ_SCOPE,
    doc: procurement,
    method: 'GET',
    path: `${CANONICAL_PATH}/{orderId}`,
  },
  { name: 'list_orders', scope: ORDER_READ_SCOPE, doc: procurement, method: 'GET', path: CANONICAL_PATH },
  {
    name: 'cancel_order',
    scope: ORDER_CANCEL_SCOPE,
    doc: procurement,
    method: 'POST',
    path: `${CANONICAL_PATH}/{orderId}/cancel`,
  },
  // The spend policy's read-back (issue 12, spend part): a tool as soon as the document has it.
  { name: 'get_spend', scope: SPEND_READ_SCOPE, doc: procurement, method: 'GET', path: SPEND_PATH },
];

let tools: readonly AgentTool[] | undefined;

/**
 * The tools, in a fixed order, each from its operation in the OpenAPI document. An operation
 * the document does not (yet) have gives no tool: a tool never exists without its REST route.
 */
export function agentTools(): readonly AgentTool[] {
  tools ??= SOURCES.flatMap((s) => {
    const operation = toolOperation(s.doc, s.path, s.method);
    return operation ? [{ name: s.name, scope: s.scope, operation }] : [];
  });
  return tools;
}

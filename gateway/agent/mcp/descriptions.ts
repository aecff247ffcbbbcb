/**
 * What a model reads about each tool: its title, its description, and the words added to a
 * result that waits for a human. The shapes are the OpenAPI document's (input and output
 * schemas); this is the prose around them, written for a model deciding what to call. The
 * order tool's numbers are read from its input schema and the running limits, never retyped.
 */
import type { BlockPolicy } from '../block/policy.ts';
import type { BucketPolicy } from '../rate-limit/bucket.ts';
import type { AgentTool } from './tools.ts';

/** The limits this process runs with, as the order tool's description states them. */
export interface ToolLimits {
  readonly bucket: BucketPolicy;
  readonly block: BlockPolicy;
}

export const TOOL_TITLES: Readonly<Record<string, string>> = {
  search_products: 'Search products',
  get_product_details: 'Read a product',
  quote_cart: 'Quote a cart',
  place_purchase_order: 'Place a purchase order',
  get_order: 'Read an order',
  list_orders: 'List own orders',
  cancel_order: 'Cancel an order',
  get_order_authorization: "Read an order's authorization evidence",
  get_spend: 'Read own spend policy and budget',
};

const APPROVAL_PATH =
  'An order waiting for a human is PENDING_APPROVAL with expires_at: stored, its amount reserved, but NOT placed. Read it with get_order until it is APPROVED, REJECTED (decision_reason says why) or EXPIRED (no decision by expires_at; the amount goes back); cancel_order withdraws it at any time while it waits.';

const FIXED: Readonly<Record<string, string>> = {
  search_products:
    'Find products to buy. Give q (free text, typo-tolerant: "ergonomic chair", "usb-c hub -wireless") and/or filters (category, brand, min_price and max_price in currency, available). Each product lists its variants; order a variant by its sku with place_purchase_order. A variant\'s price is your price for one unit in currency (promotions applied; source says whether it is live or a fallback); budget (when a spend policy covers you) says whether one unit fits what is left, whether a human must approve, and whether your policy allows the sku. Pages: pass next_cursor back as cursor with the same q and filters; null on the last. corrected_query shows a misspelling fixed. Changes nothing.',
  get_product_details:
    "Read one product with all its variants, by the id search_products gave (or a variant's sku or variant_id; selected_sku then names it), each variant priced and judged by your spend policy as in search_products. An unknown id: isError with problem product-not-found. Changes nothing.",
  quote_cart:
    'Price a cart before ordering: unit prices with their modifiers, promotions and totals, and a signed quoteToken (valid 15 minutes). Changes nothing. A refused query counts towards the same block as a refused order.',
  get_order: `Read one of your own orders as it is now (an order of another identity answers 404 like an unknown one). ${APPROVAL_PATH}`,
  list_orders:
    'List your own orders, newest first, a page at a time (limit 1 to 100, default 20). Pass next_cursor back as cursor for the next page; it is null on the last page.',
  cancel_order:
    'Cancel one of your own orders. An APPROVED order can be cancelled within its cancellation window after processed_at (one hour unless the operator configured another); a PENDING_APPROVAL order at any time while it waits, and its reserved amount goes back to your budget. Cancelling a CANCELLED order answers the same order again. REJECTED or EXPIRED orders, or an approved one after the window: isError with problem order-not-cancellable.',
  get_order_authorization:
    "Read the evidence that one of your own orders was authorized (an order of another identity answers 404 like an unknown one). authorization: for an order placed by completing a UCP checkout that negotiated AP2, the checkout mandate you presented, this merchant's signature (merchant_authorization) on the checkout inside it, both keys' kids and the mandate's SHA-256, which the completion's audit entry names; null for an order completed without one. approval: the operators' decision this system signed (who, when, which policy and thresholds, the amount) for an order that waited for a human, or the policy and amount under which it needed none. audit_proof: the path of the order's audit inclusion proof. Anyone holding the public keys can check the whole chain offline (docs/ap2.md). Changes nothing.",
  get_spend:
    'Read your spend policy (null when none covers you) and what is left of its budget in the current UTC period (spent, remaining, resets_at). Amounts are exact decimal strings. Orders waiting for approval count as spent until they are rejected, expire or are cancelled. approval_above is the amount above which an order waits for a human; without_policy says whether orders are allowed when no policy covers you.',
};

type Prop = Record<string, unknown> | undefined;
const num = (p: Prop, k: string) => String(p?.[k] ?? '?');

function placeOrderDescription(tool: AgentTool, l: ToolLimits): string {
  const p = tool.operation.inputSchema.properties;
  const quantity = p.quantity;
  const budget = p.max_budget_usd;
  const agentId = p.agent_id;
  const blockMinutes = Math.round(l.block.blockMs / 60_000);
  return [
    'Place a purchase order for one SKU as your own identity. Price it first with quote_cart.',
    '',
    'Arguments (exactly these; any other field, or a value of another JSON type, is refused: no coercion):',
    `- agent_id: string of ${num(agentId, 'minLength')} to ${num(agentId, 'maxLength')} characters.`,
    `- sku: matches ${num(p.sku, 'pattern')} as a whole (a trailing space or newline fails).`,
    `- quantity: integer from ${num(quantity, 'minimum')} to ${num(quantity, 'maximum')}.`,
    `- max_budget_usd: US dollars, above ${num(budget, 'exclusiveMinimum')} and at most ${num(budget, 'maximum')}, a multiple of ${num(budget, 'multipleOf')} (whole cents). It is judged exactly as you write it, never rounded: 10.005 is refused. It is the amount the order allocates and charges to your spend policy.`,
    '- idempotency_key (optional; 1 to 255 visible ASCII characters): the same key with the same arguments returns the first reply again (no second order; _meta idempotent_replayed). The same key with other arguments is refused (idempotency-key-reused); while the first call still runs, idempotency-key-in-flight (retry shortly). Without a key every call places a new order, so send one whenever you might retry.',
    '',
    'Results:',
    '- 201 APPROVED: the order is placed.',
    `- 202 PENDING_APPROVAL: your spend policy asks a human to approve orders above its approval_above amount (two people above second_approval_above; see get_spend). ${APPROVAL_PATH} Do not place it again to hurry it.`,
    '- A refusal is a result with isError true whose text is an RFC 9457 problem (type, detail, and for a contract error errors[] with JSON pointers); _meta "agent-commerce.example/http" has the HTTP status and retry_after. No order is created.',
    '',
    'Limits:',
    '- Spend policy: above what is left of the period budget, above max_per_order, a SKU outside allowed_sku_prefixes or an expired policy is refused (403 spend-limit-exceeded, spend-sku-not-allowed, spend-policy-expired; spend-policy-required when no policy covers you and the server requires one). The problem says what is left.',
    `- Block: more than ${l.block.maxConsecutiveErrors} contract errors in a row (422: arguments the contract refuses, here or in quote_cart, over MCP and REST together) block your identity for ${blockMinutes} minutes: every call answers 429 agent-blocked. An order whose arguments pass resets the count (a valid quote does not).`,
    `- Rate limit: a burst of ${l.bucket.capacity} calls, refilled at ${l.bucket.refillPerSecond} per second, per identity and shared by every tool and REST call; when exhausted, 429 rate-limited with retry_after.`,
  ].join('\n');
}

/** Every tool's description, built once per process from its operation and the limits. */
export function toolDescriptions(
  tools: readonly AgentTool[],
  limits: ToolLimits,
): ReadonlyMap<string, string> {
  return new Map(
    tools.map((t) => [
      t.name,
      t.name === 'place_purchase_order'
        ? placeOrderDescription(t, limits)
        : (FIXED[t.name] ?? t.operation.summary),
    ]),
  );
}

/** An order that waits for a human, said in words, so an agent does not take it for placed. */
export function pendingApprovalText(order: { order_id?: unknown; expires_at?: unknown }): string {
  return `Order ${String(order.order_id)} waits for a human approval (PENDING_APPROVAL) until ${String(order.expires_at)}: it is stored and its amount reserved, but it is not approved. Read it with get_order until it is APPROVED, REJECTED or EXPIRED; cancel_order withdraws it.`;
}

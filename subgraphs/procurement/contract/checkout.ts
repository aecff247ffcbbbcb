import { componentSchema } from './openapi.ts';

/**
 * The limits of a checkout order's lines (docs/procurement.md, "Orders with many lines"). A
 * checkout order is not a /v2 PurchaseOrderRequest: its total passed the spend policy, not the
 * /v2 contract's 5000 cap, so only the per-field rules are shared with that contract (the SKU).
 */
const requestProperties = componentSchema('PurchaseOrderRequest').properties as Record<
  string,
  Record<string, unknown>
>;

/** The /v2 contract's SKU rule (schemas/openapi/procurement.yaml), the one source of it. */
export const SKU_PATTERN_TEXT = String(requestProperties.sku?.pattern);
export const SKU_PATTERN = new RegExp(SKU_PATTERN_TEXT, 'u');
/** An amount of a line or a total: whole cents, always two decimals, below one billion. */
export const DECIMAL_AMOUNT_TEXT = '^\\d{1,9}\\.\\d{2}$';
export const DECIMAL_AMOUNT = new RegExp(DECIMAL_AMOUNT_TEXT);
export const MAX_ORDER_LINES = 50;
export const MAX_LINE_QUANTITY = 10_000;
/** An order's quantity is the sum of its lines'. */
export const MAX_CHECKOUT_QUANTITY = MAX_ORDER_LINES * MAX_LINE_QUANTITY;
/** Ids the merchant issues for ACP checkout sessions ("cs_01HV3P3ABC123", "checkout_session_123"). */
export const CHECKOUT_SESSION_ID_TEXT = '^[A-Za-z0-9._:-]{1,128}$';
export const CHECKOUT_SESSION_ID = new RegExp(CHECKOUT_SESSION_ID_TEXT);

const amount = { type: 'string', pattern: DECIMAL_AMOUNT_TEXT, maxLength: 13 } as const;

/** One OrderLine on the internal wire (camelCase, amounts as text). */
export const orderLineSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['sku', 'quantity', 'unitPrice', 'discount', 'lineTotal'],
  properties: {
    sku: { type: 'string', pattern: SKU_PATTERN_TEXT, maxLength: 64 },
    quantity: { type: 'integer', minimum: 1, maximum: MAX_LINE_QUANTITY },
    unitPrice: amount,
    discount: amount,
    lineTotal: amount,
  },
} as const;

/** The checkout fields of a place command on the internal wire (gateway → procurement). */
export const checkoutFieldsSchema = {
  type: 'object',
  required: ['lines', 'total'],
  properties: {
    lines: { type: 'array', minItems: 1, maxItems: MAX_ORDER_LINES, items: orderLineSchema },
    total: amount,
    checkoutSessionId: { type: 'string', pattern: CHECKOUT_SESSION_ID_TEXT, maxLength: 128 },
  },
} as const;

/**
 * The PurchaseOrderRequest a checkout order carries: the contract's shape and its agent_id and
 * sku rules, with the quantity a sum of lines and the budget the order's total (up to
 * 999999999.99, whole cents; 0 for a fully discounted checkout) instead of the /v2 limits.
 */
export const checkoutRequestSchema = {
  ...componentSchema('PurchaseOrderRequest'),
  properties: {
    ...requestProperties,
    quantity: { type: 'integer', minimum: 1, maximum: MAX_CHECKOUT_QUANTITY },
    max_budget_usd: { type: 'number', minimum: 0, maximum: 999_999_999.99, multipleOf: 0.01 },
  },
};

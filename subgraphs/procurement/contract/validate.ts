import { Ajv2020, type ErrorObject } from 'ajv/dist/2020.js';
import { CHECKED_SCHEMAS } from '../../../lib/json/checked-schemas.ts';
import { exactNumber, plainText, useExactNumberKeywords } from '../../../lib/json/exact-number.ts';
import type { OrderLine } from '../domain/purchase-order.ts';
import { checkoutFieldsSchema, checkoutRequestSchema } from './checkout.ts';
import { componentSchema } from './openapi.ts';
import type { PurchaseOrderRequest, UsdAmount } from './types.ts';

/** One contract violation: where (RFC 6901 JSON pointer into the body) and what. */
export interface Violation {
  readonly pointer: string;
  readonly message: string;
}

export type ContractResult =
  | { readonly ok: true; readonly value: PurchaseOrderRequest }
  | { readonly ok: false; readonly errors: readonly Violation[] };

// No coercion ("5" is not an integer), every violation reported, strict schema compilation so
// a typo in the OpenAPI document fails at start-up instead of silently allowing a field.
// Limits are compared exactly on the number as written (lib/json/exact-number.ts): a budget of
// 5000.00000000000000001 is over 5000 even though its nearest double is 5000.
const ajv = new Ajv2020({
  ...CHECKED_SCHEMAS,
  allErrors: true,
  coerceTypes: false,
  useDefaults: false,
  strict: true,
});
useExactNumberKeywords(ajv);
// OpenAPI's integer formats (declared for linters and generators): only the range, so a
// non-integer reports one violation (its type), not two.
ajv.addFormat('int32', { type: 'number', validate: (n: number) => n >= -(2 ** 31) && n < 2 ** 31 });
ajv.addFormat('int64', { type: 'number', validate: (n: number) => Number.isSafeInteger(Math.trunc(n)) });
const check = ajv.compile(componentSchema('PurchaseOrderRequest'));

const escapePointer = (key: string) => key.replace(/~/g, '~0').replace(/\//g, '~1');

function toViolation(e: ErrorObject): Violation {
  switch (e.keyword) {
    case 'additionalProperties': {
      const key = String((e.params as { additionalProperty: string }).additionalProperty);
      return {
        pointer: `${e.instancePath}/${escapePointer(key)}`,
        message: 'is not a field of PurchaseOrderRequest',
      };
    }
    case 'required': {
      const key = String((e.params as { missingProperty: string }).missingProperty);
      return { pointer: `${e.instancePath}/${escapePointer(key)}`, message: 'is required' };
    }
    case 'pattern':
      return {
        pointer: e.instancePath,
        message: `must match ${String((e.params as { pattern: string }).pattern)}`,
      };
    default:
      return { pointer: e.instancePath, message: e.message ?? `fails ${e.keyword}` };
  }
}

/**
 * Checks a parsed body against PurchaseOrderRequest. On success the value is a new frozen
 * object holding exactly the four fields (the spec: a parsed request is immutable), the budget
 * as the exact decimal the agent wrote (its JSON text when the strict parser read the body).
 */
export function validatePurchaseOrderRequest(body: unknown): ContractResult {
  if (check(body)) {
    // What the schema just proved about the parsed JSON (the budget is still a JSON number).
    const b = body as { agent_id: string; sku: string; quantity: number; max_budget_usd: number };
    return {
      ok: true,
      value: Object.freeze({
        agent_id: b.agent_id,
        sku: b.sku,
        quantity: b.quantity,
        // The schema allowed only (0, 5000] in whole cents: plain text is a UsdAmount.
        max_budget_usd: plainText(exactNumber(body, 'max_budget_usd', b.max_budget_usd)) as UsdAmount,
      }),
    };
  }
  return { ok: false, errors: (check.errors ?? []).map(toViolation) };
}

/** The checkout fields of a place command, checked for shape (the domain checks they agree). */
export interface CheckoutOrder {
  readonly request: PurchaseOrderRequest;
  readonly lines: readonly OrderLine[];
  readonly total: string;
  readonly checkoutSessionId?: string;
}

export type CheckoutResult =
  | { readonly ok: true; readonly value: CheckoutOrder }
  | { readonly ok: false; readonly errors: readonly Violation[] };

const checkCheckoutRequest = ajv.compile(checkoutRequestSchema);
const checkCheckoutFields = ajv.compile({ ...checkoutFieldsSchema, additionalProperties: false });

/**
 * Checks a checkout order on the internal wire: its request (parsed strictly, the contract's
 * agent_id and sku rules, the quantity and budget of a checkout instead of the /v2 limits) and
 * its lines, total and session (checkout.ts). At most 64 violations are reported.
 */
export function validateCheckoutOrder(
  request: unknown,
  fields: { lines?: unknown; total?: unknown; checkoutSessionId?: unknown },
): CheckoutResult {
  const given: Record<string, unknown> = {};
  for (const key of ['lines', 'total', 'checkoutSessionId'] as const)
    if (fields[key] !== undefined) given[key] = fields[key];
  const errors: Violation[] = [];
  if (!checkCheckoutRequest(request))
    for (const v of (checkCheckoutRequest.errors ?? []).map(toViolation))
      errors.push({ ...v, pointer: `/request${v.pointer}` });
  if (!checkCheckoutFields(given)) errors.push(...(checkCheckoutFields.errors ?? []).map(toViolation));
  if (errors.length) return { ok: false, errors: errors.slice(0, 64) };
  const r = request as { agent_id: string; sku: string; quantity: number; max_budget_usd: number };
  const c = given as { lines: OrderLine[]; total: string; checkoutSessionId?: string };
  return {
    ok: true,
    value: Object.freeze({
      request: Object.freeze({
        agent_id: r.agent_id,
        sku: r.sku,
        quantity: r.quantity,
        max_budget_usd: plainText(exactNumber(request, 'max_budget_usd', r.max_budget_usd)) as UsdAmount,
      }),
      lines: Object.freeze(
        c.lines.map((l) =>
          Object.freeze({
            sku: l.sku,
            quantity: l.quantity,
            unitPrice: l.unitPrice,
            discount: l.discount,
            lineTotal: l.lineTotal,
          }),
        ),
      ),
      total: c.total,
      ...(c.checkoutSessionId === undefined ? {} : { checkoutSessionId: c.checkoutSessionId }),
    }),
  };
}

/** The parsed query of the agent's order list. */
export interface OrderListQuery {
  readonly limit: number;
  readonly cursor?: string;
}

export type ListQueryResult =
  | { readonly ok: true; readonly value: OrderListQuery }
  | { readonly ok: false; readonly errors: readonly Violation[] };

const checkListQuery = ajv.compile(componentSchema('OrderListQuery'));
const listQueryProperties = componentSchema('OrderListQuery').properties as {
  limit: { default: number };
};
/** Digits only: `+5`, `5.0`, `0x10`, ` 5` stay text and fail the integer type. */
const DECIMAL_DIGITS = /^[0-9]{1,9}$/;

/**
 * Checks the list's query (Fastify's parsed query string: a string per parameter, an array
 * when one was repeated) against OrderListQuery. A query string is text, so `limit` is read as
 * a number only when it is plain digits; `cursor` must also be a cursor this server issued
 * (`isCursor`, the domain's decoder).
 */
export function validateOrderListQuery(query: unknown, isCursor: (c: string) => boolean): ListQueryResult {
  const raw = (query ?? {}) as Record<string, unknown>;
  const q: Record<string, unknown> = Object.create(null);
  for (const key of Object.keys(raw)) {
    const v = raw[key];
    q[key] = key === 'limit' && typeof v === 'string' && DECIMAL_DIGITS.test(v) ? Number(v) : v;
  }
  if (!checkListQuery(q)) {
    // At most 64 entries (ValidationProblem's maxItems): a URL can carry thousands of
    // unknown parameters, and the first ones say enough.
    const errors = (checkListQuery.errors ?? []).slice(0, 64).map((e) =>
      e.keyword === 'additionalProperties'
        ? {
            pointer: `/${escapePointer(String((e.params as { additionalProperty: string }).additionalProperty))}`,
            message: 'is not a parameter of this operation',
          }
        : toViolation(e),
    );
    return { ok: false, errors };
  }
  const cursor = q.cursor as string | undefined;
  if (cursor !== undefined && !isCursor(cursor))
    return { ok: false, errors: [{ pointer: '/cursor', message: 'is not a cursor this listing issued' }] };
  return {
    ok: true,
    value: Object.freeze({
      limit: (q.limit as number | undefined) ?? listQueryProperties.limit.default,
      ...(cursor === undefined ? {} : { cursor }),
    }),
  };
}

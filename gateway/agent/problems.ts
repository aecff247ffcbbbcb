import { Problem } from '../../lib/problem.ts';
import type { Violation } from '../../subgraphs/procurement/contract/validate.ts';

/**
 * Every refusal of the agent gateway, as a typed value (RFC 9457 problem details). Mapped to
 * HTTP in one place: lib/problem.ts sendProblem.
 */
export const unverifiedIdentity = (reason: string, signatureError?: string) =>
  new Problem(
    401,
    'unverified-workload-identity',
    'Unauthorized',
    `The AI workload identity is not verified: ${reason}.`,
    // An HTTP message signature refusal also names its reason as a code (docs/signatures.md).
    signatureError ? { signature_error: signatureError } : {},
  );

export const invalidToken = (reason: string) =>
  new Problem(
    401,
    'unverified-workload-identity',
    'Unauthorized',
    `The AI workload identity is not verified: the bearer token is not valid (${reason}).`,
    {},
    { 'www-authenticate': 'Bearer error="invalid_token"' },
  );

export const insufficientScope = (required: string) =>
  new Problem(
    403,
    'insufficient_scope',
    'Insufficient scope',
    `The caller is not granted the scope ${required}.`,
    { required_scope: required },
    { 'www-authenticate': `Bearer error="insufficient_scope", scope="${required}"` },
  );

export const agentBlocked = (retryAfterSeconds: number) =>
  new Problem(
    429,
    'agent-blocked',
    'Agent blocked',
    `This agent identity sent more than 5 consecutive invalid requests and is blocked for ${retryAfterSeconds} more seconds.`,
    {},
    { 'retry-after': String(retryAfterSeconds) },
  );

export const rateLimited = (retryAfterSeconds: number) =>
  new Problem(
    429,
    'rate-limited',
    'Too many requests',
    'The token bucket of this agent identity is empty.',
    {},
    { 'retry-after': String(retryAfterSeconds) },
  );

export const unsupportedMediaType = () =>
  new Problem(
    415,
    'unsupported-media-type',
    'Unsupported media type',
    'The body must be application/json (UTF-8).',
    {},
    {
      accept: 'application/json',
    },
  );

export const contentTooLarge = (limit: number) =>
  new Problem(413, 'content-too-large', 'Content too large', `The body is larger than ${limit} bytes.`);

export const malformedBody = (reason: string) =>
  new Problem(400, 'malformed-request', 'Malformed request', `The body is not acceptable JSON: ${reason}.`);

export const badIdempotencyKey = () =>
  new Problem(
    400,
    'malformed-request',
    'Malformed request',
    'Idempotency-Key must be one string of 1 to 255 visible ASCII characters (a quoted structured-field string or a bare token).',
  );

export const contractViolation = (errors: readonly Violation[]) =>
  new Problem(
    422,
    'contract-violation',
    'Unprocessable content',
    `The body breaks the PurchaseOrderRequest contract (${errors.length} violation${errors.length === 1 ? '' : 's'}).`,
    { errors },
  );

export const idempotencyKeyReused = () =>
  new Problem(
    422,
    'idempotency-key-reused',
    'Idempotency-Key reused',
    'This Idempotency-Key was used with another request body.',
  );

export const idempotencyInFlight = () =>
  new Problem(
    409,
    'idempotency-key-in-flight',
    'Request in progress',
    'A request with this Idempotency-Key is still being processed.',
    {},
    { 'retry-after': '1' },
  );

export const domainUnavailable = (what = 'the order domain') =>
  new Problem(
    503,
    'service-unavailable',
    'Service unavailable',
    `${what} is unavailable; no order was created.`,
    {},
    {
      'retry-after': '1',
    },
  );

export const stateUnavailable = () =>
  new Problem(
    503,
    'service-unavailable',
    'Service unavailable',
    'The gateway state store is unavailable.',
    {},
    {
      'retry-after': '1',
    },
  );

export const notFound = () =>
  new Problem(404, 'not-found', 'Not found', 'No such order for this agent identity.');

/**
 * What a spend refusal tells the agent about the policy that refused it (amounts exact decimal
 * text). The details name no SPIFFE ID (up to 2 KiB): `policy_subject` carries it.
 */
export interface SpendRefusalFacts {
  readonly policySubject: string;
  readonly currency: string;
  readonly period: 'day' | 'month';
  readonly budget: string;
  readonly remaining: string;
  /** RFC 3339 UTC: when the period's spend starts again from zero. */
  readonly resetsAt: string;
  readonly maxPerOrder?: string;
  readonly expiresAt?: string;
  readonly allowedSkuPrefixes?: readonly string[];
}

const spendExtensions = (f: SpendRefusalFacts) => ({
  policy_subject: f.policySubject,
  currency: f.currency,
  period: f.period,
  budget: f.budget,
  remaining: f.remaining,
  resets_at: f.resetsAt,
  ...(f.maxPerOrder ? { max_per_order: f.maxPerOrder } : {}),
  ...(f.expiresAt ? { expires_at: f.expiresAt } : {}),
  ...(f.allowedSkuPrefixes ? { allowed_sku_prefixes: f.allowedSkuPrefixes } : {}),
});

/** The order does not fit the spend policy: over the period's remaining budget or the per-order maximum. */
export const spendLimitExceeded = (
  limit: 'period-budget' | 'per-order',
  amount: string,
  f: SpendRefusalFacts,
) =>
  new Problem(
    403,
    'spend-limit-exceeded',
    'Spend limit exceeded',
    limit === 'per-order'
      ? `The order's ${amount} ${f.currency} is more than the ${f.maxPerOrder} ${f.currency} one order may allocate under its spend policy (policy_subject); no order was created.`
      : `The order's ${amount} ${f.currency} is more than the ${f.remaining} ${f.currency} left of the ${f.period === 'day' ? 'daily' : 'monthly'} budget of its spend policy (policy_subject) until ${f.resetsAt}; no order was created.`,
    { limit, amount, ...spendExtensions(f) },
  );

export const spendPolicyExpired = (f: SpendRefusalFacts) =>
  new Problem(
    403,
    'spend-policy-expired',
    'Spend policy expired',
    `The spend policy (policy_subject) expired at ${f.expiresAt}; no order was created.`,
    spendExtensions(f),
  );

export const spendSkuNotAllowed = (sku: string, f: SpendRefusalFacts) =>
  new Problem(
    403,
    'spend-sku-not-allowed',
    'SKU not allowed by the spend policy',
    `The spend policy (policy_subject) allows only SKUs starting with ${(f.allowedSkuPrefixes ?? []).join(', ')}; ${sku} is not one; no order was created.`,
    { sku, ...spendExtensions(f) },
  );

export const spendPolicyRequired = () =>
  new Problem(
    403,
    'spend-policy-required',
    'No spend policy',
    'No spend policy covers this agent identity and the gateway refuses orders without one (SPEND_POLICY_DEFAULT=deny); no order was created.',
  );

/** A query parameter of an agent route is not acceptable (list: limit, cursor). */
export const invalidQuery = (errors: readonly Violation[]) =>
  new Problem(
    422,
    'invalid-query',
    'Invalid query parameters',
    `The query parameters are not acceptable (${errors.length} violation${errors.length === 1 ? '' : 's'}).`,
    { errors },
  );

/** A cancel carries no fields: an empty body or `{}`. */
export const unexpectedBody = (errors: readonly Violation[]) =>
  new Problem(
    422,
    'contract-violation',
    'Unprocessable content',
    'This request takes no body fields: send no body, or an empty JSON object.',
    { errors },
  );

/** The order exists and is the caller's, but its state machine allows no cancellation now. */
export const orderNotCancellable = (status: string) =>
  new Problem(
    409,
    'order-not-cancellable',
    'Order not cancellable',
    status === 'APPROVED'
      ? 'The cancellation window of this order has closed; it stays as it is.'
      : `The order is ${status} (decided without it); there is nothing to cancel.`,
    { order_status: status },
  );

export const quoteUnavailable = () =>
  new Problem(
    503,
    'service-unavailable',
    'Service unavailable',
    'The cart quote is unavailable.',
    {},
    {
      'retry-after': '1',
    },
  );

/** ORDER_STORE=memory (benchmarks): the audit is a ring of the newest entries, with no tree to prove against. */
export const auditProofsUnavailable = () =>
  new Problem(
    503,
    'audit-proofs-unavailable',
    'Audit proofs unavailable',
    'This gateway keeps its audit log in memory (ORDER_STORE=memory): audit proofs need the durable audit store.',
    {},
    { 'retry-after': '60' },
  );

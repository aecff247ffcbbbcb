import { parseSpiffeId, type SpiffeId } from '../../../lib/auth/spiffe.ts';

/**
 * Spend policies (agent mandates, issue 12): per SPIFFE identity or identity prefix, a budget
 * per UTC period, a maximum per order, an expiry and optionally allowed SKU prefixes. Pure
 * values and functions; the ledgers (memory, Redis) apply them.
 */

export type SpendPeriod = 'day' | 'month';

/** What both ledgers store for a policy. Amounts in integer cents, times in epoch ms. */
export interface SpendPolicy {
  /** The SPIFFE ID it applies to: that identity and every identity below it (segment boundary). */
  readonly subject: string;
  /** ISO 4217; orders carry max_budget_usd, so USD is the only currency a policy may have. */
  readonly currency: 'USD';
  readonly period: SpendPeriod;
  readonly budgetCents: number;
  /** Absent: only the period budget bounds one order. */
  readonly maxPerOrderCents?: number;
  /** Orders above this are stored PENDING_APPROVAL until an operator approves (issue 22). Absent: none. */
  readonly approvalAboveCents?: number;
  /** Orders above this need two distinct operators' approvals (dual control); ≥ approvalAboveCents. */
  readonly secondApprovalAboveCents?: number;
  /** Absent: the policy does not expire. */
  readonly expiresAt?: number;
  /** Absent or empty: any SKU. */
  readonly skuPrefixes?: readonly string[];
  readonly updatedAt: number;
}

export const SPEND_CURRENCIES = ['USD'] as const;
/** Largest budget or per-order maximum: 1,000,000,000.00 (10^11 cents, exact in a double and in Lua). */
export const MAX_AMOUNT_CENTS = 100_000_000_000;
/** Deepest subject: identities deeper than this are matched by their first segments only. */
export const MAX_SUBJECT_SEGMENTS = 16;
export const MAX_SKU_PREFIXES = 32;
const SKU_PREFIX = /^SKU(-([A-Z]{0,2}|[A-Z]{3}(-\d{0,6})?))?$/;
const AMOUNT = /^(0|[1-9]\d{0,9})(\.\d{1,2})?$/;

/**
 * The SPIFFE IDs whose policy could apply to `id`, most specific first: the ID itself, then
 * each ancestor on a segment boundary down to the trust domain's own ID. At most
 * MAX_SUBJECT_SEGMENTS + 1 (a policy cannot name anything deeper).
 */
export function candidateSubjects(id: SpiffeId): string[] {
  const base = `spiffe://${id.trustDomain}`;
  const out: string[] = [];
  for (let n = Math.min(id.segments.length, MAX_SUBJECT_SEGMENTS); n >= 0; n--)
    out.push(n === 0 ? base : `${base}/${id.segments.slice(0, n).join('/')}`);
  return out;
}

/** Cents of a decimal text with at most 2 decimals (`"250.5"` → 25050); undefined otherwise. */
export function centsOfText(text: string): number | undefined {
  const m = AMOUNT.exec(text);
  if (!m) return undefined;
  const frac = (m[2] ?? '').slice(1).padEnd(2, '0');
  return Number(m[1]) * 100 + Number(frac);
}

/** `25050` → `"250.50"`: always two decimals, never through a double's arithmetic. */
export function textOfCents(cents: number): string {
  const sign = cents < 0 ? '-' : '';
  const s = String(Math.abs(Math.trunc(cents))).padStart(3, '0');
  return `${sign}${s.slice(0, -2)}.${s.slice(-2)}`;
}

export interface PeriodWindow {
  /** `D2026-01-31` or `M2026-01`: the ledger's period; a change of kind starts a fresh count. */
  readonly key: string;
  readonly start: number;
  /** When the period's spend starts again from zero (exclusive end). */
  readonly resetsAt: number;
}

/** The UTC calendar day or month containing `now`. */
export function periodWindow(period: SpendPeriod, now: number): PeriodWindow {
  const d = new Date(now);
  const y = d.getUTCFullYear();
  const m = d.getUTCMonth();
  if (period === 'day') {
    const start = Date.UTC(y, m, d.getUTCDate());
    return { key: `D${new Date(start).toISOString().slice(0, 10)}`, start, resetsAt: start + 86_400_000 };
  }
  const start = Date.UTC(y, m, 1);
  return { key: `M${new Date(start).toISOString().slice(0, 7)}`, start, resetsAt: Date.UTC(y, m + 1, 1) };
}

/** An operator's input, as the GraphQL mutation receives it. */
export interface SpendPolicyInput {
  readonly subject: unknown;
  readonly currency: unknown;
  readonly period: unknown;
  readonly budget: unknown;
  readonly maxPerOrder?: unknown;
  readonly approvalAbove?: unknown;
  readonly secondApprovalAbove?: unknown;
  readonly expiresAt?: unknown;
  readonly allowedSkuPrefixes?: unknown;
}

export interface InputViolation {
  readonly pointer: string;
  readonly message: string;
}

export type ParsedPolicy =
  | { readonly ok: true; readonly policy: SpendPolicy }
  | { readonly ok: false; readonly errors: readonly InputViolation[] };

/** Checks an operator's input; every violation is reported with the input field's pointer. */
export function parseSpendPolicy(
  input: SpendPolicyInput,
  trustDomains: readonly string[],
  now: number,
): ParsedPolicy {
  const errors: InputViolation[] = [];
  const bad = (pointer: string, message: string) => errors.push({ pointer, message });

  const id = parseSpiffeId(input.subject);
  if (!id.ok) bad('/subject', `not a SPIFFE ID: ${id.reason}`);
  else if (!trustDomains.includes(id.value.trustDomain))
    bad('/subject', 'trust domain is not one of SPIFFE_TRUST_DOMAINS');
  else if (id.value.segments.length > MAX_SUBJECT_SEGMENTS)
    bad('/subject', `more than ${MAX_SUBJECT_SEGMENTS} path segments`);

  if (input.currency !== 'USD')
    bad('/currency', 'must be USD: orders carry max_budget_usd and no conversion exists');
  if (input.period !== 'day' && input.period !== 'month') bad('/period', 'must be day or month');

  const amount = (pointer: string, v: unknown): number | undefined => {
    const cents = typeof v === 'string' ? centsOfText(v) : undefined;
    if (cents === undefined) {
      bad(pointer, 'must be a decimal string with at most 2 decimals, e.g. "250.00"');
      return undefined;
    }
    if (cents <= 0 || cents > MAX_AMOUNT_CENTS) {
      bad(pointer, 'must be greater than 0 and at most 1000000000.00');
      return undefined;
    }
    return cents;
  };
  const budgetCents = amount('/budget', input.budget);
  const optionalAmount = (pointer: string, v: unknown) =>
    v === undefined || v === null ? undefined : amount(pointer, v);
  const maxPerOrderCents = optionalAmount('/maxPerOrder', input.maxPerOrder);
  const approvalAboveCents = optionalAmount('/approvalAbove', input.approvalAbove);
  const secondApprovalAboveCents = optionalAmount('/secondApprovalAbove', input.secondApprovalAbove);

  let expiresAt: number | undefined;
  if (input.expiresAt !== undefined && input.expiresAt !== null) {
    // RFC 3339 with an explicit offset: a bare local time would mean different instants on different hosts.
    const text = typeof input.expiresAt === 'string' ? input.expiresAt : '';
    const ms = /^\d{4}-\d\d-\d\dT\d\d:\d\d(:\d\d(\.\d{1,9})?)?(Z|[+-]\d\d:\d\d)$/.test(text)
      ? Date.parse(text)
      : Number.NaN;
    if (Number.isNaN(ms))
      bad('/expiresAt', 'must be an RFC 3339 date-time with an offset, e.g. 2026-12-31T23:59:59Z');
    else if (ms <= now) bad('/expiresAt', 'is in the past');
    else expiresAt = ms;
  }

  let skuPrefixes: string[] | undefined;
  const prefixes = input.allowedSkuPrefixes;
  if (prefixes !== undefined && prefixes !== null) {
    if (!Array.isArray(prefixes) || prefixes.length > MAX_SKU_PREFIXES)
      bad('/allowedSkuPrefixes', `must be a list of at most ${MAX_SKU_PREFIXES} SKU prefixes`);
    else {
      prefixes.forEach((p, i) => {
        if (typeof p !== 'string' || p.length === 0 || !SKU_PREFIX.test(p))
          bad(`/allowedSkuPrefixes/${i}`, 'must be the start of a SKU such as SKU-ELC- or SKU-ELC-0001');
      });
      if (prefixes.length > 0) skuPrefixes = [...new Set(prefixes as string[])];
    }
  }

  if (secondApprovalAboveCents !== undefined && input.approvalAbove == null)
    bad('/secondApprovalAbove', 'needs approvalAbove (the first approval) too');
  if (
    secondApprovalAboveCents !== undefined &&
    approvalAboveCents !== undefined &&
    secondApprovalAboveCents < approvalAboveCents
  )
    bad('/secondApprovalAbove', 'must not be below approvalAbove');
  if (errors.length > 0 || !id.ok || budgetCents === undefined) return { ok: false, errors };
  if (maxPerOrderCents !== undefined && maxPerOrderCents > budgetCents)
    return { ok: false, errors: [{ pointer: '/maxPerOrder', message: 'must not exceed the budget' }] };
  const policy: SpendPolicy = {
    subject: id.value.id,
    currency: 'USD',
    period: input.period as SpendPeriod,
    budgetCents,
    ...(maxPerOrderCents !== undefined ? { maxPerOrderCents } : {}),
    ...(approvalAboveCents !== undefined ? { approvalAboveCents } : {}),
    ...(secondApprovalAboveCents !== undefined ? { secondApprovalAboveCents } : {}),
    ...(expiresAt !== undefined ? { expiresAt } : {}),
    ...(skuPrefixes ? { skuPrefixes } : {}),
    updatedAt: now,
  };
  return { ok: true, policy: Object.freeze(policy) };
}

export const skuAllowed = (p: SpendPolicy, sku: string): boolean =>
  !p.skuPrefixes || p.skuPrefixes.length === 0 || p.skuPrefixes.some((x) => sku.startsWith(x));

/**
 * How many distinct operators must approve an order of `amountCents` under `policy` (issue 22):
 * 0 at or below approvalAbove (or without it), 2 above secondApprovalAbove, else 1. "Above" is
 * strict, as for maxPerOrder: an order of exactly the threshold needs no approval.
 */
export function approvalsRequired(policy: SpendPolicy, amountCents: number): 0 | 1 | 2 {
  if (policy.approvalAboveCents === undefined || amountCents <= policy.approvalAboveCents) return 0;
  if (policy.secondApprovalAboveCents !== undefined && amountCents > policy.secondApprovalAboveCents)
    return 2;
  return 1;
}

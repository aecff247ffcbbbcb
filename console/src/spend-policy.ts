/** Spend policies as GraphQL `spendPolicies` returns them, and which one governs an identity. */
export interface SpendPolicy {
  subject: string;
  currency: string;
  period: string;
  budget: string;
  maxPerOrder: string | null;
  approvalAbove?: string | null;
  secondApprovalAbove?: string | null;
  expiresAt: string | null;
  allowedSkuPrefixes?: string[];
  updatedAt?: string;
  currentPeriod: { start: string; resetsAt: string; spent: string; remaining: string };
}

/**
 * The policy that governs an identity: the one set for it, else the one of its longest prefix
 * (a prefix covers the identities below it, path segment by path segment).
 */
export function effectivePolicy(spiffeId: string, policies: readonly SpendPolicy[]): SpendPolicy | undefined {
  let best: SpendPolicy | undefined;
  for (const p of policies)
    if (
      (spiffeId === p.subject || spiffeId.startsWith(`${p.subject}/`)) &&
      (!best || p.subject.length > best.subject.length)
    )
      best = p;
  return best;
}

/** The Spend policies page's form: every field as the operator typed it. */
export interface PolicyForm {
  subject: string;
  currency: string;
  period: 'DAY' | 'MONTH';
  budget: string;
  maxPerOrder: string;
  approvalAbove: string;
  secondApprovalAbove: string;
  expiresAt: string;
  allowedSkuPrefixes: string;
}

export const EMPTY_POLICY: PolicyForm = {
  subject: '',
  currency: 'USD',
  period: 'DAY',
  budget: '',
  maxPerOrder: '',
  approvalAbove: '',
  secondApprovalAbove: '',
  expiresAt: '',
  allowedSkuPrefixes: '',
};

/** A stored policy in the form, to edit it. */
export function formOf(p: SpendPolicy): PolicyForm {
  return {
    subject: p.subject,
    currency: p.currency,
    period: p.period === 'MONTH' ? 'MONTH' : 'DAY',
    budget: p.budget,
    maxPerOrder: p.maxPerOrder ?? '',
    approvalAbove: p.approvalAbove ?? '',
    secondApprovalAbove: p.secondApprovalAbove ?? '',
    expiresAt: p.expiresAt ?? '',
    allowedSkuPrefixes: (p.allowedSkuPrefixes ?? []).join(' '),
  };
}

/**
 * SetSpendPolicy's input: text sent as typed (trimmed), an empty optional field left out. No
 * check of the page's own: the API validates and answers each violation with its field's pointer.
 */
export function policyInput(f: PolicyForm): Record<string, unknown> {
  const input: Record<string, unknown> = {
    subject: f.subject.trim(),
    currency: f.currency.trim(),
    period: f.period,
    budget: f.budget.trim(),
  };
  for (const k of ['maxPerOrder', 'approvalAbove', 'secondApprovalAbove', 'expiresAt'] as const)
    if (f[k].trim()) input[k] = f[k].trim();
  const prefixes = f.allowedSkuPrefixes.split(/[\s,]+/).filter(Boolean);
  if (prefixes.length) input.allowedSkuPrefixes = prefixes;
  return input;
}

/** The API's violations by form field: the pointer's first segment (/allowedSkuPrefixes/3 → allowedSkuPrefixes). */
export function errorsByField(
  errors: readonly { pointer: string; message: string }[],
): Record<string, string[]> {
  const out: Record<string, string[]> = {};
  for (const e of errors) {
    const field = e.pointer.split('/')[1] || 'input';
    const index = e.pointer.split('/')[2];
    const messages = out[field] ?? [];
    messages.push(index === undefined ? e.message : `#${Number(index) + 1}: ${e.message}`);
    out[field] = messages;
  }
  return out;
}

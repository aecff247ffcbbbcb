/** Spend policies as GraphQL `spendPolicies` returns them, and which one governs an identity. */
export interface SpendPolicy {
  subject: string;
  currency: string;
  period: string;
  budget: string;
  maxPerOrder: string | null;
  expiresAt: string | null;
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

/**
 * Checkout API keys of ACP platforms as GraphQL `checkoutApiKeys` gives them (agents:admin;
 * docs/acp-keys.md), and the issue form. The API validates every field; the page sends what was
 * typed and shows the API's refusal on its field (`extensions.field`).
 */

export interface CheckoutApiKey {
  id: string;
  name: string;
  spiffeId: string;
  agentId: string;
  scopes: string[];
  /** ISO 8601. */
  createdAt: string;
  createdBy: string;
  revokedAt: string | null;
  revokedBy: string | null;
  lastUsedAt: string | null;
  webhook: { url: string; secretSet: boolean } | null;
  /** The UCP platform profile URL or origin it may act for; null: unbound (ACP only). */
  ucpProfile: string | null;
}

/** The agent scopes a key may hold (lib/auth/agent-scopes.ts); the first three are ticked for a new key. */
export const KEY_SCOPES = ['orders:create', 'orders:read', 'orders:cancel', 'spend:read'] as const;

export interface IssueForm {
  name: string;
  spiffeId: string;
  agentId: string;
  scopes: string[];
  ucpProfile: string;
}

export const EMPTY_ISSUE: IssueForm = {
  name: '',
  spiffeId: '',
  agentId: '',
  scopes: ['orders:create', 'orders:read', 'orders:cancel'],
  ucpProfile: '',
};

/** IssueCheckoutApiKey's input: text as typed (trimmed), scopes in the API's order; no UCP profile when blank. */
export function issueInput(f: IssueForm): Record<string, unknown> {
  const ucpProfile = f.ucpProfile.trim();
  return {
    name: f.name.trim(),
    spiffeId: f.spiffeId.trim(),
    agentId: f.agentId.trim(),
    scopes: KEY_SCOPES.filter((s) => f.scopes.includes(s)),
    ...(ucpProfile ? { ucpProfile } : {}),
  };
}

/** Active keys first (newest first), then revoked ones (newest revocation first): what an operator acts on leads. */
export function keysInOrder(keys: readonly CheckoutApiKey[]): CheckoutApiKey[] {
  const t = (s: string | null) => (s ? Date.parse(s) : 0);
  return [...keys].sort(
    (a, b) =>
      Number(a.revokedAt !== null) - Number(b.revokedAt !== null) ||
      t(b.revokedAt) - t(a.revokedAt) ||
      t(b.createdAt) - t(a.createdAt) ||
      a.id.localeCompare(b.id),
  );
}

/** The API's refusal for one field, by the name it gives (`extensions.field` → pointer `/name`). */
export function fieldError(
  errors: readonly { pointer: string; message: string }[],
  field: string,
): string | undefined {
  return errors.find((e) => e.pointer === `/${field}`)?.message;
}

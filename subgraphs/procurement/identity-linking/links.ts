import { isPathAtOrBelow } from '../../../lib/auth/spiffe.ts';
import type { CheckoutApiKey } from '../api-keys/types.ts';
import type { SpendPolicy } from '../spend/policy.ts';
import { UCP_SCOPES } from './scopes.ts';

/**
 * Identity linking's rules, protocol-neutral (the OAuth edge is gateway/oauth/). A buyer
 * administrator links a platform by choosing one of the buyer's agent identities; from then on
 * the platform's tokens act exactly as that identity: its SPIFFE ID owns the sessions, and its
 * spend policy, block, rate limit, approvals and audit apply as to an API key of it.
 */

/** An agent identity a grant can act as: one that an active checkout API key acts as. */
export interface AgentIdentity {
  readonly spiffeId: string;
  readonly agentId: string;
  /** The agent scopes the identity's key holds: a link never acts beyond them. */
  readonly scopes: readonly string[];
  /** The key it was chosen through (for the operator's records; the link outlives no key rotation rule). */
  readonly keyId: string;
  /** The key's platform name, to show on the consent page. */
  readonly name: string;
}

/** A linked platform: one OAuth grant, with the identity it acts as. Times in ms since the epoch. */
export interface PlatformLink {
  readonly grantId: string;
  readonly clientId: string;
  readonly clientName: string;
  /** The buyer administrator (operator token subject) who consented. */
  readonly accountId: string;
  readonly identity: AgentIdentity;
  /** The UCP scopes granted. */
  readonly scopes: readonly string[];
  readonly createdAt: number;
  readonly revokedAt: number | null;
  readonly revokedBy: string | null;
}

/**
 * The identities a buyer administrator may choose from: one per SPIFFE ID among the active
 * keys (the newest key of it, as webhooks do). Pure.
 */
export function linkableIdentities(keys: readonly CheckoutApiKey[]): AgentIdentity[] {
  const out = new Map<string, AgentIdentity>();
  for (const k of keys) {
    if (k.revokedAt !== null) continue;
    out.set(k.spiffeId, {
      spiffeId: k.spiffeId,
      agentId: k.agentId,
      scopes: k.scopes,
      keyId: k.id,
      name: k.name,
    });
  }
  return [...out.values()];
}

/**
 * The spend policy that governs an identity, as the consent page shows it: the most specific
 * policy whose subject is the identity or an identity above it (segment boundary), as the
 * ledger applies them. Null: none (SPEND_POLICY_DEFAULT then decides). Pure.
 */
export function governingPolicy(spiffeId: string, policies: readonly SpendPolicy[]): SpendPolicy | null {
  let best: SpendPolicy | null = null;
  for (const p of policies)
    if (isPathAtOrBelow(spiffeId, p.subject) && (!best || p.subject.length > best.subject.length)) best = p;
  return best;
}

/**
 * The agent scopes a call with a token of `ucpScopes` may use as `identity`: those a granted
 * UCP scope maps to and the identity holds. The scope policy (gateway/agent/scope/policy.ts)
 * narrows further per request, as for any credential. Pure.
 */
export function actingScopes(ucpScopes: readonly string[], identityScopes: readonly string[]): string[] {
  const mapped = new Set(UCP_SCOPES.filter((s) => ucpScopes.includes(s.scope)).flatMap((s) => s.agentScopes));
  return identityScopes.filter((s) => mapped.has(s));
}

/**
 * Grants revoked while their access tokens may still be unexpired. Every token check asks it
 * (a Map lookup, no I/O); it is fed by the revocation event on every replica and, at start, by
 * the store's recent revocations. An entry is dropped once no token of the grant can be alive.
 */
export class RevokedGrants {
  private readonly until = new Map<string, number>();

  add(grantId: string, untilMs: number): void {
    const had = this.until.get(grantId) ?? 0;
    if (untilMs > had) this.until.set(grantId, untilMs);
  }

  has(grantId: string, nowMs: number): boolean {
    const u = this.until.get(grantId);
    if (u === undefined) return false;
    if (u > nowMs) return true;
    this.until.delete(grantId);
    return false;
  }

  /** Drops entries whose tokens have all expired (called now and then, not per request). */
  prune(nowMs: number): void {
    for (const [g, u] of this.until) if (u <= nowMs) this.until.delete(g);
  }

  get size(): number {
    return this.until.size;
  }
}

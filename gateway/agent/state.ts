import type { SpiffeId } from '../../lib/auth/spiffe.ts';
import type { ExpectedDigest } from '../../lib/http-signature/digest.ts';
import type { PurchaseOrderRequest } from '../../subgraphs/procurement/contract/types.ts';
import type { SpendStatus } from '../../subgraphs/procurement/spend/ledger.ts';

/** How step 1 proved the identity: a mesh source, a signature, or a mesh source and a signature that agree. */
export type IdentitySource =
  | 'mtls'
  | 'proxy'
  | 'signature'
  | 'mtls+signature'
  | 'proxy+signature'
  /** An agent platform's checkout API key (ACP): the key is bound to one agent identity. */
  | 'api-key'
  /** An identity-linking access token (gateway/oauth/): the agent identity the buyer linked. */
  | 'oauth';

/** What the chain learns about one agent request, step by step (read by the audit). */
export interface AgentRequestState {
  /** Step 1: the verified workload identity. */
  identity: SpiffeId | undefined;
  /** Step 1: how it was proven (audited only; later steps do not look at it). */
  identitySource: IdentitySource | undefined;
  /**
   * Step 1 → 5: the body digests a verified signature covered; the parser checks them
   * against the exact bytes it reads (`checked` once it has).
   */
  signedDigest: { readonly expected: ExpectedDigest; checked: boolean } | undefined;
  /** Why the request was refused (or `ok`); goes to the audit entry. */
  reason: string;
  /** Step 3: consecutive contract errors of this identity before this request. */
  failures: number;
  /** Steps 5–6: the body broke the contract (counts towards the block). */
  contractError: boolean;
  /** Step 6: the parsed, frozen request. */
  order: PurchaseOrderRequest | undefined;
  /** Step 7: the idempotency record this request owns. */
  idempotency: { key: string; fingerprint: string } | undefined;
  /**
   * Step 7½: the order id chosen before the spend policy reserved the amount under it (from the
   * Idempotency-Key, else fresh); `reserved` when the ledger charged this request.
   */
  spend: { orderId: string; reserved: boolean; status?: SpendStatus } | undefined;
  /** Step 7¾: the spend policy asks this many distinct operators to approve the order (issue 22). */
  approval: { required: 1 | 2 } | undefined;
  /** A body that passed its contract without being an order (ACP): resets the block count as an order does. */
  validBody: boolean;
  /** The order a call placed or concerns when neither Location nor the path names it (ACP completion). */
  orderId: string | undefined;
  /**
   * Step 1½: the warm-up's own call (gateway/agent/rehearsal.ts, issue 48): every step runs,
   * the order's statements are rolled back, its Idempotency-Key and spend are given back, and
   * the call is not audited (the warm-up's one entry is).
   */
  rehearsal: boolean;
}

declare module 'fastify' {
  interface FastifyRequest {
    agent: AgentRequestState;
  }
}

export const freshState = (): AgentRequestState => ({
  identity: undefined,
  identitySource: undefined,
  signedDigest: undefined,
  reason: 'ok',
  failures: 0,
  contractError: false,
  order: undefined,
  idempotency: undefined,
  spend: undefined,
  approval: undefined,
  validBody: false,
  orderId: undefined,
  rehearsal: false,
});

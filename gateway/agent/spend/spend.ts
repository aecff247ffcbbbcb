import type { FastifyReply, FastifyRequest } from 'fastify';
import type { SpiffeId } from '../../../lib/auth/spiffe.ts';
import type { Clock } from '../../../lib/clock.ts';
import type { Logger } from '../../../lib/logger.ts';
import { type Problem, sendProblem } from '../../../lib/problem.ts';
import type { PurchaseOrderRequest } from '../../../subgraphs/procurement/contract/types.ts';
import { newOrderId, orderIdFor } from '../../../subgraphs/procurement/domain/order-domain.ts';
import type { SpendLedger, SpendStatus } from '../../../subgraphs/procurement/spend/ledger.ts';
import { candidateSubjects, centsOfText, textOfCents } from '../../../subgraphs/procurement/spend/policy.ts';
import type { IdempotencyStore } from '../idempotency/store.ts';
import {
  idempotencyKeyReused,
  type SpendRefusalFacts,
  spendLimitExceeded,
  spendPolicyExpired,
  spendPolicyRequired,
  spendSkuNotAllowed,
} from '../problems.ts';

export interface SpendOptions {
  readonly ledger: SpendLedger;
  readonly idempotency: IdempotencyStore;
  readonly clock: Clock;
  readonly log: Logger;
  /** What happens to an identity no policy covers: `allow` (no limit) or `deny` (403). */
  readonly withoutPolicy: 'allow' | 'deny';
}

const iso = (ms: number) => new Date(ms).toISOString();

/** The facts of a policy and its current period, as amounts in exact decimal text. */
export function spendFacts(s: SpendStatus): SpendRefusalFacts {
  const p = s.policy;
  return {
    policySubject: p.subject,
    currency: p.currency,
    period: p.period,
    budget: textOfCents(p.budgetCents),
    remaining: textOfCents(Math.max(0, p.budgetCents - s.spentCents)),
    resetsAt: iso(s.window.resetsAt),
    ...(p.maxPerOrderCents !== undefined ? { maxPerOrder: textOfCents(p.maxPerOrderCents) } : {}),
    ...(p.expiresAt !== undefined ? { expiresAt: iso(p.expiresAt) } : {}),
    ...(p.skuPrefixes?.length ? { allowedSkuPrefixes: p.skuPrefixes } : {}),
  };
}

/** The spend policy's verdict on one order, apart from HTTP (the MCP tools can use it too). */
export type SpendDecision =
  /** Go on to the order domain; `spend` goes to the request state (absent: nothing reserved, the domain picks the id). */
  | {
      readonly kind: 'go';
      readonly spend?: { orderId: string; reserved: boolean; status?: SpendStatus };
      readonly reason?: string;
    }
  | { readonly kind: 'refused'; readonly reason: string; readonly problem: Problem };

/**
 * The order's allocated_budget (= max_budget_usd, what the spec's order allocates) must fit the
 * spend policy of the caller's identity; it is reserved under the order id in one atomic ledger
 * step (one Redis script across replicas). The order id is fixed here, before the charge:
 * derived from the identity-scoped Idempotency-Key record (a retry finds the same reservation
 * and is not charged twice), else fresh. Rejects when the ledger is unavailable.
 */
export async function decideSpend(
  o: Pick<SpendOptions, 'ledger' | 'clock' | 'withoutPolicy'>,
  identity: SpiffeId,
  order: PurchaseOrderRequest,
  idempotencyRecordKey?: string,
): Promise<SpendDecision> {
  const orderId = idempotencyRecordKey ? orderIdFor(idempotencyRecordKey) : newOrderId();
  const amountCents = centsOfText(order.max_budget_usd);
  // The contract admits only whole cents in (0, 5000]; anything else is a bug upstream.
  if (amountCents === undefined) throw new Error('spend step: allocated budget is not whole cents');
  const candidates = candidateSubjects(identity);
  const r = await o.ledger.reserve({
    orderId,
    candidates,
    sku: order.sku,
    amountCents,
    now: o.clock.now(),
  });
  const amount = textOfCents(amountCents);
  switch (r.kind) {
    case 'reserved': {
      const f = spendFacts(r.status);
      return {
        kind: 'go',
        spend: { orderId, reserved: true, status: r.status },
        reason: `ok; spend: reserved ${amount} ${f.currency} under ${f.policySubject}, ${f.remaining} left until ${f.resetsAt}`,
      };
    }
    case 'replayed': {
      // Charged by an earlier attempt whose outcome may be unknown (a timeout): this request
      // never gives it back, so an order stored by that attempt stays counted. The policy is
      // read again so the retry needs the same approval the first attempt did.
      const status = await o.ledger.status(candidates, o.clock.now());
      return {
        kind: 'go',
        spend: { orderId, reserved: false, ...(status ? { status } : {}) },
        reason: 'ok; spend: order already reserved (retry)',
      };
    }
    case 'mismatch':
      // The key's order id holds the reservation of another body (its first attempt's reply was
      // lost, e.g. a 503 on a reserve that timed out but ran): this body was never judged by
      // the policy, so it must not go ahead as that attempt's retry. 422, as for a key reused
      // while its record is kept; nothing charged, the first reservation stays.
      return {
        kind: 'refused',
        reason: 'idempotency: key reused with another body (found with its spend reservation)',
        problem: idempotencyKeyReused(),
      };
    case 'no-policy':
      // Nothing reserved: the domain picks the id as without a policy (no extra lookup).
      if (o.withoutPolicy === 'allow') return { kind: 'go' };
      return {
        kind: 'refused',
        reason: 'spend: no policy covers this identity',
        problem: spendPolicyRequired(),
      };
    case 'refused': {
      const f = spendFacts(r.status);
      const why = {
        expired: ['spend: policy expired', () => spendPolicyExpired(f)],
        'sku-not-allowed': ['spend: SKU not allowed', () => spendSkuNotAllowed(order.sku, f)],
        'per-order': ['spend: over the per-order maximum', () => spendLimitExceeded('per-order', amount, f)],
        budget: ['spend: over the period budget', () => spendLimitExceeded('period-budget', amount, f)],
      } as const;
      const [reason, problem] = why[r.reason];
      return {
        kind: 'refused',
        reason: `${reason} (${amount} ${f.currency}; ${f.remaining} of ${f.budget} left under ${f.policySubject} until ${f.resetsAt})`,
        problem: problem(),
      };
    }
  }
}

/**
 * Step 7½ (preHandler, after idempotency, before the order domain): decideSpend. A refusal is
 * 403 with its own problem type, nothing is stored, and the Idempotency-Key is free again
 * (only a 201 or 202 is kept for replay, as after a 503).
 */
export function spendStep(o: SpendOptions) {
  const freeKey = async (req: FastifyRequest) => {
    const held = req.agent.idempotency;
    if (held) await o.idempotency.release(held.key).catch(() => {});
  };
  return async function spend(req: FastifyRequest, reply: FastifyReply) {
    const { identity, order, idempotency } = req.agent;
    if (!identity || !order) return;
    let d: SpendDecision;
    try {
      d = await decideSpend(o, identity, order, idempotency?.key);
    } catch (err) {
      // The ledger is down (Redis): the chain answers 503; the key must not stay in flight.
      await freeKey(req);
      throw err;
    }
    if (d.kind === 'go') {
      if (d.spend) req.agent.spend = d.spend;
      if (d.reason) req.agent.reason = d.reason;
      return;
    }
    req.agent.reason = d.reason;
    await freeKey(req);
    return sendProblem(reply, d.problem, req.url);
  };
}

/** Gives the order's reservation back when the order domain definitely did not store the order. */
export async function releaseUnplaced(
  ledger: SpendLedger,
  req: FastifyRequest,
  clock: Clock,
  log: Logger,
): Promise<void> {
  const s = req.agent.spend;
  if (!s?.reserved) return;
  await ledger
    .release(s.orderId, clock.now())
    .catch((err) => log.error({ err, traceId: req.traceId }, 'spend reservation not released'));
}

/** Where an agent reads its own spend policy and what is left of it. */
export const SPEND_PATH = '/api/v2/procurement/spend';

/**
 * GET /api/v2/procurement/spend: the policy that applies to the caller (the most specific one,
 * possibly a prefix policy shared with other identities) and its current UTC period.
 */
export function readSpendHandler(o: Pick<SpendOptions, 'ledger' | 'clock' | 'withoutPolicy'>) {
  return async function readSpend(req: FastifyRequest, reply: FastifyReply) {
    const identity = req.agent.identity;
    if (!identity) throw new Error('agent chain reached the handler without identity');
    const s = await o.ledger.status(candidateSubjects(identity), o.clock.now());
    const body = s
      ? spendView(identity.id, s)
      : { identity: identity.id, policy: null, current_period: null };
    return reply.type('application/json').send({ ...body, without_policy: o.withoutPolicy });
  };
}

/** The JSON an agent reads (schemas/openapi/procurement.yaml, SpendStatus). */
export function spendView(identity: string, s: SpendStatus) {
  const f = spendFacts(s);
  return {
    identity,
    policy: {
      subject: f.policySubject,
      applies_to: f.policySubject === identity ? 'identity' : 'prefix',
      currency: f.currency,
      period: f.period,
      budget: f.budget,
      max_per_order: f.maxPerOrder ?? null,
      approval_above:
        s.policy.approvalAboveCents === undefined ? null : textOfCents(s.policy.approvalAboveCents),
      second_approval_above:
        s.policy.secondApprovalAboveCents === undefined
          ? null
          : textOfCents(s.policy.secondApprovalAboveCents),
      expires_at: f.expiresAt ?? null,
      allowed_sku_prefixes: f.allowedSkuPrefixes ?? [],
    },
    current_period: {
      start: iso(s.window.start),
      resets_at: f.resetsAt,
      spent: textOfCents(s.spentCents),
      remaining: f.remaining,
    },
  };
}

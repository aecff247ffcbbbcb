import type { GraphQLResolverMap } from '@apollo/subgraph/dist/schema-helper/index.js';
import { GraphQLError } from 'graphql';
import type { ApprovalRecord } from '../../../lib/ap2/approval-record.ts';
import { sha256b64url } from '../../../lib/ap2/canonical.ts';
import type { RequestContext } from '../../../lib/auth/context.ts';
import { parseSpiffeId } from '../../../lib/auth/spiffe.ts';
import type { Clock } from '../../../lib/clock.ts';
import { freeText } from '../../../lib/text/free-text.ts';
import type { Decision } from '../domain/approval.ts';
import { decodeCursor } from '../domain/cursor.ts';
import type { DecideOutcome, OrderDomain } from '../domain/order-domain.ts';
import type { PurchaseOrder } from '../domain/purchase-order.ts';
import { view } from '../spend/graphql.ts';
import type { SpendLedger } from '../spend/ledger.ts';
import { candidateSubjects, centsOfText, textOfCents } from '../spend/policy.ts';

const ORDER_ID = /^ord_[0-9a-f]{32}$/;
export const MAX_TEXT = 1000;
export const MAX_PAGE = 200;

/**
 * Errors of the approval operations, each with a machine-readable `extensions.code` of the 4xx
 * class (never INTERNAL_SERVER_ERROR for what an operator sent or a decision that came first).
 * No `extensions.http` status, as for the webhook errors: a subgraph answering 4xx over HTTP
 * makes the distributed gateway report the call itself as failed.
 */
const error = (code: string, message: string, extra: Record<string, unknown> = {}) =>
  new GraphQLError(message, { extensions: { code, ...extra } });
const badInput = (field: string, message: string) => error('BAD_USER_INPUT', message, { field });

const iso = (seconds: number | null) =>
  seconds === null ? null : new Date(Math.round(seconds * 1000)).toISOString();

function orderIdOf(raw: string): string {
  if (!ORDER_ID.test(raw)) throw badInput('orderId', 'orderId is not an order id (ord_ and 32 hex digits)');
  return raw;
}

/** Free text of an operator (lib/text/free-text.ts): trimmed, at most MAX_TEXT characters. */
function textOf(field: string, raw: string | null | undefined, required: boolean): string | null {
  // Stored in the order's approvals (jsonb): what PostgreSQL refuses is refused here, not as a database error.
  const t = freeText(raw, { max: MAX_TEXT, required });
  if (t.ok) return t.text;
  throw badInput(
    field,
    t.refusal === 'empty' ? `${field} must say why (a non-empty text)` : `${field} ${t.reason}`,
  );
}

/** The operator is the verified token's subject: an approval must name who gave it. */
function operatorOf(ctx: RequestContext): string {
  const sub = ctx.caller.subject;
  if (!sub) throw error('FORBIDDEN', 'an approval decision needs a token with a subject (the operator)');
  return sub;
}

/** A decision's outcome as the mutation answers it: the order, or an error naming what happened. */
function answer(orderId: string, r: DecideOutcome): PurchaseOrder {
  switch (r.kind) {
    case 'decided':
      return r.order;
    case 'not-found':
      throw error('NOT_FOUND', `order ${orderId} not found`);
    case 'already-decided':
      throw error(
        'ORDER_ALREADY_DECIDED',
        `order ${orderId} was already ${r.order.status} by ${r.order.decidedBy ?? 'another operator'}; this decision was not taken`,
        { decision: r.order.status, decidedBy: r.order.decidedBy, decidedAt: iso(r.order.decidedAt) },
      );
    case 'same-approver':
      throw error(
        'APPROVER_ALREADY_APPROVED',
        `you approved order ${orderId} already; it needs ${r.order.approvalsRequired} approvals by distinct operators`,
        { approvalsRequired: r.order.approvalsRequired, approvals: r.order.approvals.length },
      );
    case 'not-pending': {
      const o = r.order;
      const why =
        o.status === 'PENDING_APPROVAL'
          ? `its approval request expired at ${iso(o.expiresAt)}`
          : o.status === 'APPROVED'
            ? 'it never needed an approval'
            : `it is ${o.status}`;
      throw error('ORDER_NOT_PENDING', `order ${orderId} is not awaiting approval: ${why}`, {
        status: o.status === 'PENDING_APPROVAL' ? 'EXPIRED' : o.status,
      });
    }
  }
}

/**
 * Resolvers of the approval part of schemas/procurement.graphql (issue 22); the role
 * `orders:approve` comes from its @requiresRole, applied by the gateway and again here.
 */
export function approvalResolvers(
  domain: OrderDomain,
  ledger: SpendLedger,
  clock: Clock,
): GraphQLResolverMap<RequestContext> {
  const decideWith = async (orderId: string, d: Decision) => answer(orderId, await domain.decide(orderId, d));
  return {
    Query: {
      pendingApprovals: async (_: unknown, a: { after?: string | null; first?: number | null }) => {
        const first = a.first ?? 50;
        if (!Number.isInteger(first) || first < 1 || first > MAX_PAGE)
          throw badInput('first', `first: from 1 to ${MAX_PAGE}`);
        const after = a.after == null ? undefined : decodeCursor(a.after);
        if (a.after != null && !after) throw badInput('after', 'after is not a cursor of this queue');
        const page = await domain.pending({ limit: first, ...(after ? { after } : {}) });
        return { nodes: page.orders, endCursor: page.nextCursor, hasNextPage: page.nextCursor !== null };
      },
    },
    Mutation: {
      approvePurchaseOrder: async (
        _: unknown,
        a: { orderId: string; note?: string | null },
        ctx: RequestContext,
      ) => {
        const orderId = orderIdOf(a.orderId);
        const note = textOf('note', a.note, false);
        return decideWith(orderId, { kind: 'approve', operator: operatorOf(ctx), note });
      },
      rejectPurchaseOrder: async (
        _: unknown,
        a: { orderId: string; reason: string },
        ctx: RequestContext,
      ) => {
        const orderId = orderIdOf(a.orderId);
        const reason = textOf('reason', a.reason, true) as string;
        return decideWith(orderId, { kind: 'reject', operator: operatorOf(ctx), reason });
      },
    },
    PurchaseOrder: {
      // The record as stored (the signature is what a reader checks; the fields are its payload).
      approvalRecord: (o: PurchaseOrder) => (o.approvalRecord ? approvalRecordView(o.approvalRecord) : null),
    },
    PendingApproval: {
      order: (o: PurchaseOrder) => o,
      agentId: (o: PurchaseOrder) => o.agentId,
      spiffeId: (o: PurchaseOrder) => o.spiffeId,
      // Two decimals, as the policy's amounts ("101.00"), never through a double.
      amount: (o: PurchaseOrder) => textOfCents(centsOfText(o.allocatedBudget) ?? 0),
      approvalsRequired: (o: PurchaseOrder) => o.approvalsRequired,
      approvals: (o: PurchaseOrder) => o.approvals,
      expiresAt: (o: PurchaseOrder) => o.expiresAt,
      // The policy that applies to the agent now, and what is left of its period (the pending
      // amount is already counted as spent: it is reserved).
      policy: async (o: PurchaseOrder) => {
        const s = await statusOf(ledger, o, clock.now());
        return s ? view(s.policy) : null;
      },
      remainingBudget: async (o: PurchaseOrder) => {
        const s = await statusOf(ledger, o, clock.now());
        return s ? textOfCents(Math.max(0, s.policy.budgetCents - s.spentCents)) : null;
      },
    },
  };
}

/** The SDL's OrderApprovalRecord: the JWS, its SHA-256, and what its header and payload say. */
function approvalRecordView(jws: string) {
  const [header = '', payload = ''] = jws.split('.');
  const h = JSON.parse(Buffer.from(header, 'base64url').toString('utf8')) as { kid: string };
  const r = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8')) as ApprovalRecord;
  return {
    record: jws,
    recordSha256: sha256b64url(jws),
    kid: h.kid,
    decision: r.decision,
    policySubject: r.policy.subject,
    approvalAbove: r.policy.approval_above ?? null,
    secondApprovalAbove: r.policy.second_approval_above ?? null,
    amount: r.amount,
    approvalsRequired: r.approvals_required,
    decidedAt: r.decided_at,
  };
}

function statusOf(ledger: SpendLedger, o: PurchaseOrder, now: number) {
  const id = parseSpiffeId(o.spiffeId);
  return id.ok ? ledger.status(candidateSubjects(id.value), now) : Promise.resolve(null);
}

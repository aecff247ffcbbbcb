import type { ApprovalPolicy } from '../../../lib/ap2/approval-record.ts';
import { usdAmount } from '../contract/json.ts';
import { approvalPolicyOf } from '../domain/approval-record.ts';
import { type BuyerConsent, consentOf } from '../domain/buyer-consent.ts';
import type { Approval, OrderLine, OrderStatus, PurchaseOrder, Shipment } from '../domain/purchase-order.ts';

/**
 * A purchase order as the SQL store keeps it (`purchase_orders`, ./migrations.ts): the row as
 * the drivers return it (jsonb parsed by PGlite and pg, text where a driver does not), and the
 * order read from it, exact and frozen. A field added later (shipments, buyer consent) is
 * absent from an order that has none, so older orders read as they did.
 */

export interface Row {
  order_id: string;
  status: OrderStatus;
  agent_id: string;
  spiffe_id: string;
  sku: string;
  quantity: number;
  /** numeric, selected as text: the exact decimal. */
  allocated_budget: string;
  processed_at: number;
  cancelled_at: number | null;
  trace_id: string;
  approvals_required: number;
  approvals: Approval[] | string;
  expires_at: number | null;
  decided_at: number | null;
  decided_by: string | null;
  decision_reason: string | null;
  version: number;
  /** jsonb (PGlite and pg parse it; text when a driver does not). */
  lines: StoredLine[] | string | null;
  total: string | null;
  checkout_session_id: string | null;
  /** jsonb: the shipments, oldest first (`[]` for none). */
  shipments: StoredShipment[] | string | null;
  /** jsonb: the buyer's consent choices (domain/buyer-consent.ts), null for none. */
  buyer_consent: Record<string, unknown> | string | null;
  /** jsonb: the approval thresholds that applied (issue 50), null for none. */
  approval_policy: Record<string, unknown> | string | null;
  /** The signed approval record (a compact JWS), null until an operator decided. */
  approval_record: string | null;
}

/** A shipment as stored in the `shipments` jsonb column (the order's own field names). */
type StoredShipment = Shipment;

function shipmentsOf(v: Row['shipments']): readonly Shipment[] | undefined {
  const stored = typeof v === 'string' ? (JSON.parse(v) as StoredShipment[]) : v;
  if (!stored || stored.length === 0) return undefined;
  return Object.freeze(
    stored.map((s) =>
      Object.freeze({ ...s, lines: Object.freeze(s.lines.map((l) => Object.freeze({ ...l }))) }),
    ),
  );
}

/** A line as stored in the `lines` jsonb column: snake_case as in the events, amounts as text. */
interface StoredLine {
  sku: string;
  quantity: number;
  unit_price: string;
  discount: string;
  line_total: string;
}

export const storedLine = (l: OrderLine): StoredLine => ({
  sku: l.sku,
  quantity: l.quantity,
  unit_price: l.unitPrice,
  discount: l.discount,
  line_total: l.lineTotal,
});

function linesOf(v: Row['lines']): readonly OrderLine[] | null {
  if (v === null) return null;
  const stored = typeof v === 'string' ? (JSON.parse(v) as StoredLine[]) : v;
  return Object.freeze(
    stored.map((l) =>
      Object.freeze({
        sku: l.sku,
        quantity: Number(l.quantity),
        unitPrice: l.unit_price,
        discount: l.discount,
        lineTotal: l.line_total,
      }),
    ),
  );
}

const num = (v: number | null) => (v === null ? null : Number(v));

function exactBudget(r: Row) {
  const amount = usdAmount(r.allocated_budget);
  // The CHECK constraints make this unreachable for rows this code wrote.
  if (amount === undefined) throw new Error(`order ${r.order_id} has a stored budget that is not an amount`);
  return amount;
}

export const fromRow = (r: Row): PurchaseOrder =>
  Object.freeze({
    orderId: r.order_id,
    status: r.status,
    agentId: r.agent_id,
    spiffeId: r.spiffe_id,
    sku: r.sku,
    quantity: Number(r.quantity),
    allocatedBudget: exactBudget(r),
    processedAt: Number(r.processed_at),
    cancelledAt: num(r.cancelled_at),
    traceId: r.trace_id,
    approvalsRequired: Number(r.approvals_required) as 0 | 1 | 2,
    approvals: Object.freeze(
      (typeof r.approvals === 'string' ? (JSON.parse(r.approvals) as Approval[]) : r.approvals).map((a) =>
        Object.freeze({ ...a }),
      ),
    ),
    expiresAt: num(r.expires_at),
    decidedAt: num(r.decided_at),
    decidedBy: r.decided_by,
    decisionReason: r.decision_reason,
    version: Number(r.version),
    lines: linesOf(r.lines),
    total: r.total,
    checkoutSessionId: r.checkout_session_id,
    ...withShipments(r.shipments),
    ...withConsent(r.buyer_consent),
    ...withApproval(r),
  });

/** The approval evidence only when the order has it: an order without reads as it did before. */
function withApproval(r: Row): { approvalPolicy?: ApprovalPolicy; approvalRecord?: string } {
  const policy = approvalPolicyOf(
    typeof r.approval_policy === 'string' ? JSON.parse(r.approval_policy) : r.approval_policy,
  );
  return {
    ...(policy ? { approvalPolicy: policy } : {}),
    ...(r.approval_record ? { approvalRecord: r.approval_record } : {}),
  };
}

/** `buyerConsent` only when the order has one: an order without reads as it did before it existed. */
function withConsent(v: Row['buyer_consent']): { buyerConsent?: BuyerConsent } {
  const consent = consentOf(typeof v === 'string' ? JSON.parse(v) : v);
  return consent ? { buyerConsent: consent } : {};
}

/** `shipments` only when there is one: an order without any reads as it did before shipments existed. */
function withShipments(v: Row['shipments']): { shipments?: readonly Shipment[] } {
  const shipments = shipmentsOf(v);
  return shipments ? { shipments } : {};
}

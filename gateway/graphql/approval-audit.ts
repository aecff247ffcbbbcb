import type { ApolloServerPlugin, GraphQLRequestContextWillSendResponse } from '@apollo/server';
import { type FieldNode, Kind, type ValueNode } from 'graphql';
import { sha256b64url } from '../../lib/ap2/canonical.ts';
import type { RequestContext } from '../../lib/auth/context.ts';
import type { Clock } from '../../lib/clock.ts';
import type { Logger } from '../../lib/logger.ts';
import { approvalAuditReason } from '../../subgraphs/procurement/domain/approval-record.ts';
import type { AuditLog } from '../agent/audit/log.ts';
import type { OrderPort } from '../agent/order/order-port.ts';

/** The operators' decisions on an order (schemas/procurement.graphql, issue 22). */
const DECISIONS = new Set(['approvePurchaseOrder', 'rejectPurchaseOrder']);

/** The orderId argument as sent: a literal, or the variable it names. */
function orderIdOf(field: FieldNode, variables: Record<string, unknown> | undefined): string | undefined {
  const value: ValueNode | undefined = field.arguments?.find((a) => a.name.value === 'orderId')?.value;
  if (value?.kind === Kind.STRING) return value.value;
  const v = value?.kind === Kind.VARIABLE ? variables?.[value.name.value] : undefined;
  return typeof v === 'string' ? v : undefined;
}

/**
 * The audit entry of an operator's decision (issue 50; docs/ap2.md, "The approval decision"):
 * each approvePurchaseOrder or rejectPurchaseOrder that answered its order is written to the
 * agent audit log with the order's id (so the order's Merkle inclusion proof, GET
 * …/audit-proof, holds it), the order's identity (as an operator's unblock names the agent's),
 * the operator, the status it left the order in and, once decided, the SHA-256 of the approval
 * record this system signed. The record is read back from the order domain (the subgraph keeps
 * it); a read that fails leaves the entry without it, and the owner's authorization read names
 * it again. Refused decisions (errors, no order) write nothing here: they changed nothing.
 */
export function approvalAuditPlugin(o: {
  readonly audit: AuditLog;
  readonly orders: OrderPort;
  readonly clock: Clock;
  readonly log: Logger;
}): ApolloServerPlugin<RequestContext> {
  const entry = async (rc: GraphQLRequestContextWillSendResponse<RequestContext>, field: FieldNode) => {
    const orderId = orderIdOf(field, rc.request.variables);
    if (!orderId) return;
    let recordSha: string | undefined;
    let found: Awaited<ReturnType<OrderPort['get']>> = null;
    try {
      found = await o.orders.get(orderId);
      recordSha = found?.order?.approvalRecord ? sha256b64url(found.order.approvalRecord) : undefined;
    } catch (err) {
      o.log.warn({ err, orderId }, 'the decided order could not be read for its audit entry');
    }
    const operator = rc.contextValue.caller.subject ?? 'unknown-operator';
    const status = found?.order?.status ?? 'unknown';
    o.audit.append({
      at: o.clock.now(),
      traceId: rc.contextValue.traceId,
      method: 'POST',
      path: `/graphql ${field.name.value}`,
      status: 200,
      durationMs: 0,
      identity: found?.spiffeId ?? null,
      reason:
        `${field.name.value} by operator ${operator}: ${status}${recordSha ? `; ${approvalAuditReason(recordSha)}` : ''}`.slice(
          0,
          1024,
        ),
      identitySource: null,
      orderId,
    });
  };
  return {
    async requestDidStart() {
      return {
        async willSendResponse(rc) {
          if (rc.operation?.operation !== 'mutation' || rc.response.body.kind !== 'single') return;
          const data = rc.response.body.singleResult.data as Record<string, unknown> | null | undefined;
          for (const s of rc.operation.selectionSet.selections) {
            if (s.kind !== Kind.FIELD || !DECISIONS.has(s.name.value)) continue;
            if (!data?.[s.alias?.value ?? s.name.value]) continue;
            await entry(rc, s);
          }
        },
      };
    },
  };
}

import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Logger } from '../../../lib/logger.ts';
import type { OrderAuthorization } from '../../../subgraphs/procurement/checkout/session.ts';
import type { CheckoutSessionStore } from '../../../subgraphs/procurement/checkout/store.ts';
import { approvalEvidenceOf } from '../../../subgraphs/procurement/domain/approval-record.ts';
import type { OrderPort } from './order-port.ts';
import { CANONICAL_PATH, ownOrder } from './place.ts';

/**
 * GET …/orders/{id}/authorization (docs/ap2.md): the owner's order only, after the same steps as
 * reading it. The evidence its checkout was completed with: the AP2 checkout mandate as the
 * platform presented it, this merchant's signature on the checkout inside it, which keys signed
 * both, and the SHA-256 the completion's audit entry names (so the entry's inclusion proof,
 * GET …/audit-proof, ties the evidence to the signed log). `authorization: null` for an order
 * completed without one (a session that did not negotiate AP2, or an order not placed through
 * a checkout session). `approval`: the operators' decision this system signed, for an order that
 * waited (or that it did not wait, under which policy at which amount).
 */
export function orderAuthorizationHandler(o: {
  orders: OrderPort;
  log: Logger;
  sessions: CheckoutSessionStore | undefined;
}) {
  return async function orderAuthorization(
    req: FastifyRequest<{ Params: { id: string } }>,
    reply: FastifyReply,
  ) {
    const found = await ownOrder(req, reply, o, 'authorization');
    if (!found) return reply;
    // A store failure is thrown to the chain's error handler: 503, details in the log.
    const session =
      found.checkoutSessionId && o.sessions ? await o.sessions.get(found.checkoutSessionId) : null;
    const a = session && session.owner === found.spiffeId ? session.authorization : undefined;
    const approval = found.order ? approvalEvidenceOf(found.order) : null;
    // The entry of this read names the signed approval record: its inclusion proof (GET
    // …/audit-proof) then covers the record (the operator's decision itself is a GraphQL call,
    // which the agent audit log does not hold).
    const approved = approval?.type === 'signed_approval_record' ? `; ${approval.audit_reason}` : '';
    req.agent.reason = `ok; authorization of ${req.params.id}: ${a ? `${a.kind} sha-256 ${a.mandateSha256}` : 'none'}${approved}`;
    req.agent.orderId = req.params.id;
    return reply
      .header('cache-control', 'no-store')
      .type('application/json')
      .send(
        JSON.stringify({
          order_id: req.params.id,
          checkout_session_id: found.checkoutSessionId ?? null,
          authorization: a ? wire(a) : null,
          approval,
          payment_data: session?.owner === found.spiffeId ? (session.paymentData ?? null) : null,
          audit_proof: `${CANONICAL_PATH}/${req.params.id}/audit-proof`,
        }),
      );
  };
}

const wire = (a: OrderAuthorization) => ({
  type: a.kind,
  checkout_mandate: a.mandate,
  mandate_sha256: a.mandateSha256,
  merchant_authorization: a.merchantAuthorization,
  merchant_kid: a.merchantKid,
  platform_profile: a.platformProfile,
  platform_kid: a.platformKid,
  verified_at: new Date(a.verifiedAt).toISOString(),
  audit_reason: `ap2: mandate sha-256 ${a.mandateSha256}`,
});

import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Logger } from '../../../lib/logger.ts';
import { sendProblem } from '../../../lib/problem.ts';
import type { AuditProofs } from '../audit/proofs.ts';
import { auditProofsUnavailable } from '../problems.ts';
import type { OrderPort } from './order-port.ts';
import { ownOrder } from './place.ts';

/**
 * GET …/orders/{id}/audit-proof (docs/audit-proofs.md): after identity, scope orders:read,
 * block and rate limit, the owner's order only (another identity's, or an id of another form,
 * is the same 404 as an unknown order, so ids do not leak). Answers the order's audit entries
 * with their inclusion proofs in a signed tree head, for the agent to check offline.
 */
export function auditProofHandler(o: { orders: OrderPort; log: Logger; proofs: AuditProofs | undefined }) {
  return async function auditProof(req: FastifyRequest<{ Params: { id: string } }>, reply: FastifyReply) {
    if (!(await ownOrder(req, reply, o, 'audit proof'))) return reply;
    if (!o.proofs) {
      req.agent.reason = 'audit proof: no durable audit store';
      return sendProblem(reply, auditProofsUnavailable(), req.url);
    }
    // A store failure here is thrown to the chain's error handler: 503, details in the log.
    const proof = await o.proofs.forOrder(req.params.id);
    return reply.header('cache-control', 'no-store').type('application/json').send(proof);
  };
}

import type { FastifyReply, FastifyRequest } from 'fastify';
import { sendProblem } from '../../../lib/problem.ts';
import { validatePurchaseOrderRequest } from '../../../subgraphs/procurement/contract/validate.ts';
import { contractViolation } from '../problems.ts';

/**
 * Step 6 (preValidation): the body must be a PurchaseOrderRequest exactly (schema compiled
 * from schemas/openapi/procurement.yaml). 422 with one entry per violation; on success the
 * request carries the frozen, typed order.
 */
export async function contract(req: FastifyRequest, reply: FastifyReply) {
  const r = validatePurchaseOrderRequest(req.body);
  if (r.ok) {
    req.agent.order = r.value;
    return;
  }
  req.agent.contractError = true;
  req.agent.reason = `contract: ${r.errors.map((e) => `${e.pointer || '/'} ${e.message}`).join('; ')}`;
  return sendProblem(reply, contractViolation(r.errors), req.url);
}

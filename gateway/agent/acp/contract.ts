import type { FastifyReply, FastifyRequest } from 'fastify';
import { acpError, sendAcpError } from './errors.ts';
import { type AcpDef, type AcpValidate, acpRequestValidator } from './schema/index.ts';

/**
 * Step 6 for ACP (preValidation): the body against its definition in the vendored 2026-04-17
 * bundle (or a cart schema's validator, ./cart.ts) (with this merchant's tolerated `Item.quantity`, schema/quirks.ts). A violation is 400
 * `invalid_request` with the first violation's JSONPath as `param` (`missing` for a required
 * field, else `invalid`); it counts towards the agent's block as an order body's would. A valid
 * body resets the count.
 */
export function acpContract(def: AcpDef | AcpValidate) {
  const validate = typeof def === 'function' ? def : acpRequestValidator(def);
  return async function contract(req: FastifyRequest, reply: FastifyReply) {
    const violations = validate(req.body);
    const first = violations[0];
    if (!first) {
      req.agent.validBody = true;
      return;
    }
    req.agent.contractError = true;
    req.agent.reason = `contract: ${violations
      .slice(0, 5)
      .map((v) => `${v.param} ${v.message}`)
      .join('; ')}`;
    return sendAcpError(
      reply,
      acpError(
        400,
        first.keyword === 'required' ? 'missing' : 'invalid',
        `${first.param} ${first.message}`,
        first.param,
      ),
    );
  };
}

import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { CHECKED_SCHEMAS } from '../../../lib/json/checked-schemas.ts';
import { sendProblem } from '../../../lib/problem.ts';
import { OPENAPI_FILE } from '../../../subgraphs/procurement/contract/openapi.ts';
import { violations } from '../../edge/quote/contract.ts';
import { toolOperation } from '../contract/operations.ts';
import { invalidQuery, quoteUnavailable } from '../problems.ts';
import { ORDER_CREATE_SCOPE } from '../scope/policy.ts';

/** The agent quote: the edge cart quote narrowed for agents, behind the agent chain. */
export const AGENT_QUOTE_PATH = '/v2/quote';
/** The edge route it runs once the chain has let the call through. */
const EDGE_QUOTE_PATH = '/cart/quote';
/**
 * A quote is the first half of an order (price the cart, then order within the budget), and
 * an agent that may not order has no use for a signed quote token: the order scope covers it
 * (docs/mcp.md, "Scopes"), so no policy needs a new entry.
 */
export const QUOTE_SCOPE = ORDER_CREATE_SCOPE;

let compiled: ValidateFunction | undefined;

/**
 * Its query contract: GET /v2/quote's parameters in procurement.yaml (which name the edge's
 * line, currency and region parameters), as one closed object. Query strings are text: a lone
 * `line` becomes an array, digits are not numbers here. Anything else (coupon, customerId,
 * customerSegment, an unknown parameter) is a violation.
 */
function quoteQuery(): ValidateFunction {
  if (compiled) return compiled;
  const op = toolOperation(OPENAPI_FILE, AGENT_QUOTE_PATH, 'GET');
  if (!op) throw new Error(`procurement.yaml has no GET ${AGENT_QUOTE_PATH}`);
  compiled = new Ajv2020({
    ...CHECKED_SCHEMAS,
    allErrors: true,
    strict: false,
    coerceTypes: 'array',
  }).compile(op.inputSchema);
  return compiled;
}

/** Step 6 for the quote (preValidation): 422 with one entry per violation; counts towards the block. */
export async function quoteContract(req: FastifyRequest, reply: FastifyReply) {
  const query = { ...(req.query as Record<string, unknown>) };
  const check = quoteQuery();
  if (check(query)) {
    (req as { query: unknown }).query = query;
    return;
  }
  const errors = violations(check.errors);
  req.agent.contractError = true;
  req.agent.reason = `contract: ${errors.map((e) => `${e.pointer} ${e.message}`).join('; ')}`;
  return sendProblem(reply, invalidQuery(errors), req.url);
}

/**
 * Step 8 for the quote: the edge's own quote route, in process, with the validated query; its
 * reply is the agent's. A 422 there (a SKU given twice) is a contract error like ours; a 5xx
 * becomes 503 (the quote is degraded, not failed, whenever it can answer at all).
 */
export function agentQuoteHandler(app: FastifyInstance) {
  return async function agentQuote(req: FastifyRequest, reply: FastifyReply) {
    const query = req.query as { line: string[]; currency: string; region: string };
    const qs = new URLSearchParams();
    for (const line of query.line) qs.append('line', line);
    qs.set('currency', query.currency);
    qs.set('region', query.region);
    const res = await app.inject({
      method: 'GET',
      url: `${EDGE_QUOTE_PATH}?${qs}`,
      headers: { 'x-trace-id': req.traceId },
    });
    if (res.statusCode >= 500) {
      req.agent.reason = `quote: edge quote answered ${res.statusCode}`;
      return sendProblem(reply, quoteUnavailable(), req.url);
    }
    if (res.statusCode >= 400) {
      req.agent.contractError = true;
      req.agent.reason = `contract: edge quote answered ${res.statusCode}`;
      // The problem is about the agent's request: name it, not the internal one.
      return reply
        .code(res.statusCode)
        .type('application/problem+json')
        .send({ ...(res.json() as Record<string, unknown>), instance: req.url });
    }
    const type = res.headers['content-type'];
    return reply
      .code(res.statusCode)
      .header('cache-control', 'no-store')
      .type(typeof type === 'string' ? type : 'application/json')
      .send(res.body);
  };
}

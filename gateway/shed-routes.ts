import type { FastifyReply, FastifyRequest } from 'fastify';
import type { ShedRoute } from '../lib/http/shed.ts';
import { PROBLEM_BASE } from '../lib/problem.ts';
import { CANONICAL_PATH, EDGE_PATH } from './agent/chain.ts';
import { MCP_PATH } from './agent/mcp/routes.ts';
import { CONSOLE_PREFIX } from './console/index.ts';

/**
 * Which class each edge route's queue-time budget is, and the 503 in its protocol's own error
 * body (issue 48, lib/http/shed.ts). Orders and checkout completions are `order` (held longer:
 * a sale); quotes, prices, checkout sessions, reads and GraphQL are `quote`. Never shed: health,
 * readiness and metrics (the platform must see the process), the operator API and console (an
 * operator acts on an overload), and paths no route serves (their 404 costs nothing).
 */

const MESSAGE =
  'The service is at capacity and did not start this request; nothing was done. Retry after Retry-After seconds.';

/** RFC 9457, the type the agent contract defines for an unavailable domain (gateway/agent/problems.ts). */
const problem = (reply: FastifyReply, instance: string) => {
  reply.type('application/problem+json');
  return {
    type: `${PROBLEM_BASE}service-unavailable`,
    title: 'Service unavailable',
    status: 503,
    detail: MESSAGE,
    instance,
  };
};

const answers = {
  problem: (req: FastifyRequest) => (reply: FastifyReply) => problem(reply, req.url),
  /** ACP's flat error (gateway/agent/acp/errors.ts). */
  acp: () => (reply: FastifyReply) => {
    reply.type('application/json');
    return { type: 'service_unavailable', code: 'service_unavailable', message: MESSAGE };
  },
  /** UCP's `{code, content}` (gateway/agent/ucp/errors.ts). */
  ucp: () => (reply: FastifyReply) => {
    reply.type('application/json');
    return { code: 'service_unavailable', content: MESSAGE };
  },
  /** The pricing service's spec body. */
  pricing: () => (reply: FastifyReply) => {
    reply.type('application/json');
    return { error: MESSAGE };
  },
  /** GraphQL over HTTP: an errors array, the code as Apollo names it. */
  graphql: () => (reply: FastifyReply) => {
    reply.type('application/json');
    return { errors: [{ message: MESSAGE, extensions: { code: 'SERVICE_UNAVAILABLE' } }] };
  },
  /** JSON-RPC 2.0's server error, as the MCP endpoint answers a failure. */
  mcp: () => (reply: FastifyReply) => {
    reply.type('application/json');
    return { jsonrpc: '2.0', error: { code: -32000, message: MESSAGE }, id: null };
  },
};

const NEVER = ['/healthz', '/readyz', '/metrics', '/api/v2/operator', CONSOLE_PREFIX, '/internal/'];

/** The class and answer of an edge request, or undefined when it is never shed. */
export function edgeShedRoute(req: FastifyRequest): ShedRoute | undefined {
  const url = req.routeOptions.url;
  if (url === undefined || NEVER.some((p) => url.startsWith(p))) return undefined;
  const post = req.method === 'POST';
  if (url.includes('/checkout_sessions'))
    return { class: post && url.endsWith('/complete') ? 'order' : 'quote', answer: answers.acp() };
  if (url.includes('/checkout-sessions'))
    return { class: post && url.endsWith('/complete') ? 'order' : 'quote', answer: answers.ucp() };
  // UCP's catalog (under its REST endpoint's path): a read, in UCP's error body.
  if (post && /\/catalog\/(?:search|lookup|product)$/.test(url))
    return { class: 'quote', answer: answers.ucp() };
  if (post && (url === EDGE_PATH || url === CANONICAL_PATH))
    return { class: 'order', answer: answers.problem(req) };
  // An MCP call may place an order: held as one.
  if (url === MCP_PATH) return { class: 'order', answer: answers.mcp() };
  if (url === '/graphql') return { class: 'quote', answer: answers.graphql() };
  if (url === '/v1/prices/calculate') return { class: 'quote', answer: answers.pricing() };
  return { class: 'quote', answer: answers.problem(req) };
}

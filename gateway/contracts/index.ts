/**
 * Served contracts (docs/contracts.md):
 *   GET /openapi/agent.yaml|json   the bounded agent contract: to anyone, agents included
 *   GET /openapi                   index of the full documents: operators only
 *   GET /openapi/{name}.yaml|json  a full document: operators only
 * Operators present a bearer token with the `contracts:read` role. Agent identities (a request
 * carrying X-Spiffe-Id, or a client certificate naming a SPIFFE ID: agent-identity.ts) are
 * refused the full documents even with such a token, and are refused GraphQL altogether
 * (introspection included) before Apollo sees the request.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { hasAnyRole } from '../../lib/auth/caller.ts';
import { type CallerVerifier, callerVerifierFor } from '../../lib/auth/jwt.ts';
import type { Platform } from '../../lib/platform.ts';
import { Problem, sendProblem } from '../../lib/problem.ts';
import { contractAudience } from './agent-identity.ts';
import { type ContractDocuments, loadContractDocuments, type ServedDocument } from './documents.ts';

export const CONTRACTS_ROLE = 'contracts:read';
export const AGENT_CONTRACT_PATH = '/openapi/agent.yaml';

export interface ContractRoutesOptions {
  readonly verifier: CallerVerifier;
  readonly trustDomains: readonly string[];
  /** Tests serve fixture documents; default schemas/openapi/. */
  readonly documents?: ContractDocuments;
}

const agentRefused = (what: string) =>
  new Problem(
    403,
    'agent-contract-only',
    'Agents receive the bounded contract only',
    `${what} is not served to agent identities; the operations an agent may call are in ${AGENT_CONTRACT_PATH}`,
  );

const BEARER = /^Bearer ([A-Za-z0-9\-_.~+/]+=*)$/;

/** The operator check: not an agent, a valid bearer token, the contracts:read role. */
async function operatorProblem(
  req: FastifyRequest,
  opts: ContractRoutesOptions,
  what: string,
): Promise<Problem | undefined> {
  const audience = contractAudience(req, opts.trustDomains);
  if (audience.kind === 'agent') {
    req.log.warn(
      { traceId: req.traceId, reason: audience.reason, path: req.url },
      'full contract refused to agent',
    );
    return agentRefused(what);
  }
  const token = BEARER.exec(req.headers.authorization ?? '')?.[1];
  const unauthorised = (detail: string) =>
    new Problem(
      401,
      'operator-token-required',
      'Operator token required',
      detail,
      {},
      {
        'www-authenticate': `Bearer realm="contracts", scope="${CONTRACTS_ROLE}"`,
      },
    );
  if (!token) return unauthorised(`the full contracts need a bearer token with the ${CONTRACTS_ROLE} role`);
  try {
    const caller = await opts.verifier.verify(token);
    if (hasAnyRole(caller, [CONTRACTS_ROLE])) return undefined;
  } catch {
    return unauthorised('the bearer token does not verify');
  }
  return new Problem(
    403,
    'insufficient-role',
    'Insufficient role',
    `the full contracts need the ${CONTRACTS_ROLE} role`,
  );
}

function sendDocument(reply: FastifyReply, doc: ServedDocument, format: string, cache: string) {
  return reply
    .header('cache-control', cache)
    .header('vary', 'authorization, x-spiffe-id')
    .type(format === 'json' ? 'application/json' : 'application/yaml')
    .send(format === 'json' ? doc.json : doc.yaml);
}

export async function registerContractRoutes(
  app: FastifyInstance,
  opts: ContractRoutesOptions,
): Promise<void> {
  const docs = opts.documents ?? loadContractDocuments();

  // Agents do not use GraphQL (docs/contracts.md): refused here, before parsing or validation,
  // so not even a validation message ("did you mean …") tells an agent about the schema.
  // Decided on the matched route, never the raw URL: Fastify routes `/%67raphql` to /graphql.
  app.addHook('onRequest', async (req, reply) => {
    if (req.routeOptions.url !== '/graphql') return;
    const audience = contractAudience(req, opts.trustDomains);
    if (audience.kind !== 'agent') return;
    req.log.warn({ traceId: req.traceId, reason: audience.reason }, 'GraphQL refused to agent');
    return sendProblem(
      reply,
      new Problem(
        403,
        'agent-graphql-refused',
        'GraphQL is not available to agents',
        `agent identities do not use GraphQL or its introspection; the operations an agent may call are in ${AGENT_CONTRACT_PATH}`,
      ),
      req.url.split('?')[0],
    );
  });

  app.get<{ Params: { format: string } }>('/openapi/agent.:format', async (req, reply) => {
    const { format } = req.params;
    if (format !== 'yaml' && format !== 'json') return reply.callNotFound();
    return sendDocument(reply, docs.agent, format, 'no-cache');
  });

  app.get('/openapi', async (req, reply) => {
    const problem = await operatorProblem(req, opts, 'The contract index');
    if (problem) return sendProblem(reply, problem, '/openapi');
    return reply.header('cache-control', 'private, no-store').send({
      agent: { yaml: '/openapi/agent.yaml', json: '/openapi/agent.json' },
      documents: [...docs.full.keys()].map((name) => ({
        name,
        yaml: `/openapi/${name}.yaml`,
        json: `/openapi/${name}.json`,
      })),
    });
  });

  app.get<{ Params: { name: string; format: string } }>('/openapi/:name.:format', async (req, reply) => {
    const { name, format } = req.params;
    const instance = req.url.split('?')[0];
    // Refuse agents before saying whether a document exists.
    const problem = await operatorProblem(req, opts, 'The full contract');
    if (problem) return sendProblem(reply, problem, instance);
    const doc = docs.full.get(name);
    if (!doc || (format !== 'yaml' && format !== 'json'))
      return sendProblem(
        reply,
        new Problem(404, 'not-found', 'Not found', `no contract ${name}.${format}`),
        instance,
      );
    return sendDocument(reply, doc, format, 'private, no-store');
  });
}

/** What gateway/edge/index.ts calls: the routes with the configured verifier and trust domains. */
export async function registerContracts(app: FastifyInstance, platform: Platform): Promise<void> {
  await registerContractRoutes(app, {
    verifier: await callerVerifierFor(platform.config),
    trustDomains: platform.config.SPIFFE_TRUST_DOMAINS,
  });
}

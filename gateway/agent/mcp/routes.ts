import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { Problem, sendProblem } from '../../../lib/problem.ts';
import { auditStep } from '../audit/audit.ts';
import type { AuditLog } from '../audit/log.ts';
import { SPEC_BLOCK_POLICY } from '../block/policy.ts';
import type { AgentGatewayDeps } from '../chain.ts';
import { identityStep } from '../identity/identity.ts';
import { injectAgentCall } from '../identity/in-process.ts';
import { mediaTypeStep, parseErrorProblem, registerStrictJsonParser, requireJson } from '../parse/parse.ts';
import { stateUnavailable } from '../problems.ts';
import { rateLimitStep } from '../rate-limit/rate-limit.ts';
import { ORDER_CREATE_SCOPE } from '../scope/policy.ts';
import { callerScopes } from '../scope/scope.ts';
import { isAcpCredential } from './acp/binding.ts';
import { type AcpCaller, acpKeyStep, runAcpCall } from './acp/caller.ts';
import { acpToolbox } from './acp/toolbox.ts';
import { toolDescriptions } from './descriptions.ts';
import { agentToolbox, type McpRuntime, type McpToolbox, serveMcp } from './server.ts';
import { agentTools } from './tools.ts';
import { checkoutToolsFor, ucpBindingOf } from './ucp/binding.ts';
import { runUcpCall } from './ucp/caller.ts';
import { ucpToolbox } from './ucp/toolbox.ts';
import { UCP_TOOLS } from './ucp/tools.ts';

export const MCP_PATH = '/mcp';
/** JSON-RPC messages are small: one tool call with its arguments. */
const MCP_BODY_LIMIT = 64 * 1024;
const SERVER_VERSION = '1.0.0';

export type McpDeps = Pick<
  AgentGatewayDeps,
  'clock' | 'log' | 'identity' | 'policy' | 'tokens' | 'buckets' | 'bucketPolicy'
> & {
  readonly audit: AuditLog;
};

/** Who a /mcp request is: a workload with its /v2 scopes, or an ACP platform with a checkout API key. */
type McpCallerKind =
  | { readonly kind: 'agent'; readonly scopes: ReadonlySet<string> }
  | ({ readonly kind: 'acp' } & AcpCaller);

/** A lone tools/call: its route takes the rate-limit token, so /mcp must not take a second. */
const isToolCall = (body: unknown) =>
  typeof body === 'object' &&
  body !== null &&
  !Array.isArray(body) &&
  (body as { method?: unknown }).method === 'tools/call';

/** The request headers the MCP transport reads (content negotiation, protocol version). */
function webRequest(req: FastifyRequest): Request {
  const headers = new Headers();
  for (const name of ['accept', 'content-type', 'mcp-protocol-version', 'mcp-session-id']) {
    const v = req.headers[name];
    if (typeof v === 'string') headers.set(name, v);
  }
  return new Request(`http://localhost${MCP_PATH}`, { method: 'POST', headers });
}

/**
 * POST /mcp: the MCP server (Streamable HTTP, stateless, JSON replies). Its own checks are
 * only those that must come before any MCP exchange: who calls (401), the agent routes' body
 * steps (415, 413, 400, all as problem+json), and the identity's rate limit (429) for every
 * message but a tool call (whose route takes the token). Who calls decides which tools:
 *
 *   Authorization: Bearer acp_…   a platform's checkout API key (acp/caller.ts): the five
 *                                 ACP checkout tools, each run through its ACP route; the
 *                                 UCP ones instead with a UCP-Agent header, or besides them
 *                                 for a key bound to a UCP profile (ucp/binding.ts)
 *   anything else                 a workload proven as for REST (the identity step, and a
 *                                 bearer JWT narrowing its scopes): the /v2 tools
 *
 * Every tool call runs through its REST route in process, so scope, block, rate limit,
 * contract, idempotency and audit are the REST chain's own, in its order. GET and DELETE answer
 * 405: a stateless server has no stream to resume and no session to end.
 */
export async function registerMcpRoutes(app: FastifyInstance, d: McpDeps): Promise<void> {
  const identity = identityStep({ ...d.identity, log: d.log });
  const audit = auditStep(d.audit, d.clock);
  // Every other message (initialize, tools/list, notifications) costs one token of the same
  // bucket, so /mcp is bounded per identity like every agent path.
  const rateLimit = rateLimitStep({ store: d.buckets, policy: d.bucketPolicy, clock: d.clock });
  const callers = new WeakMap<FastifyRequest, McpCallerKind>();

  async function scopes(req: FastifyRequest, reply: FastifyReply) {
    const id = req.agent.identity;
    if (!id) return;
    const v = await callerScopes(id, req.headers.authorization, d);
    if (v.ok) {
      callers.set(req, { kind: 'agent', scopes: v.scopes });
      return;
    }
    req.agent.reason = v.reason;
    return sendProblem(reply, v.problem, req.url);
  }

  const acpKey = acpKeyStep(app, d.log, (req, found) => callers.set(req, { kind: 'acp', ...found }));

  /** Step 1 and 2 of /mcp: the credential's shape says which door, then that door's identity and scopes. */
  async function caller(req: FastifyRequest, reply: FastifyReply) {
    if (isAcpCredential(req.headers.authorization)) return acpKey(req, reply);
    await identity(req, reply);
    if (reply.sent) return reply;
    return scopes(req, reply);
  }

  // Refusals of /mcp itself are audited like any refused agent call; an answered MCP message
  // is not (its tool calls are, once each, by the route they run).
  async function auditRefusal(req: FastifyRequest, reply: FastifyReply) {
    if (req.agent && req.agent.reason !== 'ok') await audit(req, reply);
  }

  const tools = agentTools();
  const runtime: McpRuntime = {
    tools,
    // The block store runs with SPEC_BLOCK_POLICY (agent/index.ts), the buckets with d.bucketPolicy.
    descriptions: toolDescriptions(tools, { bucket: d.bucketPolicy, block: SPEC_BLOCK_POLICY }),
    async inject(caller, call) {
      try {
        const res = await injectAgentCall(
          app,
          caller.identity.id,
          {
            method: call.method as 'GET' | 'POST',
            url: call.url,
            headers: call.headers,
            ...(call.payload !== undefined ? { payload: call.payload } : {}),
          },
          caller.req.agent?.identitySource,
        );
        return { status: res.statusCode, headers: res.headers, body: res.body };
      } catch (err) {
        // The route answers every refusal itself; a throw here is the server closing or a
        // fault: a 503 the agent may retry, as the route's own error handler would give.
        d.log.error({ err, traceId: caller.req.traceId }, 'mcp tool call could not run');
        const p = stateUnavailable();
        return {
          status: p.status,
          headers: p.headers,
          body: JSON.stringify({ ...p.body, instance: call.url }),
        };
      }
    },
    refused(caller, problem, reason) {
      auditRefusedCall(caller.req, problem.status, reason);
    },
  };

  /** A tool call refused before it reached a route: one entry, as a refusal of /mcp. */
  function auditRefusedCall(req: FastifyRequest, status: number, reason: string) {
    const id = req.agent.identity;
    if (!id) return;
    d.audit.append({
      at: d.clock.now(),
      traceId: req.traceId,
      method: 'POST',
      path: MCP_PATH,
      status,
      durationMs: 0,
      identity: id.id,
      reason: reason.slice(0, 1024),
      identitySource: req.agent.identitySource ?? null,
    });
  }

  /** The ACP tools run the ACP routes in process with the caller's own key, which the route verifies again. */
  function acpTools(req: FastifyRequest, who: Extract<McpCallerKind, { kind: 'acp' }>): McpToolbox {
    return acpToolbox({
      scopes: who.scopes,
      requiredScope: ORDER_CREATE_SCOPE,
      refused: (status, reason) => auditRefusedCall(req, status, reason),
      run: (call) => runAcpCall(app, d.log, req, who.basePath, call),
    });
  }

  /**
   * The UCP tools (checkout-mcp.md) for a checkout API key whose request names a UCP-Agent or
   * whose key is bound to a UCP profile: each runs its UCP REST route in process, with the
   * caller's own key.
   */
  function ucpTools(req: FastifyRequest, who: Extract<McpCallerKind, { kind: 'acp' }>, basePath: string) {
    return ucpToolbox({
      scopes: who.scopes,
      requiredScope: ORDER_CREATE_SCOPE,
      refused: (status, reason) => auditRefusedCall(req, status, reason),
      run: (call) => runUcpCall(app, d.log, req, basePath, call),
    });
  }

  /** A key's checkout tools (ucp/binding.ts): ACP, UCP, or both for a key bound to a UCP profile. */
  function checkoutTools(req: FastifyRequest, who: Extract<McpCallerKind, { kind: 'acp' }>): McpToolbox {
    const which = checkoutToolsFor(req.headers, who.ucpProfile);
    const ucp = which === 'acp' ? undefined : ucpBindingOf(app);
    if (!ucp) return acpTools(req, who);
    const ucpBox = ucpTools(req, who, ucp.basePath);
    if (which === 'ucp') return ucpBox;
    const acpBox = acpTools(req, who);
    return {
      list: () => [...ucpBox.list(), ...acpBox.list()],
      call: (name, args) => (UCP_TOOLS.some((t) => t.name === name) ? ucpBox : acpBox).call(name, args),
    };
  }

  async function handle(req: FastifyRequest, reply: FastifyReply) {
    const id = req.agent.identity;
    const who = callers.get(req);
    if (!id || !who) throw new Error('/mcp reached its handler without identity');
    if (!isToolCall(req.body)) {
      await rateLimit(req, reply);
      if (reply.sent) return reply;
    }
    const toolbox =
      who.kind === 'acp'
        ? checkoutTools(req, who)
        : agentToolbox(runtime, { identity: id, scopes: who.scopes, req });
    const res = await serveMcp(SERVER_VERSION, toolbox, req.body, webRequest(req));
    reply.code(res.status);
    res.headers.forEach((value, name) => {
      if (name !== 'content-length') reply.header(name, value);
    });
    return reply.send(res.status === 406 ? notAcceptable(await res.text()) : await res.text());
  }

  const notAllowed = async (_req: FastifyRequest, reply: FastifyReply) =>
    sendProblem(
      reply.header('allow', 'POST'),
      new Problem(
        405,
        'method-not-allowed',
        'Method not allowed',
        'This MCP server is stateless: POST only.',
      ),
    );

  await app.register(async (scope) => {
    // The agent routes' own body steps: media type (415), size (413), UTF-8 and strict JSON
    // (400: duplicate keys and __proto__ refused, numbers keep their text so a budget is
    // forwarded exactly as the agent wrote it), and whatever else step 5 checks of a body.
    registerStrictJsonParser(scope);
    scope.setErrorHandler((err, req, reply) => {
      const parsed = parseErrorProblem(req, err as { code?: string; statusCode?: number }, MCP_BODY_LIMIT);
      if (parsed) {
        if (req.agent) req.agent.reason = `mcp: ${parsed.body.detail}`;
        return sendProblem(reply, parsed, req.url);
      }
      d.log.error({ err, traceId: req.traceId }, 'mcp request failed');
      if (req.agent) req.agent.reason = 'mcp: server failure';
      return sendProblem(reply, stateUnavailable(), req.url);
    });
    const hooks = { onRequest: [caller], onResponse: [auditRefusal] };
    scope.post(
      MCP_PATH,
      {
        ...hooks,
        bodyLimit: MCP_BODY_LIMIT,
        preParsing: [mediaTypeStep(MCP_BODY_LIMIT)],
        preValidation: [requireJson],
      },
      handle,
    );
    scope.get(MCP_PATH, hooks, notAllowed);
    scope.delete(MCP_PATH, hooks, notAllowed);
  });
}

/**
 * The transport's 406 (Streamable HTTP lets a server insist that a client accepts both JSON and
 * an event stream; this one answers JSON only, but the SDK insists): the JSON-RPC error keeps its
 * code and id, and its message names the header to send (issue 50, docs/mcp.md).
 */
export function notAcceptable(body: string): string {
  let id: unknown = null;
  let code = -32000;
  try {
    const parsed = JSON.parse(body) as { id?: unknown; error?: { code?: unknown } };
    id = parsed.id ?? null;
    if (typeof parsed.error?.code === 'number') code = parsed.error.code;
  } catch {
    // The SDK's body is JSON-RPC; whatever it was, the answer below stands.
  }
  return JSON.stringify({
    jsonrpc: '2.0',
    error: {
      code,
      message: `Not Acceptable: send the header ${MCP_ACCEPT} (the Streamable HTTP transport requires a client to accept both; this server answers with JSON).`,
    },
    id,
  });
}

/** The Accept header an MCP client must send to this server. */
export const MCP_ACCEPT = 'Accept: application/json, text/event-stream';

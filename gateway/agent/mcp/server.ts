import type { CallToolResult, ToolAnnotations } from '@modelcontextprotocol/sdk/types.js';
import type { FastifyRequest } from 'fastify';
import type { SpiffeId } from '../../../lib/auth/spiffe.ts';
import { UNKNOWN_TRACE } from '../../../lib/http/trace.ts';
import { stringifyExact } from '../../../lib/json/exact-stringify.ts';
import { Problem, type ProblemDetails } from '../../../lib/problem.ts';
import { httpCallOf } from '../contract/operations.ts';
import { insufficientScope } from '../problems.ts';
import { pendingApprovalText, TOOL_TITLES } from './descriptions.ts';
import type { AgentTool } from './tools.ts';

/**
 * The SDK is imported on the first /mcp request that passed identity, never at start-up: a
 * process nobody calls over MCP does not load it (docs/mcp.md has the measured difference).
 */
async function importSdk() {
  const [server, transport, types] = await Promise.all([
    import('@modelcontextprotocol/sdk/server/index.js'),
    import('@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js'),
    import('@modelcontextprotocol/sdk/types.js'),
  ]);
  return {
    Server: server.Server,
    Transport: transport.WebStandardStreamableHTTPServerTransport,
    ListTools: types.ListToolsRequestSchema,
    CallTool: types.CallToolRequestSchema,
  };
}
let sdk: ReturnType<typeof importSdk> | undefined;
export const loadSdk = () => {
  sdk ??= importSdk();
  return sdk;
};

/** What one /mcp request proved, and how its tool calls reach the REST routes. */
export interface McpCaller {
  readonly identity: SpiffeId;
  /** The scopes the identity holds (policy grant, narrowed by a bearer token). */
  readonly scopes: ReadonlySet<string>;
  readonly req: FastifyRequest;
}

export interface HttpReply {
  readonly status: number;
  readonly headers: Record<string, string | string[] | number | undefined>;
  readonly body: string;
}

export interface McpRuntime {
  readonly tools: readonly AgentTool[];
  /** Each tool's description for tools/list (descriptions.ts), built once. */
  readonly descriptions: ReadonlyMap<string, string>;
  /** Runs one HTTP call through the agent routes, in process, as the caller's identity. */
  inject(
    caller: McpCaller,
    call: { method: string; url: string; headers: Record<string, string>; payload?: string },
  ): Promise<HttpReply>;
  /** A tool call refused before it reached a route (unknown or hidden tool): audited here. */
  refused(caller: McpCaller, problem: ProblemDetails, reason: string): void;
}

const META = 'agent-commerce.example/http';
const FORWARDED = ['authorization', 'traceparent', 'tracestate'] as const;

const isRecord = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

const parseJson = (text: string): unknown => {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
};

/**
 * A route's reply as a tool result. Success: the body as text and the same JSON as
 * structuredContent, which the tool's outputSchema (its 2xx replies) describes and the client
 * checks. Refusal: isError, and the problem+json only as text: a problem is no instance of the
 * outputSchema, and a client that validates (the SDK's does, even on isError) would throw.
 */
export function toolResult(reply: HttpReply): CallToolResult {
  const header = (name: string) => {
    const v = reply.headers[name];
    return typeof v === 'string' ? v : undefined;
  };
  const json = parseJson(reply.body);
  const refused = reply.status >= 400;
  // An order that waits for a human (issue 22): said in words too, so an agent does not take a
  // stored order for a placed one (the 202, and the same order read back).
  const pending = !refused && isRecord(json) && json.status === 'PENDING_APPROVAL' && 'order_id' in json;
  const meta = {
    status: reply.status,
    ...(header('location') ? { location: header('location') } : {}),
    ...(header('retry-after') ? { retry_after: Number(header('retry-after')) } : {}),
    ...(header('idempotent-replayed') ? { idempotent_replayed: true } : {}),
    ...(pending ? { pending_approval: true } : {}),
  };
  return {
    content: [
      { type: 'text', text: reply.body },
      ...(pending ? [{ type: 'text' as const, text: pendingApprovalText(json) }] : []),
    ],
    ...(!refused && isRecord(json) ? { structuredContent: json } : {}),
    ...(refused ? { isError: true } : {}),
    _meta: { [META]: meta },
  };
}

/** A refusal made here (unknown or hidden tool): a problem as text, like a route's. */
export const problemResult = (problem: ProblemDetails): CallToolResult => ({
  content: [{ type: 'text', text: JSON.stringify(problem) }],
  isError: true,
  _meta: { [META]: { status: problem.status } },
});

/** The arguments exactly as the strict parse read them (the SDK's copy has lost number text). */
function parsedArguments(body: unknown, id: string | number): unknown {
  for (const m of Array.isArray(body) ? body : [body]) {
    const msg = m as { method?: unknown; id?: unknown; params?: { arguments?: unknown } } | null;
    if (msg?.method === 'tools/call' && msg.id === id) return msg.params?.arguments;
  }
  return undefined;
}

/** A tool as tools/list shows it. */
export interface ListedTool {
  readonly name: string;
  readonly title?: string;
  readonly description: string;
  readonly inputSchema: { type: 'object'; [keyword: string]: unknown };
  readonly outputSchema?: { type: 'object'; [keyword: string]: unknown };
  readonly annotations: ToolAnnotations;
}

/**
 * The tools one caller may see and call. `call` gets the arguments as the strict parse read
 * them; it answers a tool result, or throws an error the SDK sends as the JSON-RPC error
 * (its `code`, `message` and `data`).
 */
export interface McpToolbox {
  list(): readonly ListedTool[];
  call(name: string, args: Record<string, unknown>): Promise<CallToolResult>;
}

/**
 * The /v2 tools for a workload the mesh or a signature proved: tools/list shows the tools the
 * caller's scopes allow; tools/call runs the tool's REST operation through the agent chain.
 */
export function agentToolbox(rt: McpRuntime, caller: McpCaller): McpToolbox {
  const visible = rt.tools.filter((t) => caller.scopes.has(t.scope));
  return {
    list: () =>
      visible.map((t) => {
        const title = TOOL_TITLES[t.name];
        return {
          name: t.name,
          ...(title ? { title } : {}),
          description: rt.descriptions.get(t.name) ?? t.operation.summary,
          inputSchema: t.operation.inputSchema,
          ...(t.operation.outputSchema ? { outputSchema: t.operation.outputSchema } : {}),
          // annotations.title too: clients of the 2025-03-26 revision read the title only there.
          annotations: { ...(title ? { title } : {}), ...t.annotations },
        };
      }),
    async call(name, args) {
      const tool = rt.tools.find((t) => t.name === name);
      if (!tool) {
        const problem = unknownTool(name);
        rt.refused(caller, problem, `mcp: unknown tool ${name.slice(0, 64)}`);
        return problemResult(problem);
      }
      if (!caller.scopes.has(tool.scope)) {
        // A hidden tool answers as its route would: 403 insufficient_scope (identity, then scope).
        const problem = insufficientScopeBody(tool.scope);
        rt.refused(caller, problem, `scope: ${tool.scope} not granted (tool ${name})`);
        return problemResult(problem);
      }
      const call = httpCallOf(tool.operation, args);
      const headers: Record<string, string> = { 'user-agent': 'agent-commerce-mcp' };
      for (const h of FORWARDED) {
        const v = caller.req.headers[h];
        if (typeof v === 'string') headers[h] = v;
      }
      if (caller.req.traceId !== UNKNOWN_TRACE) headers['x-trace-id'] = caller.req.traceId;
      if (call.idempotencyKey !== undefined) headers['idempotency-key'] = call.idempotencyKey;
      let payload: string | undefined;
      if (call.body) {
        headers['content-type'] = 'application/json';
        payload = stringifyExact(call.body, args);
      }
      return toolResult(await rt.inject(caller, { method: call.method, url: call.url, headers, payload }));
    },
  };
}

/**
 * Serves one POST /mcp: a stateless server and transport made for this request and dropped
 * after it (see docs/mcp.md, "Why stateless"), over the caller's toolbox.
 */
export async function serveMcp(
  version: string,
  toolbox: McpToolbox,
  body: unknown,
  request: Request,
): Promise<Response> {
  const { Server, Transport, ListTools, CallTool } = await loadSdk();
  const server = new Server(
    { name: 'agent-commerce', version },
    { capabilities: { tools: { listChanged: false } } },
  );
  server.setRequestHandler(ListTools, async () => ({ tools: [...toolbox.list()] }));
  server.setRequestHandler(CallTool, async (request, extra) => {
    const exact = parsedArguments(body, extra.requestId);
    const args = isRecord(exact) ? exact : (request.params.arguments ?? {});
    return toolbox.call(request.params.name, args);
  });
  const transport = new Transport({ sessionIdGenerator: undefined, enableJsonResponse: true });
  try {
    await server.connect(transport);
    return await transport.handleRequest(request, { parsedBody: body });
  } finally {
    await transport.close().catch(() => {});
    await server.close().catch(() => {});
  }
}

// Problem bodies built the way the REST routes build theirs (gateway/agent/problems.ts).
const insufficientScopeBody = (scope: string): ProblemDetails => insufficientScope(scope).body;
const unknownTool = (name: string): ProblemDetails =>
  new Problem(
    404,
    'unknown-tool',
    'Unknown tool',
    `There is no tool named ${JSON.stringify(name.slice(0, 64))}.`,
  ).body;

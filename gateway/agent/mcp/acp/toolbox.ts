import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import type { AcpErrorBody } from '../../acp/errors.ts';
import type { McpToolbox } from '../server.ts';
import { type AcpHttpCall, acpHttpCall, acpOutcome, type RouteReply } from './call.ts';
import { ACP_TOOLS, listedAcpTools } from './tools.ts';

/** JSON-RPC error codes of the binding: every ACP error is -32000; -32602 before ACP is reached. */
export const ACP_ERROR = -32000;
export const INVALID_PARAMS = -32602;

/**
 * Thrown from the tools/call handler: the SDK's server answers it as the JSON-RPC error
 * `{code, message, data}` exactly as given (it reads those three properties of what is thrown;
 * the SDK's own McpError would prefix the message with "MCP error -32000: ").
 */
export class JsonRpcToolError extends Error {
  constructor(
    readonly code: number,
    message: string,
    readonly data?: AcpErrorBody,
  ) {
    super(message);
    this.name = 'JsonRpcToolError';
  }
}

export const HTTP_META = 'agent-commerce.example/http';

export interface AcpToolboxDeps {
  /** The scopes the key holds (its own, narrowed by the policy): orders:create shows the tools. */
  readonly scopes: ReadonlySet<string>;
  readonly requiredScope: string;
  /** Runs one ACP REST call in process, with the caller's Authorization (ACP routes: base path added). */
  run(call: AcpHttpCall): Promise<RouteReply>;
  /** A call refused here, before any route (audited as a refusal of /mcp). */
  refused(status: number, reason: string): void;
}

/**
 * The ACP tools for a caller with a checkout API key. A call runs its ACP route in process and
 * the route's answer becomes the binding's: the session as the tool result (structuredContent,
 * and the same JSON as text), or ACP's Error as the JSON-RPC error's data (-32000). A key
 * without orders:create sees no tool; a call still goes to the route, which refuses it (403),
 * so the refusal is the route's and audited there.
 */
export function acpToolbox(d: AcpToolboxDeps): McpToolbox {
  return {
    list: () => (d.scopes.has(d.requiredScope) ? listedAcpTools() : []),
    async call(name, args): Promise<CallToolResult> {
      const tool = ACP_TOOLS.find((t) => t.name === name);
      if (!tool) {
        d.refused(404, `mcp: unknown tool ${name.slice(0, 64)}`);
        throw new JsonRpcToolError(INVALID_PARAMS, `Unknown tool: ${name.slice(0, 64)}`);
      }
      const v = acpHttpCall(tool, args);
      if (!v.ok) {
        d.refused(400, `mcp: ${name}: ${v.message}`);
        throw new JsonRpcToolError(INVALID_PARAMS, v.message);
      }
      const o = acpOutcome(await d.run(v.call));
      if (!o.ok) throw new JsonRpcToolError(ACP_ERROR, o.error.message, o.error);
      return {
        content: [{ type: 'text', text: o.text }],
        structuredContent: o.session,
        _meta: { [HTTP_META]: o.http },
      };
    },
  };
}

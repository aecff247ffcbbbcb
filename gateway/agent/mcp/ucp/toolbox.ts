import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { INVALID_PARAMS, JsonRpcToolError } from '../acp/toolbox.ts';
import type { McpToolbox } from '../server.ts';
import { type RouteReply, type UcpHttpCall, ucpHttpCall, ucpOutcome } from './call.ts';
import { listedUcpTools, UCP_TOOLS } from './tools.ts';

export interface UcpToolboxDeps {
  /** The scopes the key holds (its own, narrowed by the policy): orders:create shows the tools. */
  readonly scopes: ReadonlySet<string>;
  readonly requiredScope: string;
  /** Runs one UCP REST call in process, with the caller's Authorization (UCP routes: base path added). */
  run(call: UcpHttpCall): Promise<RouteReply>;
  /** A call refused here, before any route (audited as a refusal of /mcp). */
  refused(status: number, reason: string): void;
}

/**
 * The UCP checkout tools for a caller with a checkout API key. A call runs its UCP route in
 * process and the route's answer becomes the binding's: the checkout (or error_response) as
 * `structuredContent` with the same JSON as text, or, for a protocol error, the JSON-RPC error
 * -32000 (-32001 for the platform profile's discovery errors) with UCP's `{code, content}` and
 * the HTTP status as data. Business outcomes are results, never errors (checkout-mcp.md).
 */
export function ucpToolbox(d: UcpToolboxDeps): McpToolbox {
  return {
    list: () => {
      const scoped = d.scopes.has(d.requiredScope);
      return listedUcpTools().filter((_, i) => scoped || !UCP_TOOLS[i]?.needsScope);
    },
    async call(name, args): Promise<CallToolResult> {
      const tool = UCP_TOOLS.find((t) => t.name === name);
      if (!tool) {
        d.refused(404, `mcp: unknown tool ${name.slice(0, 64)}`);
        throw new JsonRpcToolError(INVALID_PARAMS, `Unknown tool: ${name.slice(0, 64)}`);
      }
      const v = ucpHttpCall(tool, args);
      if (!v.ok) {
        d.refused(400, `mcp: ${name}: ${v.message}`);
        throw new JsonRpcToolError(INVALID_PARAMS, v.message);
      }
      const o = ucpOutcome(await d.run(v.call));
      if (!o.ok) throw new JsonRpcToolError(o.code, o.message, o.data as never);
      return { content: [{ type: 'text', text: o.text }], structuredContent: o.result };
    },
  };
}

import type { FastifyInstance } from 'fastify';

/**
 * What /mcp needs to serve the UCP checkout tools (checkout-mcp.md at v2026-04-08): where the
 * UCP REST routes are mounted. The UCP mount (gateway/agent/ucp/index.ts) hands it over; /mcp
 * looks it up per request. The caller's checkout API key is verified by the ACP binding's
 * verifier (one key store, one revocation bound for every door) and again by the route.
 */
export interface UcpMcpBinding {
  /** The path of the UCP REST endpoint (`/ucp`). */
  readonly basePath: string;
}

const bindings = new WeakMap<FastifyInstance, UcpMcpBinding>();

export function serveUcpToolsOnMcp(app: FastifyInstance, binding: UcpMcpBinding): void {
  bindings.set(app, binding);
}

export const ucpBindingOf = (app: FastifyInstance): UcpMcpBinding | undefined => bindings.get(app);

/** Which checkout tools a /mcp caller with a checkout API key sees (docs/mcp.md, "UCP tools"). */
export type CheckoutTools = 'acp' | 'ucp' | 'acp+ucp';

/**
 * Which protocol a /mcp caller with a checkout API key speaks. A `UCP-Agent` header on the MCP
 * HTTP request (signatures.md, "MCP Transport": "The UCP-Agent and Idempotency-Key headers work
 * identically to REST") selects the UCP tools alone. Without it, a key bound to a UCP platform
 * profile (acp-keys.md, "UCP profile") sees both sets: the binding itself asks only for
 * meta["ucp-agent"] in each tool call, so a platform that knows only the spec sends no header,
 * and the binding does not take ACP away from the key (the ACP routes ignore it). The tool names
 * do not overlap. An unbound key without the header sees the ACP tools, as before.
 */
export function checkoutToolsFor(
  headers: Record<string, string | string[] | undefined>,
  ucpProfile: string | null,
): CheckoutTools {
  const agent = headers['ucp-agent'];
  if (typeof agent === 'string' && agent.length > 0) return 'ucp';
  return ucpProfile !== null ? 'acp+ucp' : 'acp';
}

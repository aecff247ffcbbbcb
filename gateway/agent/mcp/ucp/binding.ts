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

/**
 * Which protocol a /mcp caller with a checkout API key speaks: a `UCP-Agent` header on the MCP
 * HTTP request (signatures.md, "MCP Transport": "The UCP-Agent and Idempotency-Key headers work
 * identically to REST") selects the UCP tools; without it the ACP tools stay (the ACP binding
 * has no such header). Decision: the tool names differ, but one credential type serves both
 * protocols, and tools/list must show a platform its own protocol's five tools.
 */
export const speaksUcp = (headers: Record<string, string | string[] | undefined>): boolean =>
  typeof headers['ucp-agent'] === 'string' && headers['ucp-agent'].length > 0;

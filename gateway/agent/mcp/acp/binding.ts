import type { FastifyInstance } from 'fastify';
import type { ApiKeyVerifier } from '../../identity/api-key.ts';
import type { ScopePolicy } from '../../scope/policy.ts';

/**
 * What /mcp needs to serve the ACP tools: the ACP routes' own key verifier (one cache, one
 * revocation bound for both doors), the scope policy that narrows a key, and where the five
 * operations are mounted. The ACP mount (gateway/agent/acp/index.ts) hands it over; /mcp is
 * registered earlier, with the /v2 routes, so it looks the binding up per request.
 */
export interface AcpMcpBinding {
  readonly keys: ApiKeyVerifier;
  readonly policy: ScopePolicy;
  /** The path of api_base_url (`/acp`). */
  readonly basePath: string;
}

const bindings = new WeakMap<FastifyInstance, AcpMcpBinding>();

/** Serve the ACP checkout tools on this app's /mcp, to callers with a checkout API key. */
export function serveAcpToolsOnMcp(app: FastifyInstance, binding: AcpMcpBinding): void {
  bindings.set(app, binding);
}

export const acpBindingOf = (app: FastifyInstance): AcpMcpBinding | undefined => bindings.get(app);

/**
 * Which door a /mcp request knocks on, from its credential's shape alone: `Authorization:
 * Bearer acp_…` is an ACP platform with a checkout API key (keys are `acp_ak_…`); anything else
 * (no Authorization, or an RFC 9068 JWT, which starts `eyJ`) is a workload proven by the mesh
 * or a signature. The prefix, not the full key shape, decides, so a mistyped key is refused as a
 * key (401) instead of being judged as a JWT.
 */
export function isAcpCredential(authorization: string | string[] | undefined): boolean {
  if (typeof authorization !== 'string') return false;
  const credential = /^bearer +(\S+)$/i.exec(authorization)?.[1];
  return credential?.startsWith('acp_') ?? false;
}

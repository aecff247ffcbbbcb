import type { IncomingHttpHeaders } from 'node:http';
import { isProcurementAgent, parseSpiffeId } from '../../lib/auth/spiffe.ts';

/**
 * Who is asking, for contract purposes. A request that carries `X-Spiffe-Id` comes from the
 * workload (AI) plane: the mTLS sidecar sets that header. It is treated as an agent whether or
 * not the ID verifies (fail closed): presenting an identity can only narrow what a caller sees.
 * `procurementAgent` says whether it is the procurement agent, for logs.
 */
export type ContractAudience =
  | { readonly kind: 'agent'; readonly procurementAgent: boolean; readonly reason: string }
  | { readonly kind: 'other' };

export function contractAudience(
  headers: IncomingHttpHeaders,
  trustDomains: readonly string[],
): ContractAudience {
  const raw = headers['x-spiffe-id'];
  if (raw === undefined) return { kind: 'other' };
  const parsed = parseSpiffeId(Array.isArray(raw) ? raw[0] : raw);
  if (!parsed.ok) return { kind: 'agent', procurementAgent: false, reason: parsed.reason };
  const procurementAgent = isProcurementAgent(parsed.value, trustDomains);
  return {
    kind: 'agent',
    procurementAgent,
    reason: procurementAgent ? 'procurement agent' : 'workload identity',
  };
}
